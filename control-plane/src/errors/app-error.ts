/**
 * Expected failures, typed with their HTTP status and a stable machine-readable code. Services throw
 * these; the HTTP layer maps every one of them in a single place (http/error-handler.ts).
 */
export const errorCatalog = {
  invalid_request: { status: 400, title: 'Invalid request', hint: 'Check the request against /openapi.json and fix the fields named in the message.' },
  malformed_json: { status: 400, title: 'Malformed JSON', hint: 'Send a syntactically valid JSON body with Content-Type: application/json.' },
  unauthorized: { status: 401, title: 'Missing or invalid credential', hint: 'Send Authorization: Bearer <credential>; create an API key on the dashboard or sign in again.' },
  forbidden: { status: 403, title: 'Missing scope', hint: 'Use a credential that carries the scope this operation needs (videos:write for writes).' },
  not_found: { status: 404, title: 'Not found', hint: 'Check the id or path; list endpoints show what exists for your account.' },
  conflict: { status: 409, title: 'Conflict', hint: 'The resource already exists or changed meanwhile; fetch it and retry if needed.' },
  idempotency_key_reused: { status: 422, title: 'Idempotency key reused', hint: 'Use a new Idempotency-Key for a different request; reuse a key only to retry the same request.' },
  idempotency_key_in_use: { status: 409, title: 'Request in progress', hint: 'A request with this Idempotency-Key is still running; retry in a few seconds.' },
  image_url_refused: { status: 400, title: 'Image URL refused', hint: 'Use a public https URL of the photo; private, loopback, link-local and metadata addresses are refused.' },
  unknown_template: { status: 400, title: 'Unknown template', hint: 'Use an id from GET /v1/templates, exactly as given.' },
  payload_too_large: { status: 413, title: 'Payload too large', hint: 'Send a smaller body; the limits are listed in the documentation.' },
  insufficient_credits: { status: 402, title: 'Not enough credits', hint: 'Buy a credit pack, then retry; GET /v1/credits shows your balance.' },
  rate_limited: { status: 429, title: 'Rate limit exceeded', hint: 'Wait the number of seconds in the Retry-After header, then retry.' },
  download_link_invalid: { status: 403, title: 'Download link invalid or expired', hint: 'Request a fresh link by fetching the video again; links expire.' },
  internal_error: { status: 500, title: 'Internal error', hint: 'Retry later; if it persists, contact support with the X-Request-Id header value.' },
  service_unavailable: { status: 503, title: 'Temporarily unavailable', hint: 'Retry in a few seconds.' },
} as const satisfies Record<string, { status: number; title: string; hint: string }>;

export type ErrorCode = keyof typeof errorCatalog;

export class AppError extends Error {
  readonly status: number;
  readonly hint: string;

  constructor(
    readonly code: ErrorCode,
    message: string,
    options: { hint?: string; status?: number; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'AppError';
    this.status = options.status ?? errorCatalog[code].status;
    this.hint = options.hint ?? errorCatalog[code].hint;
    this.headers = options.headers ?? {};
  }

  readonly headers: Record<string, string>;
}

export const notFound = (what: string, options?: { hint?: string }) => new AppError('not_found', `${what} was not found.`, options);
