/** The OAuth authorization page; a signed-out person signs in and comes back to it with the same request. */
const AUTHORIZATION_PAGE = '/oauth/authorize';

/**
 * Where a sign-in may send the person afterwards: a page of the app (not the sign-in page itself) or the
 * authorization page with its request. Anything else (another site, a protocol-relative `//host`) gives
 * `fallback`, so a crafted sign-in link cannot send anyone away.
 */
export function safeReturnPath(next: string | null | undefined, fallback: string): string {
  if (!next) return fallback;
  const app = next.startsWith('/app') && !next.startsWith('/app/sign-in');
  const authorization = next === AUTHORIZATION_PAGE || next.startsWith(`${AUTHORIZATION_PAGE}?`);
  return app || authorization ? next : fallback;
}
