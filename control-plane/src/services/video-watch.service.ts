import { isTerminalVideoStatus } from '@petsing/workflows/api-rules';
import type { DatabaseHandle } from '../db/database.ts';
import type { Video, VideoStatus } from '../db/schema.ts';
import type { Logger } from '../logging/logger.ts';
import { VIDEO_STATUS_CHANNEL, type VideoStatusEvent } from '../repositories/video.repository.ts';

/** A status a video does not leave on its own (TERMINAL_VIDEO_STATUSES, shared with the web app). */
export const isTerminal = (status: VideoStatus): boolean => isTerminalVideoStatus(status);

/**
 * The longest one request waits on a video, whatever the surface: `Prefer: wait` on GET /v1/videos/{id} and
 * the MCP tool wait_for_video. A longer wait asked for is capped (the answer says the video is not done yet,
 * and the client asks again).
 */
export const MAX_WAIT_SECONDS = 60;

/**
 * The id of a video's state as an event (SSE `id`): pending 1; processing 2 while preparing, 3 while queued, then
 * 4 + progress (4–101) while rendering (and for renders begun before stages were recorded); terminal 102. It only
 * grows while one render runs, and every replica computes the same id from the row, so a client can resume on any
 * replica with Last-Event-ID without the service storing events.
 */
export function videoEventId(video: Pick<Video, 'status' | 'progress' | 'render_stage'>): number {
  if (isTerminal(video.status)) return 102;
  if (video.status !== 'processing') return 1;
  if (video.render_stage === 'preparing') return 2;
  if (video.render_stage === 'queued') return 3;
  return 4 + Math.min(97, Math.max(0, video.progress));
}

/** Whoever waits on one video (`videoId`) or on every video of the process (the status websocket). */
type Watcher = { videoId?: string; changed(event: VideoStatusEvent): void; closed(): void };

/**
 * One LISTEN on the status channel per process, fanned out to whoever waits on a video (a Prefer: wait read,
 * an event stream). The notifications come from Postgres, so a change made by any worker or API replica wakes
 * the waiters on every replica.
 */
export class VideoStatusFeed {
  private readonly watchers = new Set<Watcher>();
  private listening: Promise<() => Promise<void>> | undefined;
  private closed = false;

  constructor(
    private readonly listen: DatabaseHandle['listen'],
    private readonly logger: Logger,
  ) {}

  /**
   * Calls `changed` on every status notification of the video (of every video without `videoId`), and `closed`
   * when the feed shuts down, until the returned function is called. Resolves once the LISTEN is in place, so a
   * read made after it misses no change.
   */
  async watch(videoId: string | undefined, changed: (event: VideoStatusEvent) => void, closed: () => void): Promise<() => void> {
    if (this.closed) throw new Error('The video status feed is closed.');
    const watcher: Watcher = { ...(videoId !== undefined ? { videoId } : {}), changed, closed };
    this.watchers.add(watcher);
    try {
      await this.start();
    } catch (error) {
      this.watchers.delete(watcher);
      throw error;
    }
    return () => this.watchers.delete(watcher);
  }

  /** Ends every wait and stream (they answer what they have) and stops listening. */
  async close(): Promise<void> {
    this.closed = true;
    for (const watcher of this.watchers) watcher.closed();
    this.watchers.clear();
    const listening = this.listening;
    this.listening = undefined;
    if (listening) await (await listening.catch(() => async () => {}))();
  }

  private start(): Promise<unknown> {
    this.listening ??= this.listen(VIDEO_STATUS_CHANNEL, (payload) => this.deliver(payload));
    // A failed LISTEN is tried again by the next watcher.
    return this.listening.catch((error: unknown) => {
      this.listening = undefined;
      throw error;
    });
  }

  private deliver(payload: string): void {
    let event: VideoStatusEvent;
    try {
      event = JSON.parse(payload) as VideoStatusEvent;
    } catch (error) {
      this.logger.warn({ err: error }, 'ignoring a malformed status notification');
      return;
    }
    for (const watcher of this.watchers) if (watcher.videoId === undefined || watcher.videoId === event.videoId) watcher.changed(event);
  }
}

/**
 * Waiting on a video instead of polling it: GET /v1/videos/{id} with Prefer: wait and the event stream of
 * GET /v1/videos/{id}/events, both woken by the status feed.
 */
export class VideoWatchService {
  constructor(
    private readonly read: (userId: string, videoId: string) => Promise<Video | undefined>,
    private readonly feed: VideoStatusFeed,
  ) {}

  /**
   * The video's states as they change, from its current one, each with a larger event id than the one before
   * (and than `afterEventId`); ends after a terminal state, when the video is deleted, or when `signal` aborts.
   */
  async *follow(userId: string, videoId: string, signal: AbortSignal, afterEventId = 0): AsyncGenerator<{ eventId: number; video: Video }> {
    let dirty = false;
    let ended = signal.aborted;
    let wake: () => void = () => {};
    const onAbort = () => {
      ended = true;
      wake();
    };
    const unwatch = await this.feed.watch(videoId, () => {
      dirty = true;
      wake();
    }, onAbort);
    signal.addEventListener('abort', onAbort);
    try {
      let last = afterEventId;
      while (!ended) {
        dirty = false;
        const video = await this.read(userId, videoId);
        if (!video) return;
        const eventId = videoEventId(video);
        if (eventId > last) {
          last = eventId;
          yield { eventId, video };
        }
        if (isTerminal(video.status)) return;
        if (!dirty && !ended) await new Promise<void>((resolve) => (wake = resolve));
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      unwatch();
    }
  }

  /**
   * The video once it is terminal, or as it is after `waitMs` (at most MAX_WAIT_SECONDS), or when `signal`
   * aborts (the client hung up or the service stops); undefined when it does not exist (or was deleted
   * meanwhile). `onState` sees each state on the way, from the current one (the MCP tool's progress
   * notifications); the wait goes on once it settles.
   */
  async waitForTerminal(
    userId: string,
    videoId: string,
    waitMs: number,
    signal: AbortSignal,
    onState?: (video: Video) => Promise<void> | void,
  ): Promise<Video | undefined> {
    // A timer of its own: under AbortSignal.any(), an AbortSignal.timeout() can be garbage collected before it
    // fires (nodejs/node#57736), which left a wait open for minutes.
    const stop = new AbortController();
    const timer = setTimeout(() => stop.abort(), Math.min(waitMs, MAX_WAIT_SECONDS * 1000));
    const onAbort = () => stop.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) onAbort();
    try {
      let latest: Video | undefined;
      for await (const { video } of this.follow(userId, videoId, stop.signal)) {
        latest = video;
        await onState?.(video);
      }
      if (latest && isTerminal(latest.status)) return latest;
      return await this.read(userId, videoId);
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    }
  }

  /** Calls `changed` with every status notification of any video (the status websocket's fan-out), until unsubscribed. */
  watchAll(changed: (event: VideoStatusEvent) => void): Promise<() => void> {
    return this.feed.watch(undefined, changed, () => {});
  }

  /** Answers every wait and ends every stream (before the HTTP server waits for its connections to end). */
  close(): Promise<void> {
    return this.feed.close();
  }
}
