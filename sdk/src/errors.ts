import type { components } from './schema.ts';

type ErrorDetail = components['schemas']['ErrorDetail'];
type ApiVideo = components['schemas']['ApiVideo'];

/**
 * A failure the API answered: its status and the ErrorDetail of the body (`code`, `message`, `hint`,
 * `retryable`, `retry_after_seconds`), plus the request id to quote when asking for help. Bodies in the older
 * shapes (`{"error": "…"}`, `{"message": "…"}`) or none at all still give a PetsingError, with code
 * `http_<status>`.
 */
export class PetsingError extends Error {
  override readonly name = 'PetsingError';
  readonly status: number;
  readonly code: string;
  readonly hint: string | undefined;
  /** Whether the same request, unchanged, can succeed later (the service's verdict, fixed per code). */
  readonly retryable: boolean;
  /** How long to wait before retrying, when the service said (body or Retry-After header). */
  readonly retryAfterSeconds: number | undefined;
  readonly requestId: string | undefined;
  readonly documentationUrl: string | undefined;
  /** The ErrorDetail as answered, with fields this SDK version does not name (for example `credit_balance`). */
  readonly detail: Partial<ErrorDetail> & Record<string, unknown>;

  constructor(status: number, detail: Partial<ErrorDetail> & Record<string, unknown>, requestId: string | undefined, retryAfterSeconds: number | undefined) {
    super(detail.message ?? `HTTP ${status}`);
    this.status = status;
    this.code = detail.code ?? `http_${status}`;
    this.hint = detail.hint;
    this.retryable = detail.retryable ?? RETRYABLE_WITHOUT_DETAIL.has(status);
    this.retryAfterSeconds = detail.retry_after_seconds ?? retryAfterSeconds;
    this.requestId = requestId;
    this.documentationUrl = detail.documentation_url;
    this.detail = detail;
  }

  /** The error of a failed response whose body was read already: as text, or as the JSON it parsed to. */
  static of(response: Response, body: unknown): PetsingError {
    return new PetsingError(response.status, errorDetail(body), response.headers.get('x-request-id') ?? undefined, retryAfterSeconds(response.headers));
  }
}

/** A video ended `failed`: `code` and `message` are the video's `error` (for example `image_url_unreachable`, `canceled`). */
export class VideoFailedError extends Error {
  override readonly name = 'VideoFailedError';
  readonly code: string;
  readonly video: ApiVideo;

  constructor(video: ApiVideo) {
    super(video.error?.message ?? `Video ${video.id} failed`);
    this.code = video.error?.code ?? 'unknown';
    this.video = video;
  }
}

/** waitForVideo's `timeoutMs` passed before the video reached a terminal status; `video` is the last record read. */
export class WaitTimeoutError extends Error {
  override readonly name = 'WaitTimeoutError';
  constructor(readonly videoId: string, readonly video: ApiVideo | undefined) {
    super(`Video ${videoId} was still ${video?.status ?? 'unread'} when the wait timed out`);
  }
}

// Without an ErrorDetail (a proxy's page, an older shape) only these statuses say "try again".
const RETRYABLE_WITHOUT_DETAIL = new Set([429, 502, 503, 504]);

function errorDetail(answered: unknown): Partial<ErrorDetail> & Record<string, unknown> {
  const body = typeof answered === 'string' ? parseJson(answered) : answered;
  if (!isObject(body)) return {};
  if (isObject(body.error)) return body.error as Partial<ErrorDetail>;
  const message = typeof body.message === 'string' ? body.message : typeof body.error === 'string' ? body.error : undefined;
  return message === undefined ? {} : { message };
}

/** Retry-After as delta-seconds or an HTTP date (RFC 9110 §10.2.3). */
function retryAfterSeconds(headers: Headers): number | undefined {
  const value = headers.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
