import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { z } from 'zod';
import type { Video } from '../db/schema.ts';
import type { VideoStatusEvent } from '../repositories/video.repository.ts';
import type { AppContext } from '../runtime/app-context.ts';
import { apiPresenter, type ApiPresenter } from '../presenters/api.presenter.ts';
import { parseClientJson } from './json-body.ts';

const WEBSOCKET_PATH = '/ws';
const AUTH_TIMEOUT_MS = 10_000;
const PING_INTERVAL_MS = 30_000;
const MAX_MESSAGE_BYTES = 16 * 1024;

/** Resolves a bearer credential (API key, OAuth token, ID token) to the user it belongs to. */
export type WebsocketAuthenticator = (token: string) => Promise<{ userId: string } | undefined>;

const clientMessage = z.discriminatedUnion('type', [
  z.object({ type: z.literal('auth'), token: z.string().min(1) }),
  z.object({ type: z.literal('subscribe'), video_ids: z.array(z.uuid()).max(100).optional() }),
  z.object({ type: z.literal('ping') }),
]);

type Connection = { socket: WebSocket; userId: string | undefined; videoIds: Set<string> | undefined; alive: boolean };

/**
 * Live video status over a websocket at /ws. A client authenticates (Authorization header on the
 * upgrade, or a first `auth` message), optionally narrows to some video ids, and receives a
 * `video.status` event on every status change of its own videos. Events come from Postgres
 * LISTEN/NOTIFY, so they reach clients whichever API replica they are connected to.
 */
export async function attachStatusWebsocket(
  server: Server,
  context: AppContext,
  authenticate: WebsocketAuthenticator,
): Promise<{ close(): Promise<void> }> {
  const logger = context.logger.child({ part: 'websocket' });
  const sockets = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });
  const connections = new Set<Connection>();

  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    if (path !== WEBSOCKET_PATH) {
      socket.end('HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n{"message":"No websocket at this path; use /ws."}');
      return;
    }
    sockets.handleUpgrade(request, socket, head, (ws) => void accept(ws, request));
  };
  server.on('upgrade', onUpgrade);

  const send = (connection: Connection, message: object) => {
    if (connection.socket.readyState === connection.socket.OPEN) connection.socket.send(JSON.stringify(message));
  };
  const closeWith = (connection: Connection, code: number, reason: string) => connection.socket.close(code, reason);

  const signIn = async (connection: Connection, token: string) => {
    const identity = await authenticate(token).catch(() => undefined);
    if (!identity) {
      send(connection, { type: 'error', code: 'unauthorized', message: 'The credential is invalid, revoked or expired.' });
      closeWith(connection, 4401, 'unauthorized');
      return;
    }
    connection.userId = identity.userId;
    send(connection, { type: 'ready', user_id: identity.userId });
  };

  const accept = async (socket: WebSocket, request: IncomingMessage) => {
    const connection: Connection = { socket, userId: undefined, videoIds: undefined, alive: true };
    connections.add(connection);
    socket.on('close', () => connections.delete(connection));
    socket.on('pong', () => (connection.alive = true));
    socket.on('error', (error) => logger.warn({ err: error }, 'websocket error'));
    const authTimer = setTimeout(() => {
      if (!connection.userId) closeWith(connection, 4401, 'authentication timeout');
    }, AUTH_TIMEOUT_MS);
    socket.on('close', () => clearTimeout(authTimer));

    socket.on('message', (data, isBinary) => {
      const parsed = isBinary ? undefined : clientMessage.safeParse(safeJson(data.toString()));
      if (!parsed?.success) {
        send(connection, { type: 'error', code: 'invalid_request', message: 'Messages are JSON objects: auth, subscribe or ping.' });
        return;
      }
      const message = parsed.data;
      if (message.type === 'auth') {
        if (connection.userId) send(connection, { type: 'error', code: 'invalid_request', message: 'Already authenticated.' });
        else void signIn(connection, message.token);
      } else if (!connection.userId) {
        send(connection, { type: 'error', code: 'unauthorized', message: 'Authenticate first: {"type":"auth","token":"…"}.' });
      } else if (message.type === 'subscribe') {
        connection.videoIds = message.video_ids ? new Set(message.video_ids) : undefined;
        send(connection, { type: 'subscribed', video_ids: message.video_ids ?? null });
      } else {
        send(connection, { type: 'pong' });
      }
    });

    const header = request.headers.authorization;
    const bearer = header ? /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1] : undefined;
    if (bearer) await signIn(connection, bearer);
  };

  const ping = setInterval(() => {
    for (const connection of connections) {
      if (!connection.alive) {
        connection.socket.terminate();
        continue;
      }
      connection.alive = false;
      connection.socket.ping();
    }
  }, PING_INTERVAL_MS);

  const represent = apiPresenter({ baseUrl: context.config.baseUrl, links: context.services.videoLinks });
  const deliver = async (event: VideoStatusEvent) => {
    const listeners = [...connections].filter(
      (c) => c.userId === event.userId && (!c.videoIds || c.videoIds.has(event.videoId)),
    );
    if (listeners.length === 0) return;
    // From the database: this notification may come before the one that updates the replica's video cache.
    const video = await context.services.videos.getLatest(event.userId, event.videoId);
    if (!video) return;
    const message = await statusMessage(represent, video);
    for (const connection of listeners) send(connection, message);
  };
  // The process's one LISTEN on the status channel (VideoStatusFeed), shared with waits and event streams.
  const unwatch = await context.services.videoWatch.watchAll((event) => {
    deliver(event).catch((error: unknown) => logger.error({ err: error }, 'could not deliver a status event'));
  });

  return {
    close: async () => {
      clearInterval(ping);
      server.off('upgrade', onUpgrade);
      unwatch();
      for (const connection of connections) connection.socket.close(1001, 'server shutting down');
      await new Promise<void>((resolve) => sockets.close(() => resolve()));
    },
  };
}

/** The `video.status` event, with the same links and fields as a video fetched over HTTP. */
/** The event carries the same fields, built the same way, as the ApiVideo record. */
async function statusMessage(represent: ApiPresenter, video: Video) {
  const { id, status, progress, stage, stage_started_at, video_url, thumbnail_url, has_watermark, error } = await represent.video(video);
  return { type: 'video.status', id, status, progress, stage, stage_started_at, video_url, thumbnail_url, has_watermark, error };
}

function safeJson(text: string): unknown {
  try {
    return parseClientJson(text);
  } catch {
    return undefined;
  }
}
