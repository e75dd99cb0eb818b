import { useCallback, useEffect, useRef, useState } from 'react';
import { isTerminalVideoStatus } from '@petsing/workflows/api-rules';
import { ApiProblem, findVideo, type WebVideo } from '../api/client.ts';
import { session } from '../auth/session.ts';
import { settings } from '../settings.ts';

/** How the page learns about the render: the status websocket, or polling when the socket is not available. */
export type LiveConnection = 'connecting' | 'live' | 'polling' | 'done';

const POLL_INTERVAL_MS = 3000;
const isTerminal = (video: WebVideo | undefined | null) => Boolean(video && isTerminalVideoStatus(video.status));

/** When to stop following: by default once the render ended; a paid re-render waits for the unwatermarked output. */
export type StopWhen = (video: WebVideo) => boolean;
export const renderEnded: StopWhen = (video) => isTerminal(video);
export const watermarkRemoved: StopWhen = (video) => video.status === 'failed' || (video.status === 'completed' && !video.has_watermark);

type StatusEvent = Pick<WebVideo, 'id' | 'status' | 'progress' | 'video_url' | 'thumbnail_url' | 'has_watermark' | 'error'> & { type: 'video.status' };
type ServerMessage = StatusEvent | { type: 'ready' | 'pong' } | { type: 'error'; message?: string };

/**
 * A video kept current: over the status websocket (README "Status websocket": a first `auth` message, then
 * `subscribe` to this video; one `video.status` event per change), falling back to polling GET /user/videos
 * every few seconds when the socket cannot be opened or drops. Stops once `stopWhen` holds (by default: the
 * video is completed or failed); `follow(stopWhen)` starts following again (a paid re-render).
 * `video` is null once the video is gone (deleted elsewhere).
 */
export function useLiveVideo(id: string, initial: WebVideo | undefined, initialStopWhen: StopWhen = renderEnded) {
  const [video, setVideo] = useState<WebVideo | null | undefined>(initial?.id === id ? initial : undefined);
  const [connection, setConnection] = useState<LiveConnection>('connecting');
  const [problem, setProblem] = useState<ApiProblem | undefined>();
  const [following, setFollowing] = useState<{ stopWhen: StopWhen; generation: number }>({ stopWhen: initialStopWhen, generation: 0 });
  // Kept in step by keep(), the only writer of `video` after the first render.
  const latest = useRef(video);

  const follow = useCallback((stopWhen: StopWhen) => setFollowing((previous) => ({ stopWhen, generation: previous.generation + 1 })), []);

  useEffect(() => {
    const abort = new AbortController();
    const { stopWhen } = following;
    let socket: WebSocket | undefined;
    let pollTimer: ReturnType<typeof setTimeout> | undefined;
    let finished = false;
    /** Status events received; a read that started before the latest one answers older news and is dropped. */
    let events = 0;

    const keep = (next: WebVideo | null) => {
      latest.current = next;
      setVideo(next);
      if (!next || stopWhen(next)) finish();
    };
    const finish = () => {
      finished = true;
      setConnection('done');
      socket?.close(1000, 'done');
      clearTimeout(pollTimer);
    };
    const refresh = async () => {
      const eventsBefore = events;
      try {
        const found = await findVideo(id, abort.signal);
        if (abort.signal.aborted || events !== eventsBefore) return;
        setProblem(undefined);
        keep(found ?? null);
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
      setConnection('connecting');
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
          events += 1;
          // The event carries everything the page shows (status, progress, links, watermark, error).
          const { type: _type, ...change } = message;
          keep({ ...latest.current, ...change });
        }
      });
      socket.addEventListener('close', () => {
        if (!finished && !abort.signal.aborted) poll();
      });
    };

    // A record handed over by the create page is current; anything else is read first.
    const current = latest.current;
    if (following.generation === 0 && current && !stopWhen(current)) listen();
    else void refresh().then(() => !finished && !abort.signal.aborted && listen());

    return () => {
      abort.abort();
      finished = true;
      clearTimeout(pollTimer);
      socket?.close(1000, 'page left');
    };
  }, [id, following]);

  return { video, connection, problem, follow };
}
