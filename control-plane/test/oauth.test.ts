import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../test/support/test-service.ts';
import { createTestAccount } from '../../test/support/accounts.ts';
import { json, type Json } from '../../test/support/http.ts';
import { authorizeAs, devIdToken, readAuthorizationRequest, sendAuthorizationDecision } from '../../test/support/oauth-authorization.ts';
import { expectDocumentedResponses, type RecordedResponse } from '../../test/support/openapi.ts';

const REDIRECT_URI = 'http://127.0.0.1:53682/callback';
const OTHER_REDIRECT_URI = 'https://client.example/oauth/callback';
const insecure = { [oauth.allowInsecureRequests]: true };

/** An OAuth client driven by oauth4webapi; the person decides through the endpoints the web app's authorization page calls. */
function oauthClient(baseUrl: string) {
  let as: oauth.AuthorizationServer;
  const discover = async () => {
    const issuer = new URL(baseUrl);
    as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
    return as;
  };

  const register = async (metadata: Partial<oauth.Client> = {}): Promise<oauth.Client> =>
    oauth.processDynamicClientRegistrationResponse(
      await oauth.dynamicClientRegistrationRequest(as, { redirect_uris: [REDIRECT_URI], client_name: 'Pet Test Client', token_endpoint_auth_method: 'none', ...metadata }, insecure),
    ) as Promise<oauth.Client>;

  const authorizationUrl = async (client: oauth.Client, params: Record<string, string | undefined> = {}) => {
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint!);
    const all: Record<string, string | undefined> = {
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: REDIRECT_URI,
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      ...params,
    };
    for (const [name, value] of Object.entries(all)) if (value !== undefined) url.searchParams.set(name, value);
    return { url, verifier, state: all.state };
  };

  /** The whole front channel: the page checks the request, the person signs in and decides, and is sent back to the client. */
  const authorize = async (
    client: oauth.Client,
    options: { params?: Record<string, string | undefined>; decision?: 'allow' | 'deny'; email?: string } = {},
  ) => {
    const { url, verifier, state } = await authorizationUrl(client, options.params);
    const callback = await authorizeAs(baseUrl, url, options.email ?? 'owner@example.com', options.decision);
    return { callback, verifier, state };
  };

  const exchange = async (client: oauth.Client, callback: URL, verifier: string, state: string | undefined, redirectUri = REDIRECT_URI) => {
    const params = oauth.validateAuthResponse(as, client, callback, state);
    return oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, redirectUri, verifier, insecure));
  };

  const signIn = async (client: oauth.Client, params?: Record<string, string | undefined>) => {
    const { callback, verifier, state } = await authorize(client, { params });
    return exchange(client, callback, verifier, state);
  };

  const refresh = async (client: oauth.Client, refreshToken: string, parameters?: Record<string, string>) =>
    oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), refreshToken, { ...insecure, additionalParameters: parameters }));

  return { discover, register, authorizationUrl, authorize, exchange, signIn, refresh };
}

describe('OAuth 2.1 authorization server', () => {
  let service: TestService;
  let client: ReturnType<typeof oauthClient>;
  let registered: oauth.Client;
  const me = (accessToken: string) => fetch(`${service.baseUrl}/v1/me`, { headers: { Authorization: `Bearer ${accessToken}` } });
  const tokenRequest = (body: Record<string, string>, asJson = false) =>
    fetch(`${service.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': asJson ? 'application/json' : 'application/x-www-form-urlencoded' },
      body: asJson ? JSON.stringify(body) : new URLSearchParams(body),
    });

  beforeAll(async () => {
    // Every request here comes from one address: the sign-in limit (20 a minute by default) is tested in hostile-input.test.ts.
    service = await startTestService({ env: { RATE_LIMIT_SIGN_INS_PER_MINUTE: '100000' } });
    client = oauthClient(service.baseUrl);
    await client.discover();
    registered = await client.register();
  });
  afterAll(() => service.stop());

  it('publishes authorization server (RFC 8414) and protected resource (RFC 9728) metadata', async () => {
    const base = service.baseUrl;
    const as = await client.discover();
    expect(as).toMatchObject({
      issuer: base,
      authorization_endpoint: `${base}/oauth/authorize`,
      token_endpoint: `${base}/oauth/token`,
      registration_endpoint: `${base}/oauth/register`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
      scopes_supported: ['videos:read', 'videos:write'],
      authorization_response_iss_parameter_supported: true,
    });

    // A client starts from the 401 challenge on /v1 and follows it to the authorization server.
    const challenge = (await fetch(`${base}/v1/me`)).headers.get('www-authenticate')!;
    const metadataUrl = /resource_metadata="([^"]+)"/.exec(challenge)![1]!;
    const resource = await json(fetch(metadataUrl));
    expect(resource).toMatchObject({
      resource: base,
      authorization_servers: [base],
      scopes_supported: ['videos:read', 'videos:write'],
      bearer_methods_supported: ['header'],
      resource_documentation: `${base}/docs`,
    });
    for (const suffix of ['/mcp', '/v1']) {
      const variant = await json(fetch(`${base}/.well-known/oauth-protected-resource${suffix}`));
      expect(variant).toMatchObject({ resource: `${base}${suffix}`, authorization_servers: [base] });
    }
  });

  it('registers public clients dynamically (RFC 7591) and refuses unsafe redirect URIs', async () => {
    expect(registered).toMatchObject({
      client_id: expect.stringMatching(/^psc_/),
      client_name: 'Pet Test Client',
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      client_id_issued_at: expect.any(Number),
    });
    const register = (body: unknown) =>
      fetch(`${service.baseUrl}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

    const unnamed = await register({ redirect_uris: [OTHER_REDIRECT_URI] });
    expect(unnamed.status).toBe(201);
    expect(unnamed.headers.get('cache-control')).toBe('no-store');
    expect((await json(unnamed)).client_name).toBe('Unnamed application');

    for (const redirectUris of [['http://client.example/callback'], ['https://client.example/cb#fragment'], ['javascript:alert(1)'], ['not a url'], [], undefined]) {
      const response = await register({ redirect_uris: redirectUris, client_name: 'Bad' });
      expect(response.status, JSON.stringify(redirectUris)).toBe(400);
      expect(await json(response)).toMatchObject({ error: 'invalid_redirect_uri', error_description: expect.any(String) });
    }
    for (const metadata of [{ token_endpoint_auth_method: 'client_secret_basic' }, { grant_types: ['client_credentials'] }, { response_types: ['token'] }]) {
      const response = await register({ redirect_uris: [REDIRECT_URI], ...metadata });
      expect(response.status).toBe(400);
      expect((await json(response)).error).toBe('invalid_client_metadata');
    }
  });

  it('runs the authorization code flow with PKCE and the token works on /v1 with its scopes', async () => {
    const odd = 'state with spaces & ünïcode/?=';
    const { url } = await client.authorizationUrl(registered, { scope: 'videos:read videos:write', state: odd, resource: service.baseUrl });
    // The authorization endpoint is a page of the web app, never framed; it shows what the request asks in words.
    const page = await fetch(url, { headers: { accept: 'text/html' }, redirect: 'manual' });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(await page.text()).toContain('<div id="root">');
    const checked = await readAuthorizationRequest(service.baseUrl, url);
    expect(checked.status).toBe(200);
    expect(checked.headers.get('cache-control')).toBe('no-store');
    expect(await json(checked)).toEqual({
      client_id: registered.client_id,
      client_name: 'Pet Test Client',
      redirect_uri: REDIRECT_URI,
      redirect_origin: new URL(REDIRECT_URI).origin,
      redirect_is_local: true,
      scopes: [
        { scope: 'videos:read', description: expect.stringContaining('Read') },
        { scope: 'videos:write', description: expect.stringContaining('Create') },
      ],
      resource_name: 'petsing API',
    });

    const { callback, verifier, state } = await client.authorize(registered, { params: { scope: 'videos:read videos:write', state: odd, resource: service.baseUrl } });
    expect(callback.origin + callback.pathname).toBe(REDIRECT_URI);
    expect(state).toBe(odd);
    expect(callback.searchParams.get('state')).toBe(odd);
    expect(callback.searchParams.get('iss')).toBe(service.baseUrl);

    const tokens = await client.exchange(registered, callback, verifier, state);
    expect(tokens).toMatchObject({ token_type: 'bearer', expires_in: 3600, scope: 'videos:read videos:write' });
    expect(tokens.access_token).toMatch(/^pso_at_[A-Za-z0-9_-]{43}$/);
    expect(tokens.refresh_token).toMatch(/^pso_rt_[A-Za-z0-9_-]{43}$/);

    const account = await me(tokens.access_token);
    expect(account.status).toBe(200);
    const user = await service.context.services.users.resolve('owner@example.com');
    expect(await json(account)).toMatchObject({ user_id: user.id, scopes: ['videos:read', 'videos:write'] });

    const rows = await service.database.db.selectFrom('oauth_tokens').selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(tokens.access_token);
    expect(JSON.stringify(rows)).not.toContain(tokens.refresh_token);
    expect(rows.every((row) => row.resource === service.baseUrl)).toBe(true);
  });

  it('answers token requests with Cache-Control: no-store, accepts JSON bodies and allows browser clients', async () => {
    const preflight = await fetch(`${service.baseUrl}/oauth/token`, {
      method: 'OPTIONS',
      headers: { Origin: 'https://inspector.example', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');

    const { callback, verifier } = await client.authorize(registered);
    const response = await tokenRequest(
      { grant_type: 'authorization_code', client_id: registered.client_id, code: callback.searchParams.get('code')!, redirect_uri: REDIRECT_URI, code_verifier: verifier },
      true,
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(Object.keys(await json(response)).sort()).toEqual(['access_token', 'expires_in', 'refresh_token', 'scope', 'token_type']);
  });

  it('defaults to videos:read, so a token granted nothing more cannot write', async () => {
    const tokens = await client.signIn(registered);
    expect(tokens.scope).toBe('videos:read');
    expect((await json(me(tokens.access_token))).scopes).toEqual(['videos:read']);
  });

  it('rotates the refresh token on every use, and may narrow the scope', async () => {
    const first = await client.signIn(registered, { scope: 'videos:read videos:write' });
    const second = await client.refresh(registered, first.refresh_token!);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(second.access_token).not.toBe(first.access_token);
    expect((await json(me(second.access_token))).scopes).toEqual(['videos:read', 'videos:write']);

    const narrowed = await client.refresh(registered, second.refresh_token!, { scope: 'videos:read' });
    expect(narrowed.scope).toBe('videos:read');
    expect((await json(me(narrowed.access_token))).scopes).toEqual(['videos:read']);
    // The refresh token keeps the original grant (RFC 6749 §6).
    const widenedAgain = await client.refresh(registered, narrowed.refresh_token!);
    expect(widenedAgain.scope).toBe('videos:read videos:write');

    await expect(client.refresh(registered, widenedAgain.refresh_token!, { scope: 'videos:read videos:admin' })).rejects.toMatchObject({ error: 'invalid_scope' });
  });

  it('revokes the whole family when a rotated-out refresh token is reused', async () => {
    const first = await client.signIn(registered);
    const second = await client.refresh(registered, first.refresh_token!);
    expect((await me(second.access_token)).status).toBe(200);

    await expect(client.refresh(registered, first.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant', status: 400 });
    expect((await me(second.access_token)).status).toBe(401);
    expect((await me(first.access_token)).status).toBe(401);
    await expect(client.refresh(registered, second.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('accepts a code once; a replay is refused and revokes the tokens issued from it', async () => {
    const { callback, verifier, state } = await client.authorize(registered);
    const tokens = await client.exchange(registered, callback, verifier, state);
    const refreshed = await client.refresh(registered, tokens.refresh_token!);
    expect((await me(refreshed.access_token)).status).toBe(200);

    await expect(client.exchange(registered, callback, verifier, state)).rejects.toMatchObject({ error: 'invalid_grant' });
    expect((await me(tokens.access_token)).status).toBe(401);
    expect((await me(refreshed.access_token)).status).toBe(401);
    await expect(client.refresh(registered, refreshed.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('refuses a wrong code verifier, and the code is spent afterwards', async () => {
    const { callback, verifier, state } = await client.authorize(registered);
    await expect(client.exchange(registered, callback, oauth.generateRandomCodeVerifier(), state)).rejects.toMatchObject({ error: 'invalid_grant' });
    await expect(client.exchange(registered, callback, verifier, state)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('refuses a redirect URI other than the one the code was issued for', async () => {
    const twoUris = await client.register({ redirect_uris: [REDIRECT_URI, OTHER_REDIRECT_URI] });
    const { callback, verifier, state } = await client.authorize(twoUris);
    await expect(client.exchange(twoUris, callback, verifier, state, OTHER_REDIRECT_URI)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('refuses a code presented by another client', async () => {
    const other = await client.register();
    const { callback, verifier, state } = await client.authorize(registered);
    await expect(client.exchange(other, callback, verifier, state)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('shows an error, never a redirect, for an unknown client or unregistered redirect URI', async () => {
    const idToken = await devIdToken(service.baseUrl, 'owner@example.com');
    for (const params of [{ redirect_uri: 'https://attacker.example/steal' }, { client_id: 'psc_unknown' }, { client_id: undefined }]) {
      const { url } = await client.authorizationUrl(registered, params);
      for (const response of [await readAuthorizationRequest(service.baseUrl, url), await sendAuthorizationDecision(service.baseUrl, url, 'allow', `Bearer ${idToken}`)]) {
        expect(response.status, JSON.stringify(params)).toBe(400);
        expect(response.headers.get('location')).toBeNull();
        const body = await json(response);
        expect(body).toMatchObject({ error: 'invalid_request', error_description: expect.any(String) });
        expect(body.redirect_to).toBeUndefined();
      }
    }
  });

  it('refuses a plain or missing PKCE challenge, unknown scopes and foreign resources by redirect', async () => {
    const cases: [Record<string, string | undefined>, string][] = [
      [{ code_challenge_method: 'plain' }, 'invalid_request'],
      [{ code_challenge_method: undefined }, 'invalid_request'],
      [{ code_challenge: undefined }, 'invalid_request'],
      [{ response_type: 'token' }, 'unsupported_response_type'],
      [{ scope: 'videos:read admin' }, 'invalid_scope'],
      [{ resource: 'https://elsewhere.example/' }, 'invalid_target'],
    ];
    const idToken = await devIdToken(service.baseUrl, 'owner@example.com');
    for (const [params, error] of cases) {
      const { url, state } = await client.authorizationUrl(registered, params);
      // Checked when the page opens, and again when a decision is sent anyway: no code is issued.
      for (const response of [await readAuthorizationRequest(service.baseUrl, url), await sendAuthorizationDecision(service.baseUrl, url, 'allow', `Bearer ${idToken}`)]) {
        expect(response.status, JSON.stringify(params)).toBe(400);
        const body = await json(response);
        expect(body.error).toBe(error);
        const location = new URL(body.redirect_to as string);
        expect(location.origin + location.pathname).toBe(REDIRECT_URI);
        expect(location.searchParams.get('error')).toBe(error);
        expect(location.searchParams.get('code')).toBeNull();
        expect(location.searchParams.get('state')).toBe(state);
        expect(location.searchParams.get('iss')).toBe(service.baseUrl);
      }
    }
  });

  it('tells the client access_denied when the person denies', async () => {
    const { callback, verifier, state } = await client.authorize(registered, { decision: 'deny' });
    expect(callback.searchParams.get('code')).toBeNull();
    expect(callback.searchParams.get('state')).toBe(state);
    await expect(client.exchange(registered, callback, verifier, state)).rejects.toMatchObject({ error: 'access_denied' });
  });

  it('takes a decision only with an ID token in the Authorization header: no cookie, API key or OAuth token approves', async () => {
    const { url } = await client.authorizationUrl(registered, { scope: 'videos:read' });
    const decide = (authorization: string | undefined, decision = 'allow') => sendAuthorizationDecision(service.baseUrl, url, decision, authorization);
    const recorded: RecordedResponse[] = [];
    const record = async (operation: string, response: Response) => {
      const body = await json(response);
      recorded.push({ operation, status: response.status, body });
      return body;
    };
    const account = await createTestAccount(service.context, 'keyholder@example.com', 0);
    const oauthToken = (await client.signIn(registered)).access_token;
    for (const authorization of [undefined, `Bearer ${account.readWrite}`, `Bearer ${oauthToken}`, 'Bearer not-a-token']) {
      const refused = await decide(authorization);
      expect(refused.status, authorization).toBe(401);
      expect(refused.headers.get('www-authenticate')).toContain('Bearer realm="petsing"');
      expect((await record('decideAuthorizationRequest', refused)).error).toMatchObject({ code: 'unauthorized' });
    }
    const cookieOnly = await fetch(`${service.baseUrl}/oauth/authorization-decision`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: 'session=anything' },
      body: new URLSearchParams({ ...Object.fromEntries(url.searchParams), decision: 'allow' }),
    });
    expect(cookieOnly.status).toBe(401);

    const idToken = `Bearer ${await devIdToken(service.baseUrl, 'owner@example.com')}`;
    const unknownDecision = await decide(idToken, 'approve');
    expect(unknownDecision.status).toBe(400);
    expect(await record('decideAuthorizationRequest', unknownDecision)).toMatchObject({ error: 'invalid_request', error_description: expect.stringContaining('allow') });
    const notJson = await fetch(`${service.baseUrl}/oauth/authorization-decision`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: idToken },
      body: '{"decision": ',
    });
    expect(notJson.status).toBe(400);
    expect((await json(notJson)).error).toBe('invalid_request');
    const allowed = await decide(idToken);
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get('cache-control')).toBe('no-store');
    expect(new URL((await record('decideAuthorizationRequest', allowed)).redirect_to as string).searchParams.get('code')).toMatch(/^pso_ac_/);
    await record('getAuthorizationRequest', await readAuthorizationRequest(service.baseUrl, url));
    await record('getAuthorizationRequest', await readAuthorizationRequest(service.baseUrl, (await client.authorizationUrl(registered, { scope: 'admin' })).url));
    await record('getAuthorizationRequest', await readAuthorizationRequest(service.baseUrl, (await client.authorizationUrl(registered, { client_id: 'psc_unknown' })).url));
    const checked = await expectDocumentedResponses(service.baseUrl, recorded);
    expect([...checked].sort()).toEqual([
      'decideAuthorizationRequest 200',
      'decideAuthorizationRequest 400',
      'decideAuthorizationRequest 401',
      'getAuthorizationRequest 200',
      'getAuthorizationRequest 400',
    ]);
  });

  it('issues the code to the ID token\'s account, creating it on a first sign-in', async () => {
    const { callback, verifier, state } = await client.authorize(registered, { email: 'New.Person@Example.com' });
    const tokens = await client.exchange(registered, callback, verifier, state);
    const user = await service.context.services.users.resolve('new.person@example.com');
    expect((await json(me(tokens.access_token))).user_id).toBe(user.id);
  });

  it('answers token endpoint misuse with RFC 6749 errors', async () => {
    const cases: [Record<string, string>, number, string][] = [
      [{ client_id: registered.client_id }, 400, 'invalid_request'],
      [{ grant_type: 'password', client_id: registered.client_id }, 400, 'unsupported_grant_type'],
      [{ grant_type: 'refresh_token', client_id: 'psc_unknown', refresh_token: 'pso_rt_x' }, 401, 'invalid_client'],
      [{ grant_type: 'refresh_token', client_id: registered.client_id }, 400, 'invalid_request'],
      [{ grant_type: 'refresh_token', client_id: registered.client_id, refresh_token: 'pso_rt_unknown' }, 400, 'invalid_grant'],
      [{ grant_type: 'authorization_code', client_id: registered.client_id, code: 'pso_ac_unknown', redirect_uri: REDIRECT_URI }, 400, 'invalid_request'],
      [
        { grant_type: 'authorization_code', client_id: registered.client_id, code: 'pso_ac_unknown', redirect_uri: REDIRECT_URI, code_verifier: oauth.generateRandomCodeVerifier() },
        400,
        'invalid_grant',
      ],
    ];
    for (const [body, status, error] of cases) {
      const response = await tokenRequest(body);
      expect(response.status, JSON.stringify(body)).toBe(status);
      expect(response.headers.get('cache-control')).toBe('no-store');
      const answer = await json(response);
      expect(answer).toEqual({ error, error_description: expect.any(String), message: answer.error_description });
    }
  });
  describe('bodies the endpoints cannot read (issue 14)', () => {
    const OVER_LIMIT = 33 * 1024;
    const post = (path: string, type: string | undefined, body: string) =>
      fetch(`${service.baseUrl}${path}`, { method: 'POST', headers: type ? { 'content-type': type } : {}, body });
    /** The RFC shape, never the shared `{"error":{code,…}}` one; returns the recorded response for the document check. */
    const expectOAuthError = async (response: Response, operation: string, status: number, error: string): Promise<RecordedResponse> => {
      expect(response.status).toBe(status);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(response.headers.get('cache-control')).toBe('no-store');
      const body = await json(response);
      expect(body).toEqual({ error, error_description: expect.any(String), message: body.error_description });
      return { operation, status, body };
    };

    it('/oauth/register answers malformed, mistyped and oversized bodies as RFC 7591 errors, as documented', async () => {
      const register = '/oauth/register';
      const valid = JSON.stringify({ redirect_uris: [REDIRECT_URI] });
      const cases: [string | undefined, string, number, string][] = [
        ['application/json', '{"redirect_uris": [', 400, 'invalid_client_metadata'],
        ['text/plain', valid, 400, 'invalid_client_metadata'],
        ['application/x-www-form-urlencoded', `redirect_uris=${encodeURIComponent(REDIRECT_URI)}`, 400, 'invalid_client_metadata'],
        [undefined, '', 400, 'invalid_client_metadata'],
        ['application/json', '[]', 400, 'invalid_client_metadata'],
        ['application/json', JSON.stringify({ redirect_uris: [REDIRECT_URI], client_name: 5 }), 400, 'invalid_client_metadata'],
        ['application/json', JSON.stringify({ redirect_uris: REDIRECT_URI }), 400, 'invalid_redirect_uri'],
        ['application/json', JSON.stringify({ redirect_uris: [REDIRECT_URI], client_name: 'x'.repeat(OVER_LIMIT) }), 413, 'invalid_client_metadata'],
        ['application/json; charset=latin1', valid, 415, 'invalid_client_metadata'],
      ];
      const recorded: RecordedResponse[] = [];
      for (const [type, body, status, error] of cases) {
        recorded.push(await expectOAuthError(await post(register, type, body), 'registerOAuthClient', status, error));
      }
      const wrongType = recorded[1]!.body as Json;
      expect(wrongType.error_description).toContain('application/json');
      const checked = await expectDocumentedResponses(service.baseUrl, recorded);
      expect([...checked].sort()).toEqual(['registerOAuthClient 400', 'registerOAuthClient 413', 'registerOAuthClient 415']);
    });

    it('/oauth/token answers malformed, mistyped and oversized bodies as RFC 6749 invalid_request, as documented', async () => {
      const token = '/oauth/token';
      const form = 'application/x-www-form-urlencoded';
      const fields = `grant_type=refresh_token&client_id=${registered.client_id}&refresh_token=pso_rt_x`;
      const cases: [string | undefined, string, number, string][] = [
        ['application/json', '{"grant_type": ', 400, 'not valid JSON'],
        ['text/plain', fields, 400, 'application/x-www-form-urlencoded'],
        [undefined, '', 400, 'application/x-www-form-urlencoded'],
        ['application/json', '["refresh_token"]', 400, 'application/x-www-form-urlencoded'],
        ['application/json', JSON.stringify({ grant_type: 5, client_id: registered.client_id }), 400, 'grant_type must be a single string'],
        ['application/json', JSON.stringify({ grant_type: 'refresh_token', client_id: [registered.client_id] }), 400, 'client_id must be a single string'],
        [form, `${fields}&grant_type=authorization_code`, 400, 'grant_type must be a single string'],
        [form, `${fields}&padding=${'x'.repeat(OVER_LIMIT)}`, 413, 'larger'],
        [form, `${fields}${Array.from({ length: 50 }, (_, index) => `&p${index}=1`).join('')}`, 413, 'parameters'],
        [`${form}; charset=latin1`, fields, 415, 'charset'],
      ];
      const recorded: RecordedResponse[] = [];
      for (const [type, body, status, description] of cases) {
        const answer = await expectOAuthError(await post(token, type, body), 'requestOAuthToken', status, 'invalid_request');
        expect((answer.body as Json).error_description, `${type} ${body.slice(0, 60)}`).toContain(description);
        recorded.push(answer);
      }
      const checked = await expectDocumentedResponses(service.baseUrl, recorded);
      expect([...checked].sort()).toEqual(['requestOAuthToken 400', 'requestOAuthToken 413', 'requestOAuthToken 415']);
    });
  });

  describe('token audience (RFC 8707)', () => {
    const mcp = (accessToken: string) =>
      fetch(`${service.baseUrl}/mcp`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${accessToken}`, 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
    const expectRefused = async (response: Response, metadataPath: string, resource: string) => {
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${service.baseUrl}${metadataPath}", error="invalid_token"`);
      const body = await json(response);
      expect(body.error).toMatchObject({ code: 'unauthorized', hint: expect.stringContaining(`resource=${resource}`) });
    };

    it('accepts a token for /v1 only at /v1, and one for /mcp only at /mcp', async () => {
      const base = service.baseUrl;
      const forApi = await client.signIn(registered, { resource: `${base}/v1` });
      expect((await me(forApi.access_token)).status).toBe(200);
      await expectRefused(await mcp(forApi.access_token), '/.well-known/oauth-protected-resource/mcp', `${base}/mcp`);

      const forMcp = await client.signIn(registered, { resource: `${base}/mcp` });
      const listed = await mcp(forMcp.access_token);
      expect(listed.status).toBe(200);
      expect((await json(listed)).result.tools.length).toBeGreaterThan(0);
      await expectRefused(await me(forMcp.access_token), '/.well-known/oauth-protected-resource', `${base}/v1`);

      // A refresh keeps the audience of its grant.
      const refreshed = await client.refresh(registered, forMcp.refresh_token!);
      expect((await mcp(refreshed.access_token)).status).toBe(200);
      expect((await me(refreshed.access_token)).status).toBe(401);
      await expect(client.refresh(registered, refreshed.refresh_token!, { resource: `${base}/v1` })).rejects.toMatchObject({ error: 'invalid_target' });
    });

    it('binds a token requested without resource, or for the base URL, to the /v1 API, the default resource', async () => {
      for (const resource of [undefined, service.baseUrl]) {
        const tokens = await client.signIn(registered, { resource });
        expect((await me(tokens.access_token)).status, String(resource)).toBe(200);
        await expectRefused(await mcp(tokens.access_token), '/.well-known/oauth-protected-resource/mcp', `${service.baseUrl}/mcp`);
      }
      // An unbound grant may still be bound to /mcp at the token endpoint (RFC 8707 §2.2).
      const { callback, verifier, state } = await client.authorize(registered);
      const code = oauth.validateAuthResponse(await client.discover(), registered, callback, state).get('code')!;
      const bound = await tokenRequest({ grant_type: 'authorization_code', client_id: registered.client_id, code, redirect_uri: REDIRECT_URI, code_verifier: verifier, resource: `${service.baseUrl}/mcp` });
      expect(bound.status).toBe(200);
      const tokens = await json(bound);
      expect((await mcp(tokens.access_token)).status).toBe(200);
      expect((await me(tokens.access_token)).status).toBe(401);
    });

    it('names each resource in its protected-resource metadata', async () => {
      const metadata = async (suffix: string) => json(fetch(`${service.baseUrl}/.well-known/oauth-protected-resource${suffix}`));
      expect(await metadata('/mcp')).toMatchObject({ resource: `${service.baseUrl}/mcp`, resource_name: 'petsing MCP server' });
      expect(await metadata('/v1')).toMatchObject({ resource: `${service.baseUrl}/v1`, resource_name: 'petsing API' });
      expect(await metadata('')).toMatchObject({ resource: service.baseUrl, resource_name: 'petsing API' });
    });
  });
});

describe('OAuth lifetimes', () => {
  let service: TestService;
  let client: ReturnType<typeof oauthClient>;
  let registered: oauth.Client;
  const me = (accessToken: string) => fetch(`${service.baseUrl}/v1/me`, { headers: { Authorization: `Bearer ${accessToken}` } });
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  beforeAll(async () => {
    service = await startTestService({ env: { OAUTH_CODE_TTL_SECONDS: '1', OAUTH_ACCESS_TOKEN_TTL_SECONDS: '1', RATE_LIMIT_SIGN_INS_PER_MINUTE: '100000' } });
    client = oauthClient(service.baseUrl);
    await client.discover();
    registered = await client.register();
  });
  afterAll(() => service.stop());

  it('refuses an expired authorization code', async () => {
    const { callback, verifier, state } = await client.authorize(registered);
    await sleep(1_200);
    await expect(client.exchange(registered, callback, verifier, state)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('answers an expired access token with 401, and the refresh token still gets a fresh one', async () => {
    const tokens = await client.signIn(registered);
    expect(tokens.expires_in).toBe(1);
    await sleep(1_200);
    const expired = await me(tokens.access_token);
    expect(expired.status).toBe(401);
    expect(expired.headers.get('www-authenticate')).toContain('error="invalid_token"');
    const refreshed = await client.refresh(registered, tokens.refresh_token!);
    expect((await me(refreshed.access_token)).status).toBe(200);
  });
});
