/** The one error a user-supplied URL fails with, whichever step (vetting, DNS, connecting, downloading) refused it. */

export type UrlErrorCode = 'image_url_refused' | 'image_url_unreachable' | 'image_url_too_large' | 'image_url_unsupported_type';

const urlErrorHints: Record<UrlErrorCode, string> = {
  image_url_refused:
    'Use a public https:// URL on the default port, without user:password@, whose host name resolves only to public internet addresses.',
  image_url_unreachable:
    'Make sure the URL is publicly reachable without authentication, answers quickly with HTTP 200, and redirects at most 3 times.',
  image_url_too_large: 'Send a smaller file; the limits are listed in the documentation.',
  image_url_unsupported_type:
    'Send a JPEG, PNG, WebP or HEIC image (or, for soundtracks, MP4, MOV, WebM, MP3, WAV, AAC or Ogg); the type is read from the file content, not from its name or Content-Type.',
};

/**
 * A user-supplied URL that may not or could not be fetched. `code` is the stable API code; `reason` is a
 * finer internal label for logs and tests. Messages never quote response bodies or resolved addresses.
 */
export class UrlRefusedError extends Error {
  readonly status = 400;
  readonly hint: string;

  constructor(
    readonly code: UrlErrorCode,
    readonly reason: string,
    message: string,
    options: { hint?: string; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'UrlRefusedError';
    this.hint = options.hint ?? urlErrorHints[code];
  }
}

/** The URL may not be contacted at all (scheme, credentials, port, a private address...). */
export const refused = (reason: string, message: string) => new UrlRefusedError('image_url_refused', reason, message);

/** The URL was allowed but did not answer as required (DNS, connection, status, redirects, deadline). */
export const unreachable = (reason: string, message: string, cause?: unknown) =>
  new UrlRefusedError('image_url_unreachable', reason, message, { cause });
