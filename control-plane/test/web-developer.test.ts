import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, signInWebUser } from '../../test/support/accounts.ts';
import { json, type Json } from '../../test/support/http.ts';
import { expectDocumentedResponses, type RecordedResponse } from '../../test/support/openapi.ts';
import { startTestService, type TestService } from '../../test/support/test-service.ts';

/** The developer page's endpoints: API keys made, listed and revoked with an ID token, and the API credit ledger. */
describe('API keys and credits for the signed-in web user', () => {
  let service: TestService;
  const recorded: RecordedResponse[] = [];

  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(() => service?.stop());

  const call = async (operation: string, method: string, path: string, token: string | undefined, body?: unknown) => {
    const response = await fetch(`${service.baseUrl}${path}`, {
      method,
      headers: { ...(token ? { Authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    const parsed: Json = text ? JSON.parse(text) : undefined;
    recorded.push({ operation, status: response.status, body: parsed });
    return { status: response.status, body: parsed, headers: response.headers };
  };

  it('creates a key shown once, lists it by prefix with its last use, and revokes it for good', async () => {
    const { token } = await signInWebUser(service, 'developer@example.com');
    expect((await call('listWebApiKeys', 'GET', '/user/api-keys', token)).body).toEqual({ keys: [] });

    const created = await call('createWebApiKey', 'POST', '/user/api-keys', token, { name: ' laptop ', scopes: ['videos:read'] });
    expect(created.status).toBe(201);
    expect(created.headers.get('cache-control')).toBe('no-store');
    const { key, api_key: record } = created.body;
    expect(key).toMatch(/^psk_live_/);
    expect(record).toMatchObject({ name: 'laptop', scopes: ['videos:read'], last_used_at: null, revoked_at: null });
    expect(key.startsWith(record.prefix)).toBe(true);

    // The key works on /v1, read-only; the list never shows it again, only its prefix and last use.
    const me = await fetch(`${service.baseUrl}/v1/me`, { headers: { Authorization: `Bearer ${key}` } });
    expect(me.status).toBe(200);
    expect((await json(me)).scopes).toEqual(['videos:read']);
    const listed = await call('listWebApiKeys', 'GET', '/user/api-keys', token);
    expect(JSON.stringify(listed.body)).not.toContain(key);
    expect(listed.body.keys).toHaveLength(1);
    expect(listed.body.keys[0].last_used_at).not.toBeNull();

    expect((await call('revokeWebApiKey', 'DELETE', `/user/api-keys/${record.id}`, token)).status).toBe(204);
    expect((await fetch(`${service.baseUrl}/v1/me`, { headers: { Authorization: `Bearer ${key}` } })).status).toBe(401);
    expect((await call('listWebApiKeys', 'GET', '/user/api-keys', token)).body.keys[0].revoked_at).not.toBeNull();
    const again = await call('revokeWebApiKey', 'DELETE', `/user/api-keys/${record.id}`, token);
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe('not_found');
  });

  it('refuses bad names and scopes, other people\'s keys, and every credential but an ID token', async () => {
    const { token } = await signInWebUser(service, 'careful@example.com');
    for (const body of [{ name: '', scopes: ['videos:read'] }, { name: 'x', scopes: [] }, { name: 'x', scopes: ['videos:write'] }, { name: 'x', scopes: ['admin'] }, { name: 'x'.repeat(101), scopes: ['videos:read'] }]) {
      const refused = await call('createWebApiKey', 'POST', '/user/api-keys', token, body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body.error.code).toBe('invalid_request');
    }
    const readWrite = await call('createWebApiKey', 'POST', '/user/api-keys', token, { name: 'ci', scopes: ['videos:write', 'videos:read'] });
    expect(readWrite.body.api_key.scopes).toEqual(['videos:read', 'videos:write']);

    // Someone else's key is not found, like a missing one; a malformed id is a 400.
    const other = await signInWebUser(service, 'other@example.com');
    expect((await call('revokeWebApiKey', 'DELETE', `/user/api-keys/${readWrite.body.api_key.id}`, other.token)).status).toBe(404);
    expect((await call('revokeWebApiKey', 'DELETE', '/user/api-keys/not-a-uuid', token)).status).toBe(400);

    // No API key can make another key (nor read the keys): the developer endpoints take ID tokens only.
    const apiKey = readWrite.body.key as string;
    for (const [operation, method, path] of [['createWebApiKey', 'POST', '/user/api-keys'], ['listWebApiKeys', 'GET', '/user/api-keys'], ['getWebApiCredits', 'GET', '/user/credits']] as const) {
      const refused = await call(operation, method, path, apiKey, method === 'POST' ? { name: 'sneaky', scopes: ['videos:read'] } : undefined);
      expect(refused.status, `${method} ${path}`).toBe(401);
      expect((await call(operation, method, path, undefined, method === 'POST' ? { name: 'x', scopes: ['videos:read'] } : undefined)).status).toBe(401);
    }
    expect((await call('listWebApiKeys', 'GET', '/user/api-keys', token)).body.keys).toHaveLength(1);
  });

  it('answers the API credit balance and ledger, newest first', async () => {
    const account = await createTestAccount(service.context, 'ledger@example.com', 5);
    await service.context.services.credits.grant(account.id, 3);
    const { token } = await signInWebUser(service, 'ledger@example.com');
    const credits = await call('getWebApiCredits', 'GET', '/user/credits', token);
    expect(credits.body).toMatchObject({ balance: 8, credits_per_video: 1 });
    expect(credits.body.recent.map((entry: Json) => [entry.delta, entry.reason])).toEqual([
      [3, 'grant'],
      [5, 'grant'],
    ]);
    expect((await call('getWebApiCredits', 'GET', '/user/credits?limit=1', token)).body.recent).toHaveLength(1);
    expect((await call('getWebApiCredits', 'GET', '/user/credits?limit=0', token)).status).toBe(400);
  });

  it('answers only what /openapi.json documents', async () => {
    const checked = await expectDocumentedResponses(service.baseUrl, recorded);
    expect([...checked]).toEqual(expect.arrayContaining(['listWebApiKeys 200', 'createWebApiKey 201', 'createWebApiKey 400', 'revokeWebApiKey 404', 'getWebApiCredits 200', 'getWebApiCredits 401']));
  });
});
