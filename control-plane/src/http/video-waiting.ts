import type { Request, Response } from 'express';
import type { Video } from '../db/schema.ts';
import type { Logger } from '../logging/logger.ts';
import { isTerminal, MAX_WAIT_SECONDS, videoEventId, type VideoWatchService } from '../services/video-watch.service.ts';

/** The longest `Prefer: wait` honoured, the same cap as every wait on a video; a longer one is capped (and Preference-Applied says so). */
export { MAX_WAIT_SECONDS };
/** A comment line this often keeps proxies from closing an event stream that has nothing to say. */
export const HEARTBEAT_SECONDS = 15;
/** How long an EventSource waits before it reconnects (the SSE `retry` field). */
const RECONNECT_MS = 3_000;

/**
 * The seconds of a `Prefer: wait=N` header (RFC 7240; preferences are comma-separated, tokens
 * case-insensitive, the value may be quoted), capped at MAX_WAIT_SECONDS; undefined without one, or for 0.
 */
export function preferredWaitSeconds(req: Request): number | undefined {
  for (const preference of (req.get('Prefer') ?? '').split(',')) {
    const match = /^\s*wait\s*=\s*"?(\d{1,10})"?\s*(?:;.*)?$/i.exec(preference);
    const seconds = match ? Number(match[1]) : 0;
    if (seconds > 0) return Math.min(seconds, MAX_WAIT_SECONDS);
  }
  return undefined;
}

/**
 * Answers GET /v1/videos/{id}/events: Server-Sent Events, one `video.status` event (data: the ApiVideo) per
 * change of the video, each `id` larger than the one before; ends after the terminal event. A reconnect with
 * Last-Event-ID gets the current state at once if it is newer, then only newer events; a video that ended at
 * or before Last-Event-ID answers 204, which tells an EventSource to stop reconnecting.
 */
export async function streamVideoEvents(
  req: Request,
  res: Response,
  options: { video: Video; watch: VideoWatchService; represent: (video: Video) => Promise<object>; logger: Logger },
): Promise<void> {
  const { video, watch, represent, logger } = options;
  const header = req.get('Last-Event-ID')?.trim() ?? '';
  const lastEventId = /^\d{1,10}$/.test(header) ? Number(header) : 0;
  if (isTerminal(video.status) && videoEventId(video) <= lastEventId) {
    res.status(204).end();
    return;
  }
  const hangUp = new AbortController();
  res.on('close', () => hangUp.abort());
  res.status(200).set({
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache, no-transform',
    // nginx and similar proxies would otherwise hold events back in their buffers.
    'X-Accel-Buffering': 'no',
  });
  res.flushHeaders();
  res.write(`retry: ${RECONNECT_MS}\n\n`);
  const heartbeat = setInterval(() => res.write(': heartbeat\n\n'), HEARTBEAT_SECONDS * 1000);
  try {
    for await (const event of watch.follow(video.user_id, video.id, hangUp.signal, lastEventId)) {
      res.write(`id: ${event.eventId}\nevent: video.status\ndata: ${JSON.stringify(await represent(event.video))}\n\n`);
    }
  } catch (error) {
    // The status line is sent: the stream just ends, and the client reconnects with its Last-Event-ID.
    logger.warn({ err: error, videoId: video.id }, 'video event stream failed');
  } finally {
    clearInterval(heartbeat);
    res.end();
  }
}
