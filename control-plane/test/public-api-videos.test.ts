import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_VERSIONS } from '../src/services/api-versions.ts';
import { json, type Json } from '../../test/support/http.ts';
import { startRenderingService, type startImageHost } from '../../test/support/image-host.ts';
import { waitFor } from '../../test/support/processes.ts';
import { startTestService, type TestService } from '../../test/support/test-service.ts';
import { awayFromWindowEdge, createTestAccount } from '../../test/support/accounts.ts';
import { expectDocumentedResponses, type RecordedResponse } from '../../test/support/openapi.ts';
import { PET_PHOTO_MOUTH, petPhoto } from '../../test/support/pet-photo.ts';
import { seedTemplates } from '../../test/support/templates.ts';


describe('/v1 videos', () => {
  let service: TestService;
  let imageHost: Awaited<ReturnType<typeof startImageHost>>;
  let owner: { id: string; readWrite: string; readOnly: string };
  const recorded: RecordedResponse[] = [];

  const call = async (operation: string, method: string, path: string, key?: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${service.baseUrl}${path}`, {
      method,
      headers: { ...(key ? { Authorization: `Bearer ${key}` } : {}), ...(body ? { 'Content-Type': 'application/json' } : {}), ...headers },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    const parsed = text ? JSON.parse(text) : undefined;
    recorded.push({ operation, status: response.status, body: parsed });
    return { response, body: parsed as Json, text };
  };
  const newAccount = (email: string, credits: number) => createTestAccount(service.context, email, credits);
  const createRequest = (path = '/pet.png') => ({ template_id: '1', image_url: imageHost.url(path) });

  beforeAll(async () => {
    ({ service, imageHost } = await startRenderingService());
    await seedTemplates(service.context);
    owner = await newAccount('owner@example.com', 10);
  }, 180_000);
  afterAll(async () => {
    await service?.stop();
    await imageHost?.close();
  });

  it('POST /v1/videos answers 202 CreatedApiVideo, charges one credit, and the video completes', async () => {
    const { response, body } = await call('createApiVideo', 'POST', '/v1/videos', owner.readWrite, createRequest());
    expect(response.status, JSON.stringify(body)).toBe(202);
    expect(body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      status: 'processing',
      template_id: '1',
      aspect: 'square',
      credits_remaining: 9,
      poll_url: `${service.baseUrl}/v1/videos/${body.id}`,
    });
    expect(response.headers.get('location')).toBe(body.poll_url);

    let video: Json;
    await waitFor('the video to finish', async () => {
      video = (await call('getApiVideo', 'GET', `/v1/videos/${body.id}`, owner.readOnly)).body;
      return ['completed', 'failed'].includes(video.status);
    }, 120_000);
    expect(video).toMatchObject({ id: body.id, status: 'completed', template_id: '1', has_watermark: false, aspect: 'square', progress: 100, error: null });
    expect(imageHost.requests).toContain('/pet.png');
    const download = await fetch(video.video_url);
    expect(download.headers.get('content-type')).toBe('video/mp4');
    expect(Buffer.from(await download.arrayBuffer()).subarray(4, 8).toString('ascii')).toBe('ftyp');
    expect(video.thumbnail_url).toEqual(expect.any(String));
  }, 180_000);

  it('fails a video whose photo cannot be downloaded, with a reason, and refunds the credit', async () => {
    const account = await newAccount('gone@example.com', 1);
    // With a mouth hint the URL is only vetted at create (no photo check before the charge): the render fetches it.
    const { body } = await call('createApiVideo', 'POST', '/v1/videos', account.readWrite, { ...createRequest('/missing.png'), face: { mouth: PET_PHOTO_MOUTH } });
    expect(body.credits_remaining).toBe(0);
    let video: Json;
    await waitFor('the video to fail', async () => {
      video = (await call('getApiVideo', 'GET', `/v1/videos/${body.id}`, account.readOnly)).body;
      return video.status === 'failed';
    }, 60_000);
    expect(video.error).toEqual({ code: 'image_url_unreachable', message: expect.any(String) });
    expect(video.video_url).toBeNull();
    const credits = (await call('getApiCredits', 'GET', '/v1/credits', account.readOnly)).body;
    expect(credits.balance).toBe(1);
    expect(credits.recent.map((entry: Json) => entry.reason)).toEqual(['refund', 'video_create', 'grant']);
  }, 90_000);

  it('refuses bad input with 400 and stable codes, before charging anything', async () => {
    const cases: [unknown, string][] = [
      [{ image_url: imageHost.url('/pet.png') }, 'template_or_audio_required'],
      [{ template_id: '1' }, 'invalid_request'],
      [{ template_id: '1', image_url: 'not a url' }, 'invalid_request'],
      [{ template_id: '999', image_url: imageHost.url('/pet.png') }, 'unknown_template'],
      [{ template_id: 'one', image_url: imageHost.url('/pet.png') }, 'unknown_template'],
      [{ template_id: '1', image_url: 'http://10.1.2.3/pet.png' }, 'image_url_refused'],
      [{ template_id: '1', image_url: 'http://localhost/pet.png' }, 'image_url_refused'],
      [{ template_id: '1', image_url: 'https://169.254.169.254/latest/meta-data/' }, 'image_url_refused'],
      [{ template_id: '1', image_url: 'https://[::1]/pet.png' }, 'image_url_refused'],
      [{ template_id: '1', image_url: 'ftp://photos.petsing-fixtures.com/pet.png' }, 'image_url_refused'],
    ];
    const before = await service.context.services.credits.balance(owner.id);
    for (const [body, code] of cases) {
      const { response, body: error } = await call('createApiVideo', 'POST', '/v1/videos', owner.readWrite, body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(error.error.code, JSON.stringify(body)).toBe(code);
      expect(error.message).toBe(error.error.message);
      expect(error.error.hint).toEqual(expect.any(String));
    }
    expect(await service.context.services.credits.balance(owner.id)).toBe(before);
  });

  it('answers 402 insufficient_credits, 403 without videos:write and 401 without a credential', async () => {
    const broke = await newAccount('broke@example.com', 0);
    const poor = await call('createApiVideo', 'POST', '/v1/videos', broke.readWrite, createRequest());
    expect(poor.response.status).toBe(402);
    expect(poor.body.error.code).toBe('insufficient_credits');
    const readOnly = await call('createApiVideo', 'POST', '/v1/videos', owner.readOnly, createRequest());
    expect(readOnly.response.status).toBe(403);
    expect(readOnly.body.error.code).toBe('forbidden');
    const anonymous = await call('createApiVideo', 'POST', '/v1/videos', undefined, createRequest());
    expect(anonymous.response.status).toBe(401);
    const deleteReadOnly = await call('deleteApiVideo', 'DELETE', `/v1/videos/${crypto.randomUUID()}`, owner.readOnly);
    expect(deleteReadOnly.response.status).toBe(403);
  });

  it('never overdraws: 20 parallel creates with a balance of 5 give 5 × 202 and 15 × 402', async () => {
    const account = await newAccount('parallel@example.com', 5);
    const results = await Promise.all(Array.from({ length: 20 }, () => call('createApiVideo', 'POST', '/v1/videos', account.readWrite, createRequest())));
    const statuses = results.map((r) => r.response.status).sort();
    expect(statuses.filter((s) => s === 202)).toHaveLength(5);
    expect(statuses.filter((s) => s === 402)).toHaveLength(15);
    for (const r of results.filter((r) => r.response.status === 402)) expect(r.body.error.code).toBe('insufficient_credits');
    expect(await service.context.services.credits.balance(account.id)).toBe(0);
  }, 60_000);

  it('honours Idempotency-Key: the same request is answered again without a second charge', async () => {
    const account = await newAccount('idem@example.com', 3);
    const headers = { 'Idempotency-Key': 'order-42' };
    const first = await call('createApiVideo', 'POST', '/v1/videos', account.readWrite, createRequest(), headers);
    const again = await call('createApiVideo', 'POST', '/v1/videos', account.readWrite, createRequest(), headers);
    expect(first.response.status).toBe(202);
    expect(again.response.status).toBe(202);
    expect(again.body).toEqual(first.body);
    expect(again.response.headers.get('idempotent-replayed')).toBe('true');
    expect(await service.context.services.credits.balance(account.id)).toBe(2);
    const other = await call('createApiVideo', 'POST', '/v1/videos', account.readWrite, { ...createRequest(), template_id: '2' }, headers);
    expect(other.response.status).toBe(422);
    expect(other.body.error.code).toBe('idempotency_key_reused');
    const list = (await call('listApiVideos', 'GET', '/v1/videos', account.readOnly)).body;
    expect(list.data).toHaveLength(1);
  });

  it('lists videos newest first, web and API alike, with limit 1-100 (default 25)', async () => {
    const account = await newAccount('list@example.com', 3);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await call('createApiVideo', 'POST', '/v1/videos', account.readWrite, createRequest())).body.id);
    const web = await service.context.services.videos.create({
      userId: account.id, origin: 'web', charge: { kind: 'subscription' }, watermark: false, templateId: 2,
      image: { upload: { body: await petPhoto(256), contentType: 'image/png', extension: 'png' } },
    });
    const all = (await call('listApiVideos', 'GET', '/v1/videos?unknown=ignored', account.readOnly)).body;
    expect(all.object).toBe('list');
    expect(all.data.map((v: Json) => v.id)).toEqual([web!.video.id, ...ids.reverse()]);
    expect(all.data[0]).toMatchObject({ template_id: '2', status: expect.any(String) });
    expect((await call('listApiVideos', 'GET', '/v1/videos?limit=2', account.readOnly)).body.data).toHaveLength(2);
    for (const limit of ['0', '101', 'abc', '2.5']) {
      const invalid = await call('listApiVideos', 'GET', `/v1/videos?limit=${limit}`, account.readOnly);
      expect(invalid.response.status, limit).toBe(400);
      expect(invalid.body.error.code).toBe('invalid_request');
    }
  });

  it('answers 404 for malformed, unknown and other accounts\' video ids, and deletes with 204 without a refund', async () => {
    const stranger = await newAccount('stranger@example.com', 0);
    const created = (await call('createApiVideo', 'POST', '/v1/videos', owner.readWrite, createRequest())).body;
    for (const [path, key] of [
      ['/v1/videos/not-a-uuid', owner.readOnly],
      [`/v1/videos/${crypto.randomUUID()}`, owner.readOnly],
      [`/v1/videos/${created.id}`, stranger.readOnly],
    ] as const) {
      const missing = await call('getApiVideo', 'GET', path, key);
      expect(missing.response.status, path).toBe(404);
      expect(missing.body.error.code).toBe('not_found');
    }
    expect((await call('deleteApiVideo', 'DELETE', `/v1/videos/${created.id}`, stranger.readWrite)).response.status).toBe(404);
    const balance = await service.context.services.credits.balance(owner.id);
    const deleted = await call('deleteApiVideo', 'DELETE', `/v1/videos/${created.id}`, owner.readWrite);
    expect(deleted.response.status).toBe(204);
    expect(deleted.text).toBe('');
    expect((await call('getApiVideo', 'GET', `/v1/videos/${created.id}`, owner.readOnly)).response.status).toBe(404);
    expect(await service.context.services.credits.balance(owner.id)).toBe(balance);
  }, 60_000);

  it('sends RateLimit headers on every response and 429 with Retry-After past the limit', async () => {
    const account = await newAccount('burst@example.com', 0);
    await awayFromWindowEdge();
    const first = await call('getApiAccount', 'GET', '/v1/me', account.readOnly);
    expect(first.response.headers.get('ratelimit-policy')).toBe('"read";q=60;w=60');
    expect(first.response.headers.get('ratelimit')).toMatch(/^"read";r=59;t=\d+$/);
    const anonymous = await call('getApiAccount', 'GET', '/v1/me');
    expect(anonymous.response.headers.get('ratelimit')).toMatch(/^"read";r=\d+;t=\d+$/);
    const responses = await Promise.all(Array.from({ length: 61 }, () => fetch(`${service.baseUrl}/v1/me`, { headers: { Authorization: `Bearer ${account.readOnly}` } })));
    const limited = responses.filter((r) => r.status === 429);
    expect(limited.length).toBe(2);
    const body = await json(limited[0]!);
    expect(body.error.code).toBe('rate_limited');
    expect(Number(limited[0]!.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('validates every recorded response against /openapi.json', async () => {
    const checked = await expectDocumentedResponses(service.baseUrl, recorded);
    expect(checked.size).toBeGreaterThanOrEqual(8);
  });
});

describe('/v1 on a deprecated version', () => {
  it('answers with Deprecation, Sunset and Link rel="deprecation" headers', async () => {
    const service = await startTestService({
      apiVersions: API_VERSIONS.map((v) => ({ ...v, status: 'deprecated' as const, deprecatedOn: '2027-01-01', sunsetOn: '2027-07-01' })),
    });
    try {
      const response = await fetch(`${service.baseUrl}/v1/me`);
      expect(response.headers.get('deprecation')).toBe('Fri, 01 Jan 2027 00:00:00 GMT');
      expect(response.headers.get('sunset')).toBe('Thu, 01 Jul 2027 00:00:00 GMT');
      expect(response.headers.get('link')).toContain('rel="deprecation"');
      expect(response.headers.get('link')).toContain(`<${service.baseUrl}/versions>`);
      const versions = await json(fetch(`${service.baseUrl}/versions`));
      expect(versions.versions[0]).toMatchObject({ status: 'deprecated', deprecated_on: '2027-01-01', sunset_on: '2027-07-01' });
    } finally {
      await service.stop();
    }
  });
});
