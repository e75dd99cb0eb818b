/** The three ways the OAuth authorization server refuses a request; http/routes/oauth.routes.ts answers each in its RFC shape. */

/** An error answered to the client as RFC 6749 §5.2 / RFC 7591 §3.2.2 JSON. */
export class OAuthError extends Error {
  constructor(
    readonly error: string,
    description: string,
    readonly status = 400,
  ) {
    super(description);
    this.name = 'OAuthError';
  }
}

/**
 * An authorization request whose client or redirect URI could not be verified. It is shown to the
 * person, never redirected: redirecting to an unverified URI would make this an open redirector.
 */
export class AuthorizationPageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AuthorizationPageError';
  }
}

/** An authorization request error reported back to the verified redirect URI (RFC 6749 §4.1.2.1). */
export class AuthorizationRedirectError extends Error {
  constructor(
    readonly error: string,
    description: string,
    readonly location: string,
  ) {
    super(description);
    this.name = 'AuthorizationRedirectError';
  }
}
