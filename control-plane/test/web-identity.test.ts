import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, exportSPKI, generateKeyPair, SignJWT, type JWK, type CryptoKey } from 'jose';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDevIdentityKeys, mintDevIdToken } from '../src/services/dev-identity.ts';
import { startTestService, type TestService } from '../../test/support/test-service.ts';
import { json } from '../../test/support/http.ts';

const ISSUER = 'https://idp.example.test/';
const AUDIENCE = 'petsing-web';

/** A stand-in OpenID Connect provider: it serves its JWKS over HTTP and counts how often it is fetched. */
async function startIdentityProvider() {
  const keys: { kid: string; alg: string; privateKey: CryptoKey; publicJwk: JWK }[] = [];
  const addKey = async (kid: string, alg: 'RS256' | 'ES256') => {
    const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
    const key = { kid, alg, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' }, publicKey };
    keys.push(key);
    return key;
  };
  let jwksFetches = 0;
  const server: Server = createServer((req, res) => {
    if (req.url !== '/jwks') {
      res.writeHead(404).end();
      return;
    }
    jwksFetches++;
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ keys: keys.map((key) => key.publicJwk) }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const sign = (
    key: { kid: string; alg: string; privateKey: CryptoKey },
    claims: Record<string, unknown> = {},
    options: { issuer?: string; audience?: string; subject?: string; expiresIn?: string; notBefore?: string } = {},
  ) => {
    const jwt = new SignJWT({ email: 'pet.owner@example.com', email_verified: true, ...claims })
      .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' })
      .setIssuer(options.issuer ?? ISSUER)
      .setAudience(options.audience ?? AUDIENCE)
      .setSubject(options.subject ?? 'user-1')
      .setIssuedAt()
      .setExpirationTime(options.expiresIn ?? '10m');
    if (options.notBefore) jwt.setNotBefore(options.notBefore);
    return jwt.sign(key.privateKey);
  };
  return {
    jwksUrl: `http://127.0.0.1:${port}/jwks`,
    addKey,
    sign,
    fetches: () => jwksFetches,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const base64url = (value: string | Buffer) => Buffer.from(value).toString('base64url');

describe('web sign-in with an external OpenID Connect provider', () => {
  let idp: Awaited<ReturnType<typeof startIdentityProvider>>;
  let rsaKey: Awaited<ReturnType<Awaited<ReturnType<typeof startIdentityProvider>>['addKey']>>;
  let service: TestService;
  const me = (token?: string) => fetch(`${service.baseUrl}/user/me`, { headers: token ? { Authorization: `Bearer ${token}` } : {} });

  beforeAll(async () => {
    idp = await startIdentityProvider();
    rsaKey = await idp.addKey('rsa-1', 'RS256');
    await idp.addKey('ec-1', 'ES256');
    service = await startTestService({
      env: { OIDC_ISSUER: ISSUER, OIDC_AUDIENCE: AUDIENCE, OIDC_JWKS_URL: idp.jwksUrl, OIDC_JWKS_COOLDOWN_SECONDS: '0' },
    });
  });
  afterAll(async () => {
    await service?.stop();
    await idp?.close();
  });

  it('creates the account on the first request and answers the account summary', async () => {
    const response = await me(await idp.sign(rsaKey, {}, { subject: 'first-user' }));
    expect(response.status).toBe(200);
    const body = await json(response);
    expect(body).toMatchObject({
      email: 'pet.owner@example.com',
      subscribed: false,
      subscription: { status: 'none', plan: null, current_period_end: null, cancel_at_period_end: false },
      free_credits: 2,
      api_credit_balance: 0,
      email_opt_out: false,
    });
    const reset = new Date(body.free_credits_reset_at);
    expect(reset.getUTCDate()).toBe(1);
    expect(reset.getTime()).toBeGreaterThan(Date.now());
    const row = await service.database.db.selectFrom('users').selectAll().where('id', '=', body.id).executeTakeFirstOrThrow();
    expect(row.identity_subject).toBe('first-user');

    // The same subject signs in again: same account, even with another email claim.
    const again = await json(me(await idp.sign(rsaKey, { email: 'renamed@example.com' }, { subject: 'first-user' })));
    expect(again.id).toBe(body.id);
  });

  it('accepts every key of the provider (RS256 and ES256) and caches the key set', async () => {
    const ecKey = await idp.addKey('ec-2', 'ES256');
    const before = idp.fetches();
    for (let i = 0; i < 5; i++) expect((await me(await idp.sign(rsaKey, { email: 'cache@example.com' }, { subject: 'cache-user' }))).status).toBe(200);
    expect(idp.fetches()).toBe(before);
    // A key published after the last fetch: the unknown kid triggers one refresh.
    expect((await me(await idp.sign(ecKey, { email: 'ec@example.com' }, { subject: 'ec-user' }))).status).toBe(200);
    expect(idp.fetches()).toBe(before + 1);
  });

  it('refuses forged, misdirected and stale tokens with 401', async () => {
    const valid = await idp.sign(rsaKey, {}, { subject: 'victim' });
    const [header, payload, signature] = valid.split('.');
    const spki = await exportSPKI(rsaKey.publicKey);
    const { createHmac } = await import('node:crypto');
    const hmacHeader = base64url(JSON.stringify({ alg: 'HS256', kid: 'rsa-1', typ: 'JWT' }));
    const confused = `${hmacHeader}.${payload}.${createHmac('sha256', spki).update(`${hmacHeader}.${payload}`).digest('base64url')}`;
    const unsigned = `${base64url(JSON.stringify({ alg: 'none', typ: 'JWT' }))}.${payload}.`;
    const tampered = `${header}.${base64url(JSON.stringify({ ...JSON.parse(Buffer.from(payload!, 'base64url').toString()), sub: 'attacker' }))}.${signature}`;
    const stranger = await generateKeyPair('RS256');
    const foreignKey = await new SignJWT({ email: 'x@example.com', email_verified: true })
      .setProtectedHeader({ alg: 'RS256', kid: 'rsa-1' }).setIssuer(ISSUER).setAudience(AUDIENCE).setSubject('victim').setIssuedAt().setExpirationTime('10m')
      .sign(stranger.privateKey);
    const devKeys = await loadDevIdentityKeys(service.env.DATA_DIR!);

    const refused: Record<string, string> = {
      'alg none': unsigned,
      'HS256 signed with the public key': confused,
      'tampered payload': tampered,
      'signed by a key the provider does not publish': foreignKey,
      'wrong issuer': await idp.sign(rsaKey, {}, { issuer: 'https://evil.example.test/' }),
      'wrong audience': await idp.sign(rsaKey, {}, { audience: 'another-app' }),
      expired: await idp.sign(rsaKey, {}, { expiresIn: '-5m' }),
      'not yet valid': await idp.sign(rsaKey, {}, { notBefore: '10m' }),
      'development provider token': await mintDevIdToken(devKeys, { baseUrl: service.baseUrl, email: 'dev@example.com' }),
      'not a JWT': 'psk_live_notanidtoken',
    };
    for (const [name, token] of Object.entries(refused)) {
      const response = await me(token);
      expect(response.status, name).toBe(401);
      expect(response.headers.get('www-authenticate'), name).toContain('error="invalid_token"');
      const body = await json(response);
      expect(body.error.code, name).toBe('unauthorized');
      expect(typeof body.message, name).toBe('string');
    }
    const missing = await me();
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer realm="petsing"');
    expect(await service.database.db.selectFrom('users').select('id').where('identity_subject', 'in', ['victim', 'attacker']).execute()).toEqual([]);
  });

  it('answers 404 when the token has no verified email and so no account can exist', async () => {
    const response = await me(await idp.sign(rsaKey, { email_verified: false }, { subject: 'unverified' }));
    expect(response.status).toBe(404);
    expect((await json(response)).error.code).toBe('not_found');
  });

  it('links an account an operator created by email to the first sign-in', async () => {
    const operatorMade = await service.context.services.users.create({ email: 'linked@example.com' });
    const body = await json(me(await idp.sign(rsaKey, { email: 'Linked@Example.com' }, { subject: 'linked-subject' })));
    expect(body.id).toBe(operatorMade.id);
    // Another subject with the same email cannot take the account over.
    const other = await me(await idp.sign(rsaKey, { email: 'linked@example.com' }, { subject: 'other-subject' }));
    expect(other.status).toBe(409);
  });

  it('creates exactly one account when a new user fires parallel first requests', async () => {
    const token = await idp.sign(rsaKey, { email: 'racer@example.com' }, { subject: 'racer' });
    const responses = await Promise.all(Array.from({ length: 10 }, () => me(token)));
    expect(responses.map((response) => response.status)).toEqual(Array(10).fill(200));
    const ids = new Set(await Promise.all(responses.map(async (response) => (await json(response)).id)));
    expect(ids.size).toBe(1);
    expect(await service.database.db.selectFrom('users').select('id').where('email', '=', 'racer@example.com').execute()).toHaveLength(1);
  });
});

describe('web sign-in with the development identity provider (embedded default)', () => {
  let service: TestService;
  let token: string;
  let userId: string;
  const authorized = (path: string) => fetch(`${service.baseUrl}${path}`, { headers: { Authorization: `Bearer ${token}` } });

  beforeAll(async () => {
    service = await startTestService();
    token = await mintDevIdToken(await loadDevIdentityKeys(service.env.DATA_DIR!), { baseUrl: service.baseUrl, email: 'dev.user@example.com' });
    userId = (await json(authorized('/user/me'))).id;
  });
  afterAll(() => service?.stop());

  it('pages GET /user/videos newest first with the envelope and bounds', async () => {
    const db = service.database.db;
    for (let i = 0; i < 5; i++) {
      await db
        .insertInto('videos')
        .values({ user_id: userId, origin: 'web', payment: 'subscription', status: 'pending', has_watermark: i % 2 === 0, template_id: null, image_key: `videos/x${i}/image.png`, created_at: new Date(Date.UTC(2026, 0, 1 + i)) })
        .execute();
    }
    const first = await json(authorized('/user/videos?page=1&pageSize=2'));
    expect(first).toMatchObject({ page: 1, page_size: 2, total: 5, total_pages: 3, has_more: true });
    expect(first.videos.map((video: { created_at: string }) => video.created_at.slice(0, 10))).toEqual(['2026-01-05', '2026-01-04']);
    expect(first.videos[0]).toMatchObject({ status: 'pending', has_watermark: true, video_url: null, origin: 'web', error: null });
    const last = await json(authorized('/user/videos?page=3&pageSize=2'));
    expect(last.videos).toHaveLength(1);
    expect(last.has_more).toBe(false);
    const defaults = await json(authorized('/user/videos'));
    expect(defaults).toMatchObject({ page: 1, page_size: 10, total: 5 });
    for (const bad of ['page=0', 'pageSize=0', 'pageSize=101', 'page=abc', 'page=1.5']) {
      const response = await authorized(`/user/videos?${bad}`);
      expect(response.status, bad).toBe(400);
      expect((await json(response)).error.code, bad).toBe('invalid_request');
    }
  });

  it('reports free credits of the current month and a new month resets them', async () => {
    const db = service.database.db;
    const month = `${new Date().toISOString().slice(0, 7)}-01`;
    await db.updateTable('users').set({ free_credits: 0, free_credits_month: month }).where('id', '=', userId).execute();
    expect((await json(authorized('/user/me'))).free_credits).toBe(0);
    await db.updateTable('users').set({ free_credits_month: '2020-01-01' }).where('id', '=', userId).execute();
    expect((await json(authorized('/user/me'))).free_credits).toBe(2);
  });

  it('shows subscribers as subscribed', async () => {
    await service.database.db
      .updateTable('users')
      .set({ subscription_status: 'active', subscription_plan: 'annual', subscription_current_period_end: new Date('2027-01-01T00:00:00Z') })
      .where('id', '=', userId)
      .execute();
    expect(await json(authorized('/user/me'))).toMatchObject({
      subscribed: true,
      subscription: { status: 'active', plan: 'annual', current_period_end: '2027-01-01T00:00:00.000Z' },
    });
  });

  it('accepts the ID token on the status websocket', async () => {
    const socket = new WebSocket(`${service.baseUrl.replace(/^http/, 'ws')}/ws`, { headers: { Authorization: `Bearer ${token}` } });
    const first = await new Promise<{ type: string; user_id: string }>((resolve, reject) => {
      socket.once('message', (data) => resolve(JSON.parse(String(data))));
      socket.once('error', reject);
    });
    socket.close();
    expect(first).toEqual({ type: 'ready', user_id: userId });
  });

  it('refuses API keys on web-app endpoints', async () => {
    const { key } = await service.context.services.apiKeys.create({ userId, scopes: ['videos:read'] });
    const response = await fetch(`${service.baseUrl}/user/me`, { headers: { Authorization: `Bearer ${key}` } });
    expect(response.status).toBe(401);
  });
});
