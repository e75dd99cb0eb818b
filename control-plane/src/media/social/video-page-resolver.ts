/** Where the media of a short-video page lives, and how its host expects to be asked for it. */
export interface ResolvedVideo {
  /** Direct URL of the media file (the video with its soundtrack, or the audio alone). */
  mediaUrl: string;
  /** Headers the media host expects (User-Agent, Referer, cookies); its CDN may refuse requests without them. */
  httpHeaders?: Record<string, string>;
  title?: string;
  durationSeconds?: number;
}

/**
 * Turns the URL of a public short-video page into the URL of its media. The caller has already checked
 * that the page is on the platform's own hosts; the media URL it answers is still untrusted (it is
 * downloaded through the SSRF-safe fetcher).
 */
export interface VideoPageResolver {
  resolve(pageUrl: string, signal?: AbortSignal): Promise<ResolvedVideo>;
}

/** The page does not lead to downloadable media: removed, private, region-locked, not a video, a live stream. */
export class VideoUnavailableError extends Error {
  /** What the platform or tool said, for logs; `message` is the sentence for the user. */
  readonly detail: string | undefined;

  constructor(message: string, options: { detail?: string; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = 'VideoUnavailableError';
    this.detail = options.detail;
  }
}

/** The platform did not answer within the resolver's deadline; says nothing about the video itself. */
export class VideoResolveTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`The video platform did not answer within ${Math.round(timeoutMs / 1000)} s.`);
    this.name = 'VideoResolveTimeoutError';
  }
}
