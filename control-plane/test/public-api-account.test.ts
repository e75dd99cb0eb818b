import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../test/support/test-service.ts';
import { json } from '../../test/support/http.ts';
import { seedTemplates } from '../../test/support/templates.ts';

describe('/v1 account, credits and templates', () => {
  let service: TestService;
  let readWriteKey: string;
  let readOnlyKey: string;
  let userId: string;
  const get = (path: string, key?: string) =>
    fetch(`${service.baseUrl}${path}`, { headers: key ? { Authorization: `Bearer ${key}` } : {} });

  beforeAll(async () => {
    service = await startTestService();
    const { users, apiKeys, credits } = service.context.services;
    await seedTemplates(service.context);
    const user = await users.create({ email: 'owner@example.com' });
    userId = user.id;
    readWriteKey = (await apiKeys.create({ userId, scopes: ['videos:read', 'videos:write'] })).key;
    readOnlyKey = (await apiKeys.create({ userId, scopes: ['videos:read'] })).key;
    await credits.grant(userId, 12);
  });
  afterAll(() => service.stop());

  it('GET /v1/me returns the ApiAccount with the granted balance', async () => {
    const response = await get('/v1/me', readWriteKey);
    expect(response.status).toBe(200);
    expect(await json(response)).toEqual({
      user_id: userId,
      credit_balance: 12,
      credits_per_video: 1,
      scopes: ['videos:read', 'videos:write'],
    });
  });

  it('GET /v1/credits shows the balance and the ledger, newest first', async () => {
    await service.context.services.credits.grant(userId, 3);
    const body = await json(get('/v1/credits', readOnlyKey));
    expect(body.balance).toBe(15);
    expect(body.credits_per_video).toBe(1);
    expect(body.recent.map((entry: { delta: number }) => entry.delta)).toEqual([3, 12]);
    expect(body.recent[0]).toEqual({ delta: 3, reason: 'grant', video_id: null, created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
  });

  it('GET /v1/templates lists templates with numeric string ids', async () => {
    const body = await json(get('/v1/templates', readOnlyKey));
    expect(body.object).toBe('list');
    expect(body.data.length).toBeGreaterThanOrEqual(5);
    for (const template of body.data) {
      expect(template.id).toMatch(/^[0-9]+$/);
      expect(Object.keys(template).sort()).toEqual(['id', 'name', 'preview_image_url', 'preview_video_url']);
    }
  });

  it('answers a missing, unknown or revoked credential with 401 and a resource-metadata challenge', async () => {
    const missing = await get('/v1/me');
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${service.baseUrl}/.well-known/oauth-protected-resource"`);
    expect((await json(missing)).error.code).toBe('unauthorized');

    expect((await get('/v1/me', 'psk_live_not-a-real-key')).status).toBe(401);
    expect((await get('/v1/me', 'garbage')).status).toBe(401);

    const { key, record } = await service.context.services.apiKeys.create({ userId, scopes: ['videos:read'] });
    expect((await get('/v1/me', key)).status).toBe(200);
    // Through the service, which forgets the key at once; other replicas hear of it by NOTIFY (api-read-path.test.ts).
    expect(await service.context.services.apiKeys.revoke(userId, record.id)).toBe(true);
    expect((await get('/v1/me', key)).status).toBe(401);
  });

  it('stores only a hash of each key and records when it was last used', async () => {
    const rows = await service.database.db.selectFrom('api_keys').selectAll().where('user_id', '=', userId).execute();
    for (const row of rows) {
      expect(JSON.stringify(row)).not.toContain(readWriteKey);
      expect(row.key_hash).toMatch(/^[0-9a-f]{64}$/);
      expect(row.display_prefix.startsWith('psk_live_')).toBe(true);
    }
    expect(rows.some((row) => row.last_used_at !== null)).toBe(true);
    expect(readWriteKey).toMatch(/^psk_live_[A-Za-z0-9_-]{43}$/);
  });

  it('links every /v1 response to the versioning policy', async () => {
    for (const response of [await get('/v1/me', readOnlyKey), await get('/v1/me')]) {
      expect(response.headers.get('link')).toContain(`<${service.baseUrl}/versions>`);
      expect(response.headers.get('deprecation')).toBeNull();
    }
  });
});
