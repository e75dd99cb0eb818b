import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as oauth from 'oauth4webapi';

/**
 * The front channel of the OAuth flow as the web app's authorization page runs it, without a browser: sign in
 * with the development identity provider (POST /dev-identity/token, as the page's development sign-in does),
 * check the request (GET /oauth/authorization-request with the authorization URL's query, unchanged) and send
 * the decision with the ID token (POST /oauth/authorization-decision). The browser test drives the page itself.
 */

/** An ID token of the development identity provider for `email`, as the web app's development sign-in gets it. */
export async function devIdToken(baseUrl: string, email: string): Promise<string> {
  const response = await fetch(`${baseUrl}/dev-identity/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email }) });
  if (response.status !== 200) throw new Error(`POST /dev-identity/token answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { id_token: string }).id_token;
}

/** GET /oauth/authorization-request with the query of an authorization URL. */
export const readAuthorizationRequest = (baseUrl: string, authorizationUrl: URL) => fetch(`${baseUrl}/oauth/authorization-request${authorizationUrl.search}`);

/** POST /oauth/authorization-decision: the authorization URL's parameters and the decision, with `authorization` as the Authorization header. */
export const sendAuthorizationDecision = (
  baseUrl: string,
  authorizationUrl: URL,
  decision: string,
  authorization: string | undefined,
  overrides: Record<string, string> = {},
) =>
  fetch(`${baseUrl}/oauth/authorization-decision`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
    body: JSON.stringify({ ...Object.fromEntries(authorizationUrl.searchParams), ...overrides, decision }),
  });

/** The person `email` signs in and decides; answers where the page would send them (the client's redirect URI with code or error). */
export async function authorizeAs(baseUrl: string, authorizationUrl: URL, email: string, decision: 'allow' | 'deny' = 'allow'): Promise<URL> {
  const checked = await readAuthorizationRequest(baseUrl, authorizationUrl);
  if (checked.status !== 200) throw new Error(`GET /oauth/authorization-request answered ${checked.status}: ${await checked.text()}`);
  const idToken = await devIdToken(baseUrl, email);
  const response = await sendAuthorizationDecision(baseUrl, authorizationUrl, decision, `Bearer ${idToken}`);
  if (response.status !== 200) throw new Error(`POST /oauth/authorization-decision answered ${response.status}: ${await response.text()}`);
  return new URL(((await response.json()) as { redirect_to: string }).redirect_to);
}

/**
 * An application using petsing's authorization server, for browser tests: oauth4webapi in the test process,
 * registered through discovery and RFC 7591 with a redirect URI on a local server that shows a page.
 */
export async function startOAuthClient(site: string, clientName: string) {
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><title>${clientName}</title><h1>Back at ${clientName}</h1>`));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const redirectUri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`;
  const insecure = { [oauth.allowInsecureRequests]: true };
  const issuer = new URL(site);
  const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
  const client = (await oauth.processDynamicClientRegistrationResponse(
    await oauth.dynamicClientRegistrationRequest(as, { redirect_uris: [redirectUri], client_name: clientName, token_endpoint_auth_method: 'none' }, insecure),
  )) as oauth.Client;

  /** A new authorization request (PKCE S256, a fresh state): the URL to open, and what the exchange needs. */
  const request = async (scope?: string) => {
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint!);
    const params = { response_type: 'code', client_id: client.client_id, redirect_uri: redirectUri, state, code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' };
    for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
    if (scope) url.searchParams.set('scope', scope);
    return { url, verifier, state };
  };
  /** The redirect back (validated: state, iss) exchanged for tokens. */
  const exchange = async (callback: URL, pending: { verifier: string; state: string }) =>
    oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), oauth.validateAuthResponse(as, client, callback, pending.state), redirectUri, pending.verifier, insecure),
    );
  return { as, client, redirectUri, request, exchange, close: () => server.close() };
}
