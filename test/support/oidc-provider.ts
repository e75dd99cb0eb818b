import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';

/**
 * A local OpenID Connect provider for browser tests, speaking the protocol a real one does to a public client:
 * discovery (/.well-known/openid-configuration), the authorization endpoint (authorization code, PKCE S256
 * only, exact redirect URIs, state and nonce carried through) with a small login form the test fills in, the
 * token endpoint (code once, verifier checked; CORS, as browsers call it) answering an RS256 ID token, and the
 * JWKS. Every person who signs in gets a verified email; `sub` is derived from the email.
 */
export type OidcProvider = {
  issuer: string;
  jwksUrl: string;
  clientId: string;
  /** Exact redirect URIs the client may use; add to it once the app's address is known. */
  redirectUris: string[];
  /** The authorization and token requests seen, for assertions on PKCE. */
  requests: { path: string; params: Record<string, string> }[];
  close(): Promise<void>;
};

type PendingCode = { clientId: string; redirectUri: string; challenge: string; nonce: string | undefined; email: string; expiresAt: number };

const CODE_TTL_MS = 60_000;
const ID_TOKEN_TTL_SECONDS = 3600;

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

async function readForm(req: IncomingMessage): Promise<Record<string, string>> {
  let body = '';
  for await (const chunk of req) body += String(chunk);
  return Object.fromEntries(new URLSearchParams(body));
}

export async function startOidcProvider(clientId: string): Promise<OidcProvider> {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'test-key-1', alg: 'RS256', use: 'sig' };
  const codes = new Map<string, PendingCode>();
  const redirectUris: string[] = [];
  const requests: OidcProvider['requests'] = [];
  let issuer = '';

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', 'access-control-allow-origin': '*', 'cache-control': 'no-store', ...headers });
    res.end(JSON.stringify(body));
  };

  const authorize = (res: ServerResponse, params: Record<string, string>) => {
    if (params.client_id !== clientId || !redirectUris.includes(params.redirect_uri ?? '')) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('unknown client or redirect_uri');
      return;
    }
    const back = new URL(params.redirect_uri!);
    const refuse = (error: string) => {
      back.searchParams.set('error', error);
      if (params.state) back.searchParams.set('state', params.state);
      res.writeHead(302, { location: back.href }).end();
    };
    if (params.response_type !== 'code') return refuse('unsupported_response_type');
    if (params.code_challenge_method !== 'S256' || !/^[A-Za-z0-9_-]{43}$/.test(params.code_challenge ?? '')) return refuse('invalid_request');
    if (!(params.scope ?? '').split(' ').includes('openid')) return refuse('invalid_scope');
    const hidden = Object.entries(params)
      .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
      .join('');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>Test identity provider</title></head><body><main>` +
        `<h1>Test identity provider</h1><form method="post" action="/login">${hidden}` +
        `<label for="email">Your email</label> <input id="email" name="email" type="email" required> <button type="submit">Sign in</button></form></main></body></html>`,
    );
  };

  const login = (res: ServerResponse, form: Record<string, string>) => {
    const { email, ...params } = form;
    if (params.client_id !== clientId || !redirectUris.includes(params.redirect_uri ?? '') || !email) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('bad login');
      return;
    }
    const code = randomBytes(24).toString('base64url');
    codes.set(code, { clientId, redirectUri: params.redirect_uri!, challenge: params.code_challenge!, nonce: params.nonce, email, expiresAt: Date.now() + CODE_TTL_MS });
    const back = new URL(params.redirect_uri!);
    back.searchParams.set('code', code);
    if (params.state) back.searchParams.set('state', params.state);
    res.writeHead(303, { location: back.href }).end();
  };

  const token = async (res: ServerResponse, form: Record<string, string>) => {
    const pending = codes.get(form.code ?? '');
    codes.delete(form.code ?? '');
    const invalid = (description: string) => send(res, 400, { error: 'invalid_grant', error_description: description });
    if (form.grant_type !== 'authorization_code') return send(res, 400, { error: 'unsupported_grant_type' });
    if (!pending || pending.expiresAt < Date.now()) return invalid('unknown or expired code');
    if (form.client_id !== pending.clientId || form.redirect_uri !== pending.redirectUri) return invalid('client or redirect_uri differs');
    if (createHash('sha256').update(form.code_verifier ?? '').digest('base64url') !== pending.challenge) return invalid('code_verifier does not match');
    const sub = `user-${createHash('sha256').update(pending.email).digest('hex').slice(0, 16)}`;
    const idToken = await new SignJWT({ email: pending.email, email_verified: true, ...(pending.nonce ? { nonce: pending.nonce } : {}) })
      .setProtectedHeader({ alg: 'RS256', kid: jwk.kid, typ: 'JWT' })
      .setIssuer(issuer)
      .setAudience(clientId)
      .setSubject(sub)
      .setIssuedAt()
      .setExpirationTime(`${ID_TOKEN_TTL_SECONDS}s`)
      .sign(privateKey);
    send(res, 200, { access_token: randomBytes(24).toString('base64url'), token_type: 'Bearer', expires_in: ID_TOKEN_TTL_SECONDS, id_token: idToken, scope: 'openid email profile' });
  };

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', issuer);
    const handle = async () => {
      if (req.method === 'OPTIONS') {
        res.writeHead(204, { 'access-control-allow-origin': '*', 'access-control-allow-methods': 'GET, POST', 'access-control-allow-headers': 'content-type, authorization' }).end();
        return;
      }
      if (req.method === 'GET' && url.pathname === '/.well-known/openid-configuration') {
        return send(res, 200, {
          issuer,
          authorization_endpoint: `${issuer}/authorize`,
          token_endpoint: `${issuer}/token`,
          jwks_uri: `${issuer}/jwks`,
          response_types_supported: ['code'],
          subject_types_supported: ['public'],
          id_token_signing_alg_values_supported: ['RS256'],
          scopes_supported: ['openid', 'email', 'profile'],
          grant_types_supported: ['authorization_code'],
          token_endpoint_auth_methods_supported: ['none'],
          code_challenge_methods_supported: ['S256'],
        });
      }
      if (req.method === 'GET' && url.pathname === '/jwks') return send(res, 200, { keys: [jwk] });
      if (req.method === 'GET' && url.pathname === '/authorize') {
        const params = Object.fromEntries(url.searchParams);
        requests.push({ path: '/authorize', params });
        return authorize(res, params);
      }
      if (req.method === 'POST' && url.pathname === '/login') return login(res, await readForm(req));
      if (req.method === 'POST' && url.pathname === '/token') {
        const form = await readForm(req);
        requests.push({ path: '/token', params: form });
        return token(res, form);
      }
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    };
    handle().catch((error: unknown) => res.writeHead(500).end(String(error)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    issuer,
    jwksUrl: `${issuer}/jwks`,
    clientId,
    redirectUris,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
