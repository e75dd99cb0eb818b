import { FREE_CREDITS_PER_MONTH } from '../domain/pricing.ts';

/**
 * Expected failures, typed with their HTTP status and a stable machine-readable code. Services throw
 * these; the HTTP layer maps every one of them in a single place (http/error-handler.ts).
 */
export const errorCatalog = {
  invalid_request: { status: 400, title: 'Invalid request', hint: 'Check the request against /openapi.json and fix the fields named in the message.' },
  invalid_path: { status: 400, title: 'Invalid path', hint: 'Percent-encode the path as RFC 3986 requires: every % must start a valid %XX escape of UTF-8 bytes.' },
  malformed_json: { status: 400, title: 'Malformed JSON', hint: 'Send a syntactically valid JSON body with Content-Type: application/json.' },
  nesting_too_deep: { status: 400, title: 'JSON nested too deep', hint: 'Send JSON whose arrays and objects nest no deeper than the message says (32); no request of this API needs more than 6 levels.' },
  unauthorized: { status: 401, title: 'Missing or invalid credential', hint: 'Send Authorization: Bearer <credential>; create an API key on the dashboard or sign in again.' },
  forbidden: { status: 403, title: 'Missing scope', hint: 'Use a credential that carries the scope this operation needs (videos:write for writes).' },
  not_found: { status: 404, title: 'Not found', hint: 'Check the id or path; list endpoints show what exists for your account.' },
  method_not_allowed: { status: 405, title: 'Method not allowed', hint: 'Use one of the methods in the Allow header; /openapi.json lists each path\'s operations.' },
  conflict: { status: 409, title: 'Conflict', hint: 'The resource already exists or changed meanwhile; fetch it and retry if needed.' },
  video_already_completed: { status: 409, title: 'Video already completed', hint: 'A completed video cannot be canceled (and its credit is not refunded); delete it with DELETE /v1/videos/{id} if it is not wanted.' },
  idempotency_key_reused: { status: 422, title: 'Idempotency key reused', hint: 'Use a new Idempotency-Key for a different request; reuse a key only to retry the same request.' },
  idempotency_key_in_use: { status: 409, title: 'Request in progress', hint: 'A request with this Idempotency-Key is still running; retry in a few seconds.' },
  image_url_refused: { status: 400, title: 'Image URL refused', hint: 'Use a public https URL of the photo; private, loopback, link-local and metadata addresses are refused.' },
  image_url_unreachable: { status: 400, title: 'Image URL unreachable', hint: 'Make sure the URL is publicly reachable without authentication, answers quickly with HTTP 200, and redirects at most 3 times.' },
  image_url_too_large: { status: 400, title: 'Image too large', hint: 'Send a photo of at most 15 MB.' },
  image_url_unsupported_type: { status: 400, title: 'Not a supported image', hint: 'Send a JPEG, PNG, WebP or HEIC photo; the type is read from the file content.' },
  unknown_image: { status: 400, title: 'Unknown image', hint: 'Check the photo again with POST /v1/images (or POST /images) and use the id it answers; an image id is valid for 24 hours, for the account that sent the photo only.' },
  face_not_found: { status: 400, title: 'No pet face found', hint: 'Send face.mouth, the point of the pet\'s mouth as fractions 0-1 of the photo\'s width and height (after EXIF orientation): {"face":{"mouth":{"x":0.52,"y":0.71}}} in JSON, or the form field face={"mouth":{"x":0.52,"y":0.71}}; or use a photo where the pet faces the camera.' },
  unsupported_video_url: { status: 400, title: 'Not a supported video URL', hint: 'Send the https:// link of a public TikTok video, as copied from the app or the web site (e.g. https://www.tiktok.com/@user/video/123).' },
  video_unavailable: { status: 400, title: 'Video unavailable', hint: 'Check that the video is public and still online, then retry, or choose another video.' },
  no_soundtrack: { status: 400, title: 'Video has no soundtrack', hint: 'Choose a video with sound.' },
  soundtrack_too_short: { status: 400, title: 'Soundtrack too short', hint: 'Choose a video whose sound lasts at least 2 seconds.' },
  video_too_large: { status: 400, title: 'Video too large', hint: 'Choose a shorter video.' },
  text_too_long: { status: 400, title: 'Text too long', hint: 'Send at most 500 characters of text (about 30 seconds of speech).' },
  unknown_voice: { status: 400, title: 'Unknown voice', hint: 'Use a voice id from GET /tts/voices, exactly as given.' },
  invalid_unsubscribe_token: { status: 400, title: 'Invalid unsubscribe link', hint: 'Use the unsubscribe link of a recent email exactly as it was sent.' },
  unknown_tool: { status: 400, title: 'Unknown tool', hint: 'Call tools/list for the tools this MCP server offers, and use a name exactly as listed.' },
  unknown_template: { status: 400, title: 'Unknown template', hint: 'Use an id from GET /v1/templates, exactly as given.' },
  multipart_required: { status: 400, title: 'Multipart form required', hint: 'Send Content-Type: multipart/form-data with the fields listed in /openapi.json.' },
  unsupported_image_format: { status: 400, title: 'Unsupported image format', hint: 'Upload the photo as PNG, JPEG or WebP (convert HEIC photos first).' },
  unsupported_audio_format: { status: 400, title: 'Unsupported audio format', hint: 'Upload MP3, WAV, MP4/M4A (AAC) or WebM audio that plays in a media player.' },
  audio_duration_out_of_range: { status: 400, title: 'Audio length out of range', hint: 'Trim or extend the audio to last between 2 and 30 seconds.' },
  audio_start_out_of_range: {
    status: 400,
    title: 'Audio start out of range',
    hint: 'Give audio_start_seconds from 0 to the audio\'s duration_seconds minus 2 (a video needs 2 s of audio), with audio_id; or leave it out to sing the window with the most singing.',
  },
  unknown_audio: { status: 404, title: 'Unknown audio', hint: 'Use an id answered by POST /v1/audio (or the MCP tools that make audio) for this account.' },
  audio_expired: { status: 410, title: 'Audio expired', hint: 'Audio is usable for creates for 24 hours; send it to POST /v1/audio again and create with the new id.' },
  template_or_audio_required: { status: 400, title: 'Template or audio required', hint: 'Send exactly one of template_id (a song from GET /v1/templates) and audio_id (from POST /v1/audio).' },
  unknown_audio_url: { status: 400, title: 'Unknown audio URL', hint: 'Pass the url answered by POST /tts or POST /social/extract-audio for your own account.' },
  no_free_credits: { status: 400, title: 'No free credits left', hint: `Free credits reset to ${FREE_CREDITS_PER_MONTH} at the start of each calendar month (UTC); subscribe to create videos without credits or watermark.` },
  delete_failed: { status: 500, title: 'Delete failed', hint: 'Retry later; if it persists, contact support with the X-Request-Id header value.' },
  payload_too_large: { status: 413, title: 'Payload too large', hint: 'Send a smaller body; the limits are listed in the documentation.' },
  headers_too_large: { status: 431, title: 'Request headers too large', hint: 'Keep the request line and headers (a long URL or cookie included) under 16 KB; send large values in the body.' },
  request_timeout: { status: 408, title: 'Request timeout', hint: 'Send the request\'s headers and body without pausing; the connection was closed, so open a new one and retry.' },
  insufficient_credits: { status: 402, title: 'Not enough credits', hint: 'Buy a credit pack, then retry; GET /v1/credits shows your balance.' },
  rate_limited: { status: 429, title: 'Rate limit exceeded', hint: 'Wait the number of seconds in the Retry-After header, then retry.' },
  download_link_invalid: { status: 403, title: 'Download link invalid or expired', hint: 'Request a fresh link by fetching the video again; links expire.' },
  internal_error: { status: 500, title: 'Internal error', hint: 'Retry later; if it persists, contact support with the X-Request-Id header value.' },
  service_unavailable: { status: 503, title: 'Temporarily unavailable', hint: 'Retry in a few seconds.' },
  face_detection_unavailable: { status: 503, title: 'Photo check unavailable', hint: 'No render node could check the photo just now (all busy or none running); retry after the Retry-After header\'s delay.' },
  speech_quota_exhausted: { status: 429, title: 'Speech quota exhausted', hint: 'The speech provider\'s quota is used up; retry after the Retry-After header\'s delay, or later.' },
  speech_unavailable: { status: 503, title: 'Speech generation unavailable', hint: 'Speech generation is temporarily unavailable; retry in a few seconds.' },
  payments_not_configured: { status: 503, title: 'Payments not available', hint: 'Nothing was charged. This service does not take payments at the moment.' },
  unknown_plan: { status: 400, title: 'Unknown plan', hint: 'Send plan_type "weekly" or "annual"; GET /subscription/pricing lists the plans.' },
  unknown_credit_pack: { status: 400, title: 'Unknown credit pack', hint: 'Send pack "starter", "growth" or "scale"; GET /credits/packs lists them.' },
  video_not_watermarked: { status: 400, title: 'Video has no watermark', hint: 'Only a watermarked video can be bought free of its watermark; this one has none.' },
  video_not_ready: { status: 400, title: 'Video not finished', hint: 'Wait until the video is completed, then buy the watermark removal.' },
  webhook_signature_invalid: { status: 400, title: 'Invalid webhook signature', hint: 'Send the raw event body with the Stripe-Signature header Stripe computed with this endpoint\'s signing secret.' },
  webhook_url_refused: { status: 400, title: 'Webhook URL refused', hint: 'Use a public https:// URL on the default port, without user:password@, whose host name resolves only to public internet addresses.' },
  webhook_limit_reached: { status: 409, title: 'Too many webhook endpoints', hint: 'Delete an endpoint you no longer use (DELETE /v1/webhooks/{id}), then register the new one.' },
  webhook_secret_required: { status: 400, title: 'No default webhook secret', hint: 'Make the account\'s default webhook secret once with POST /v1/webhooks/default-secret (it signs every webhook_url delivery), then create again.' },
} as const satisfies Record<string, { status: number; title: string; hint: string }>;

export type ErrorCode = keyof typeof errorCatalog;

/**
 * Whether sending the same request again, unchanged, can succeed (ErrorDetail.retryable): true for
 * limits that pass, outages and work in progress; false where the request or the account must change
 * first. Every code decides here; the docs page and README list it.
 */
export const retryableByCode = {
  invalid_request: false,
  invalid_path: false,
  malformed_json: false,
  nesting_too_deep: false,
  unauthorized: false,
  forbidden: false,
  not_found: false,
  method_not_allowed: false,
  conflict: false,
  video_already_completed: false,
  idempotency_key_reused: false,
  idempotency_key_in_use: true,
  image_url_refused: false,
  image_url_unreachable: false,
  image_url_too_large: false,
  image_url_unsupported_type: false,
  unknown_image: false,
  face_not_found: false,
  unsupported_video_url: false,
  video_unavailable: false,
  no_soundtrack: false,
  soundtrack_too_short: false,
  video_too_large: false,
  text_too_long: false,
  unknown_voice: false,
  invalid_unsubscribe_token: false,
  unknown_tool: false,
  unknown_template: false,
  multipart_required: false,
  unsupported_image_format: false,
  unsupported_audio_format: false,
  audio_duration_out_of_range: false,
  audio_start_out_of_range: false,
  unknown_audio: false,
  audio_expired: false,
  template_or_audio_required: false,
  unknown_audio_url: false,
  no_free_credits: false,
  delete_failed: true,
  payload_too_large: false,
  headers_too_large: false,
  request_timeout: true,
  insufficient_credits: false,
  rate_limited: true,
  download_link_invalid: false,
  internal_error: true,
  service_unavailable: true,
  face_detection_unavailable: true,
  speech_quota_exhausted: true,
  speech_unavailable: true,
  payments_not_configured: false,
  unknown_plan: false,
  unknown_credit_pack: false,
  video_not_watermarked: false,
  video_not_ready: true,
  webhook_signature_invalid: false,
  webhook_url_refused: false,
  webhook_limit_reached: false,
  webhook_secret_required: false,
} as const satisfies Record<ErrorCode, boolean>;

/** Extra fields of one error's ErrorDetail (the 402's balance and cost). */
export type ErrorDetails = { credit_balance?: number; credits_required?: number; image_id?: string };

export class AppError extends Error {
  readonly status: number;
  readonly hint: string;

  constructor(
    readonly code: ErrorCode,
    message: string,
    options: { hint?: string; status?: number; headers?: Record<string, string>; details?: ErrorDetails; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'AppError';
    this.status = options.status ?? errorCatalog[code].status;
    this.hint = options.hint ?? errorCatalog[code].hint;
    this.headers = options.headers ?? {};
    this.details = options.details ?? {};
  }

  readonly headers: Record<string, string>;
  readonly details: ErrorDetails;

  get retryable(): boolean {
    return retryableByCode[this.code];
  }

  /** The delay a Retry-After header of this error names (seconds, or an HTTP date from now); undefined without one. */
  get retryAfterSeconds(): number | undefined {
    const value = this.headers['Retry-After'];
    if (value === undefined) return undefined;
    if (/^\d+$/.test(value)) return Number(value);
    const date = Date.parse(value);
    return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - Date.now()) / 1000));
  }
}

export const notFound = (what: string, options?: { hint?: string }) => new AppError('not_found', `${what} was not found.`, options);
