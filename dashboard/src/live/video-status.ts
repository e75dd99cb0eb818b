import { useEffect, useRef, useState } from 'react';
import { ApiProblem, findVideo, type WebVideo } from '../api/client.ts';
import { session } from '../auth/session.ts';
import { settings } from '../settings.ts';

/** How the page learns about the render: the status websocket, or polling when the socket is not available. */
export type LiveConnection = 'connecting' | 'live' | 'polling' | 'done';

const POLL_INTERVAL_MS = 3000;
const TERMINAL = new Set(['completed', 'failed']);
export const isTerminal = (video: WebVideo | undefined | null) => Boolean(video && TERMINAL.has(video.status));

/**
 * Which of two records of the same video to keep: a read that started before a status event may answer after
 * it, so a finished video never goes back to rendering, and progress never goes back.
 */
function newer(previous: WebVideo | null | undefined, next: WebVideo): WebVideo {
  if (!previous || previous.id !== next.id) return next;
  if (isTerminal(previous) && !isTerminal(next)) return previous;
  if (!isTerminal(next) && previous.status === next.status && previous.progress > next.progress) return { ...next, progress: previous.progress };
  return next;
}

type StatusEvent = Pick<WebVideo, 'id' | 'status' | 'progress' | 'video_url' | 'thumbnail_url' | 'has_watermark' | 'error'> & { type: 'video.status' };
type ServerMessage = StatusEvent | { type: 'ready' | 'pong' } | { type: 'error'; message?: string };

/**
 * A video kept current: over the status websocket (README "Status websocket": a first `auth` message, then
 * `subscribe` to this video; one `video.status` event per change), falling back to polling GET /user/videos
 * every few seconds when the socket cannot be opened or drops. Stops once the video is completed or failed.
 * `video` is null once the video is gone (deleted elsewhere).
 */
export function useLiveVideo(id: string, initial: WebVideo | undefined) {
  const [video, setVideo] = useState<WebVideo | null | undefined>(initial?.id === id ? initial : undefined);
  const [connection, setConnection] = useState<LiveConnection>('connecting');
  const [problem, setProblem] = useState<ApiProblem | undefined>();
  const latest = useRef(video);
  latest.current = video;

  useEffect(() => {
    const abort = new AbortController();
    let socket: WebSocket | undefined;
    let pollTimer: ReturnType<typeof setTimeout> | undefined;
    let finished = false;

    const finish = () => {
      finished = true;
      setConnection('done');
      socket?.close(1000, 'done');
      clearTimeout(pollTimer);
    };
    const refresh = async () => {
      try {
        const found = await findVideo(id, abort.signal);
        if (abort.signal.aborted) return;
        setProblem(undefined);
        const kept = found ? newer(latest.current, found) : null;
        latest.current = kept;
        setVideo(kept);
        if (!kept || isTerminal(kept)) finish();
      } catch (error) {
        if (abort.signal.aborted) return;
        if (error instanceof ApiProblem) setProblem(error);
      }
    };
    const poll = () => {
      if (finished || abort.signal.aborted) return;
      setConnection('polling');
      void refresh().finally(() => {
        if (!finished && !abort.signal.aborted) pollTimer = setTimeout(poll, POLL_INTERVAL_MS);
      });
    };
    const listen = () => {
      const token = session.token();
      if (!token || typeof WebSocket === 'undefined') return poll();
      try {
        socket = new WebSocket(settings.wsUrl);
      } catch {
        return poll();
      }
      socket.addEventListener('open', () => socket?.send(JSON.stringify({ type: 'auth', token })));
      socket.addEventListener('message', (event) => {
        let message: ServerMessage;
        try {
          message = JSON.parse(String(event.data)) as ServerMessage;
        } catch {
          return;
        }
        if (message.type === 'ready') {
          socket?.send(JSON.stringify({ type: 'subscribe', video_ids: [id] }));
          setConnection('live');
          // Changes made before the subscription took effect are read once.
          void refresh();
        } else if (message.type === 'video.status' && message.id === id && latest.current) {
          // The event carries everything the page shows (status, progress, links, watermark, error).
          const { type: _type, ...change } = message;
          const merged = newer(latest.current, { ...latest.current, ...change });
          latest.current = merged;
          setVideo(merged);
          if (isTerminal(merged)) finish();
        }
      });
      socket.addEventListener('close', () => {
        if (!finished && !abort.signal.aborted) poll();
      });
    };

    // A record handed over by the create page is current; anything else is read first.
    if (!latest.current || isTerminal(latest.current)) void refresh().then(() => !finished && listen());
    else listen();

    return () => {
      abort.abort();
      finished = true;
      clearTimeout(pollTimer);
      socket?.close(1000, 'page left');
    };
  }, [id]);

  return { video, connection, problem };
}
