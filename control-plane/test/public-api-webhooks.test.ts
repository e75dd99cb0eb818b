import { connectTemporalClient } from '@petsing/platform/runtime';
import type { Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderWorkflowId } from '@petsing/workflows';
import { classifyAddress } from '../src/media/address-policy.ts';
import { systemResolver } from '../src/media/host-resolvers.ts';
import { createUserUrlFetcher } from '../src/media/safe-fetch.ts';
import { createControlActivities } from '../src/temporal/control-activities.ts';
import type { Json } from '../../test/support/http.ts';
import { createTestAccount } from '../../test/support/accounts.ts';
import { expectDocumentedResponses, type RecordedResponse } from '../../test/support/openapi.ts';
import { waitFor } from '../../test/support/processes.ts';
import { replayFinishedHistories } from '../../test/support/temporal.ts';
import { startTestService, type TestService } from '../../test/support/test-service.ts';
import { startWebhookReceiver, verifyWith, type Reception } from '../../test/support/webhook-receiver.ts';
import { petPhoto } from '../../test/support/pet-photo.ts';
import { seedTemplates } from '../../test/support/templates.ts';

// Public-looking names the fixture's resolver answers itself; every other name goes to real DNS and the strict policy.
const RECEIVER_HOST = 'hooks.petsing-fixtures.com';
const REBINDING_HOST = 'rebinding.petsing-fixtures.com';

/**
 * Webhooks through the real HTTP API, with real workers, Temporal and Postgres: the receiver is a local
 * server checking signatures with the standardwebhooks package, reached under made-up public names through
 * a fetcher whose policy admits only that server (like the image_url tests).
 */
describe('/v1 webhooks', () => {
  let service: TestService;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let temporal: { client: Client; close(): Promise<void> };
  let owner: { id: string; readWrite: string; readOnly: string };
  let rebindTo = '127.0.0.1';
  const recorded: RecordedResponse[] = [];

  const call = async (operation: string, method: string, path: string, key: string, body?: unknown) => {
    const response = await fetch(`${service.baseUrl}${path}`, {
      method,
      headers: { Authorization: `Bearer ${key}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    const parsed = text ? JSON.parse(text) : undefined;
    recorded.push({ operation, status: response.status, body: parsed });
    return { status: response.status, body: parsed as Json };
  };
  const hook = (path: string, host = RECEIVER_HOST) => `http://${host}:${receiver.port}${path}`;
  const register = async (path: string, events?: string[], key = owner.readWrite, host = RECEIVER_HOST) => {
    const { status, body } = await call('createWebhook', 'POST', '/v1/webhooks', key, { url: hook(path, host), ...(events ? { events } : {}) });
    expect(status, JSON.stringify(body)).toBe(201);
    return body as { id: string; secret: string };
  };
  const idsOf = (receptions: Reception[]) => receptions.map((reception) => reception.headers['webhook-id']);

  beforeAll(async () => {
    receiver = await startWebhookReceiver(await petPhoto(256), (path, _id, seen) => {
      if (path === '/hooks/flaky') return seen < 3 ? 500 : 200;
      if (path === '/hooks/down') return 503;
      return 200;
    });
    const fetcher = createUserUrlFetcher({
      addressPolicy: { checkAddress: (address) => (address === '127.0.0.1' ? null : classifyAddress(address)), extraPorts: [receiver.port], allowHttp: true },
      resolver: async (host, signal) => {
        if (host === RECEIVER_HOST) return [{ address: '127.0.0.1', family: 4 }];
        if (host === REBINDING_HOST) return [{ address: rebindTo, family: 4 }];
        return systemResolver(host, signal);
      },
    });
    service = await startTestService({
      temporal: true,
      controlWorker: true,
      renderWorker: true,
      userUrlFetcher: fetcher,
      env: {
        ALLOW_HTTP_IMAGE_URLS: 'true',
        RENDER_OUTPUT_SIZE: '192',
        WEBHOOK_RETRY_SCHEDULE_SECONDS: '1,1,1,1',
        WEBHOOK_DISABLE_AFTER_SECONDS: '3600',
        RATE_LIMIT_WRITES_PER_MINUTE: '1000',
      },
    });
    await seedTemplates(service.context);
    owner = await createTestAccount(service.context, 'hooks@example.com', 10);
    temporal = await connectTemporalClient(service.context.config.env);
  }, 180_000);
  afterAll(async () => {
    await temporal?.close();
    await service?.stop();
    await receiver?.close();
  });

  it('registers an endpoint: the secret once, https-only public URLs, at most 10 per account, videos:write to change', async () => {
    const created = await register('/hooks/registered', ['video.completed']);
    expect(created).toMatchObject({ url: hook('/hooks/registered'), events: ['video.completed'], disabled_at: null, previous_secret_expires_at: null });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const listed = await call('listWebhooks', 'GET', '/v1/webhooks', owner.readOnly);
    expect(listed.body.data.map((endpoint: Json) => endpoint.id)).toContain(created.id);
    expect(JSON.stringify(listed.body)).not.toContain('whsec_');
    expect((await call('getWebhook', 'GET', `/v1/webhooks/${created.id}`, owner.readOnly)).body.id).toBe(created.id);
    // The secret is stored sealed, not as written.
    const row = await service.database.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
    expect(row.secret_ciphertext).not.toContain(created.secret.slice(6, 20));

    expect((await call('createWebhook', 'POST', '/v1/webhooks', owner.readOnly, { url: hook('/x') })).status).toBe(403);
    for (const url of ['https://10.1.2.3/hook', 'https://localhost/hook', 'https://169.254.169.254/latest/meta-data/', 'https://[::1]/hook', 'ftp://example.com/hook', 'https://user:pw@example.com/hook', 'https://example.com:8443/hook']) {
      const refused = await call('createWebhook', 'POST', '/v1/webhooks', owner.readWrite, { url });
      expect(refused.status, url).toBe(400);
      expect(refused.body.error.code, url).toBe('webhook_url_refused');
    }
    expect((await call('createWebhook', 'POST', '/v1/webhooks', owner.readWrite, { url: hook('/x'), events: ['video.exploded'] })).body.error.code).toBe('invalid_request');

    const busy = await createTestAccount(service.context, 'busy@example.com', 0);
    for (let index = 0; index < 10; index++) await register(`/hooks/busy-${index}`, undefined, busy.readWrite);
    const eleventh = await call('createWebhook', 'POST', '/v1/webhooks', busy.readWrite, { url: hook('/hooks/busy-10') });
    expect(eleventh.status).toBe(409);
    expect(eleventh.body.error.code).toBe('webhook_limit_reached');

    expect((await call('deleteWebhook', 'DELETE', `/v1/webhooks/${created.id}`, owner.readOnly)).status).toBe(403);
    expect((await call('deleteWebhook', 'DELETE', `/v1/webhooks/${created.id}`, owner.readWrite)).status).toBe(204);
    expect((await call('getWebhook', 'GET', `/v1/webhooks/${created.id}`, owner.readOnly)).status).toBe(404);
    expect((await call('deleteWebhook', 'DELETE', '/v1/webhooks/not-a-uuid', owner.readWrite)).status).toBe(404);
  });

  it('delivers each event of a video once per endpoint, signed, retries a 500 until it succeeds, and to the video\'s own webhook_url', async () => {
    const all = await register('/hooks/all');
    const flaky = await register('/hooks/flaky', ['video.completed']);
    const request = { template_id: '1', image_url: hook('/pet.png'), webhook_url: hook('/hooks/video') };
    const noSecret = await call('createApiVideo', 'POST', '/v1/videos', owner.readWrite, request);
    expect(noSecret.status).toBe(400);
    expect(noSecret.body.error.code).toBe('webhook_secret_required');
    const refusedUrl = await call('createApiVideo', 'POST', '/v1/videos', owner.readWrite, { ...request, webhook_url: 'https://10.0.0.1/hook' });
    expect(refusedUrl.body.error.code).toBe('webhook_url_refused');
    const defaultSecret = await call('rotateDefaultWebhookSecret', 'POST', '/v1/webhooks/default-secret', owner.readWrite);
    expect(defaultSecret.status).toBe(201);
    expect(defaultSecret.body).toEqual({ secret: expect.stringMatching(/^whsec_/), previous_secret_expires_at: null });

    const created = await call('createApiVideo', 'POST', '/v1/videos', owner.readWrite, request);
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const videoId = created.body.id as string;
    await waitFor('video.completed at every receiver', async () =>
      receiver.on('/hooks/all').some((r) => r.event.type === 'video.completed')
      && receiver.on('/hooks/video').some((r) => r.event.type === 'video.completed')
      && receiver.on('/hooks/flaky').some((r) => r.answered === 200), 180_000);

    const atAll = receiver.on('/hooks/all');
    expect(atAll.map((r) => r.event.type)).toEqual(['video.processing', 'video.completed']);
    expect(new Set(idsOf(atAll)).size).toBe(2);
    for (const reception of atAll) {
      expect(verifyWith(all.secret, reception)).toEqual(reception.event);
      expect(() => verifyWith(flaky.secret, reception), 'a signature checked with another secret').toThrow(/signature/i);
      expect(reception.headers['content-type']).toBe('application/json');
    }
    const completed = atAll[1]!.event;
    const video = (await call('getApiVideo', 'GET', `/v1/videos/${videoId}`, owner.readOnly)).body;
    expect(completed.data).toMatchObject({ id: videoId, status: 'completed', progress: 100, error: null, video_url: expect.any(String) });
    expect(Object.keys(completed.data).sort()).toEqual(Object.keys(video).sort());
    expect(atAll[0]!.event.data).toMatchObject({ id: videoId, status: 'processing' });

    // Three 500s, then a 200: four attempts of one delivery, all with its webhook-id.
    const atFlaky = receiver.on('/hooks/flaky');
    expect(atFlaky.map((r) => r.answered)).toEqual([500, 500, 500, 200]);
    expect(new Set(idsOf(atFlaky)).size).toBe(1);
    for (const reception of atFlaky) verifyWith(flaky.secret, reception);
    const flakyLog = (await call('listWebhookDeliveries', 'GET', `/v1/webhooks/${flaky.id}/deliveries`, owner.readOnly)).body.data;
    expect(flakyLog).toHaveLength(1);
    expect(flakyLog[0]).toMatchObject({ id: atFlaky[0]!.headers['webhook-id'], event_type: 'video.completed', video_id: videoId, state: 'delivered' });
    expect(flakyLog[0].attempts.map((attempt: Json) => [attempt.attempt, attempt.status_code])).toEqual([[1, 500], [2, 500], [3, 500], [4, 200]]);
    expect(flakyLog[0].attempts[0]).toMatchObject({ response_snippet: 'receiver says no', error: 'The endpoint answered HTTP 500.', latency_ms: expect.any(Number) });
    expect(flakyLog[0].attempts[3]).toMatchObject({ response_snippet: 'ok', error: null });

    const atVideoUrl = receiver.on('/hooks/video');
    expect(atVideoUrl.map((r) => r.event.type)).toEqual(['video.processing', 'video.completed']);
    for (const reception of atVideoUrl) verifyWith(defaultSecret.body.secret, reception);
    const videoUrlLog = await call('listVideoWebhookDeliveries', 'GET', `/v1/videos/${videoId}/webhook-deliveries`, owner.readOnly);
    expect(videoUrlLog.status).toBe(200);
    expect(videoUrlLog.body.data.map((delivery: Json) => [delivery.id, delivery.event_type, delivery.state, delivery.attempts[0]?.status_code]))
      .toEqual([...atVideoUrl].reverse().map((r) => [r.headers['webhook-id'], r.event.type, 'delivered', 200]));
    const stranger = await createTestAccount(service.context, 'hooks-stranger@example.com', 0);
    expect((await call('listVideoWebhookDeliveries', 'GET', `/v1/videos/${videoId}/webhook-deliveries`, stranger.readOnly)).status).toBe(404);

    // Emitting again (a retried activity) records and sends nothing new.
    await service.context.services.webhooks.emitVideoEvent(videoId, 'video.completed');
    const deliveries = await service.database.db.selectFrom('webhook_deliveries').select(['event_type', 'target']).where('video_id', '=', videoId).execute();
    expect(deliveries).toHaveLength(5);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(receiver.on('/hooks/all')).toHaveLength(2);

    // Redelivery: the same webhook-id and body, the next attempt number in the log.
    const log = (await call('listWebhookDeliveries', 'GET', `/v1/webhooks/${all.id}/deliveries`, owner.readOnly)).body.data;
    expect(log.map((delivery: Json) => [delivery.event_type, delivery.state, delivery.attempts.length])).toEqual([['video.completed', 'delivered', 1], ['video.processing', 'delivered', 1]]);
    const again = await call('redeliverWebhook', 'POST', `/v1/webhooks/${all.id}/deliveries/${log[0].id}/redeliver`, owner.readWrite);
    expect(again.status).toBe(202);
    await waitFor('the redelivery', async () => receiver.on('/hooks/all').length === 3, 30_000);
    const redelivered = receiver.on('/hooks/all')[2]!;
    expect(redelivered.headers['webhook-id']).toBe(log[0].id);
    expect(redelivered.body).toBe(atAll[1]!.body);
    verifyWith(all.secret, redelivered);
    await waitFor('the redelivery in the log', async () => {
      const [latest] = (await call('listWebhookDeliveries', 'GET', `/v1/webhooks/${all.id}/deliveries?limit=1`, owner.readOnly)).body.data;
      return latest.state === 'delivered' && latest.attempts.length === 2;
    }, 10_000);
    expect((await call('redeliverWebhook', 'POST', `/v1/webhooks/${all.id}/deliveries/${crypto.randomUUID()}/redeliver`, owner.readWrite)).status).toBe(404);
  }, 240_000);

  it('sends video.failed once for a canceled video', async () => {
    const account = await createTestAccount(service.context, 'cancels@example.com', 2);
    const endpoint = await register('/hooks/failed', ['video.failed'], account.readWrite);
    const created = await call('createApiVideo', 'POST', '/v1/videos', account.readWrite, { template_id: '1', image_url: hook('/pet.png') });
    const canceled = await call('cancelApiVideo', 'POST', `/v1/videos/${created.body.id}/cancel`, account.readWrite);
    expect(canceled.body.error.code).toBe('canceled');
    await call('cancelApiVideo', 'POST', `/v1/videos/${created.body.id}/cancel`, account.readWrite);
    await waitFor('video.failed', async () => receiver.on('/hooks/failed').length > 0, 30_000);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const [failed, ...more] = receiver.on('/hooks/failed');
    expect(more).toEqual([]);
    verifyWith(endpoint.secret, failed!);
    expect(failed!.event).toMatchObject({ type: 'video.failed', data: { id: created.body.id, status: 'failed', error: { code: 'canceled' } } });
  });

  it('sends video.failed for a video the reconciler fails after its workflow was lost', async () => {
    const account = await createTestAccount(service.context, 'lost@example.com', 1);
    const endpoint = await register('/hooks/lost', ['video.failed'], account.readWrite);
    const created = await call('createApiVideo', 'POST', '/v1/videos', account.readWrite, { template_id: '1', image_url: hook('/pet.png') });
    await temporal.client.workflow.getHandle(renderWorkflowId(created.body.id)).terminate('lost, for the test');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    // The reconciliation schedule's activity, run now rather than at its interval.
    const activities = createControlActivities(service.context.services);
    expect((await activities.reconcileVideos({ graceSeconds: 1 })).failed).toBe(1);
    await waitFor('video.failed', async () => receiver.on('/hooks/lost').length > 0, 30_000);
    const [failed, ...more] = receiver.on('/hooks/lost');
    expect(more).toEqual([]);
    verifyWith(endpoint.secret, failed!);
    expect(failed!.event).toMatchObject({ type: 'video.failed', data: { id: created.body.id, status: 'failed', error: { code: 'render_lost' } } });
  });

  it('rotates a secret: both sign during the overlap, only the new one after it', async () => {
    const endpoint = await register('/hooks/rotating');
    const rotated = await call('rotateWebhookSecret', 'POST', `/v1/webhooks/${endpoint.id}/rotate-secret`, owner.readWrite);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).not.toBe(endpoint.secret);
    expect(rotated.body.previous_secret_expires_at).toEqual(expect.any(String));

    const test = await call('testWebhook', 'POST', `/v1/webhooks/${endpoint.id}/test`, owner.readWrite);
    expect(test.status).toBe(200);
    expect(test.body).toMatchObject({ event_type: 'webhook.test', video_id: null, state: 'delivered', attempts: [{ attempt: 1, status_code: 200, error: null }] });
    const [during] = receiver.on('/hooks/rotating');
    expect(during!.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(verifyWith(endpoint.secret, during!)).toEqual({ type: 'webhook.test', timestamp: expect.any(String), data: { endpoint_id: endpoint.id } });
    verifyWith(rotated.body.secret, during!);

    const final = await call('rotateWebhookSecret', 'POST', `/v1/webhooks/${endpoint.id}/rotate-secret`, owner.readWrite, { overlap_seconds: 0 });
    await call('testWebhook', 'POST', `/v1/webhooks/${endpoint.id}/test`, owner.readWrite);
    const after = receiver.on('/hooks/rotating')[1]!;
    expect(after.headers['webhook-signature']!.split(' ')).toHaveLength(1);
    verifyWith(final.body.secret, after);
    expect(() => verifyWith(rotated.body.secret, after)).toThrow();
    expect(() => verifyWith(endpoint.secret, after)).toThrow();
  });

  it('re-checks the URL at every delivery: a name that now resolves to a private address gets nothing', async () => {
    const endpoint = await register('/hooks/rebind', undefined, owner.readWrite, REBINDING_HOST);
    rebindTo = '10.0.0.7';
    try {
      const test = await call('testWebhook', 'POST', `/v1/webhooks/${endpoint.id}/test`, owner.readWrite);
      expect(test.body.state).toBe('failed');
      expect(test.body.attempts[0]).toMatchObject({ status_code: null, error: expect.stringMatching(/^Refused: .*private, internal or reserved/) });
      expect(receiver.on('/hooks/rebind')).toEqual([]);
    } finally {
      rebindTo = '127.0.0.1';
    }
  });

  it('disables an endpoint failing for longer than WEBHOOK_DISABLE_AFTER_SECONDS and emails its owner once', async () => {
    const endpoint = await register('/hooks/down');
    const first = await call('testWebhook', 'POST', `/v1/webhooks/${endpoint.id}/test`, owner.readWrite);
    expect(first.body.attempts[0]).toMatchObject({ status_code: 503, error: 'The endpoint answered HTTP 503.' });
    expect((await call('getWebhook', 'GET', `/v1/webhooks/${endpoint.id}`, owner.readOnly)).body.disabled_at).toBeNull();
    // It has been failing, without a success, for longer than the limit (an hour here).
    await service.database.db.updateTable('webhook_endpoints').set({ failing_since: new Date(Date.now() - 2 * 3600_000) }).where('id', '=', endpoint.id).execute();
    await call('testWebhook', 'POST', `/v1/webhooks/${endpoint.id}/test`, owner.readWrite);
    expect((await call('getWebhook', 'GET', `/v1/webhooks/${endpoint.id}`, owner.readOnly)).body.disabled_at).toEqual(expect.any(String));
    const third = await call('testWebhook', 'POST', `/v1/webhooks/${endpoint.id}/test`, owner.readWrite);
    expect(third.body.attempts[0]).toMatchObject({ status_code: null, error: expect.stringMatching(/disabled/) });
    expect(receiver.on('/hooks/down')).toHaveLength(2);
    const mail = await service.database.db.selectFrom('email_outbox').selectAll().where('kind', '=', 'webhook_disabled').execute();
    expect(mail).toHaveLength(1);
    expect(mail[0]).toMatchObject({ user_id: owner.id, to_address: 'hooks@example.com' });
    expect(mail[0]!.text_body).toContain(hook('/hooks/down'));
    expect((await call('redeliverWebhook', 'POST', `/v1/webhooks/${endpoint.id}/deliveries/${first.body.id}/redeliver`, owner.readWrite)).status).toBe(409);
    expect(mail[0]!.text_body).toContain(`/v1/webhooks/${endpoint.id}/enable`);

    // Its owner turns it on again: attempts reach it, the streak starts afresh, missed deliveries can be redelivered.
    expect((await call('enableWebhook', 'POST', `/v1/webhooks/${endpoint.id}/enable`, owner.readOnly)).status).toBe(403);
    const enabled = await call('enableWebhook', 'POST', `/v1/webhooks/${endpoint.id}/enable`, owner.readWrite);
    expect(enabled.status).toBe(200);
    expect(enabled.body).toMatchObject({ id: endpoint.id, disabled_at: null });
    expect(enabled.body).not.toHaveProperty('secret');
    const fourth = await call('testWebhook', 'POST', `/v1/webhooks/${endpoint.id}/test`, owner.readWrite);
    expect(fourth.body.attempts[0]).toMatchObject({ status_code: 503 });
    expect(receiver.on('/hooks/down')).toHaveLength(3);
    expect((await call('getWebhook', 'GET', `/v1/webhooks/${endpoint.id}`, owner.readOnly)).body.disabled_at).toBeNull();
    expect((await call('redeliverWebhook', 'POST', `/v1/webhooks/${endpoint.id}/deliveries/${first.body.id}/redeliver`, owner.readWrite)).status).toBe(202);
    expect((await call('enableWebhook', 'POST', `/v1/webhooks/${crypto.randomUUID()}/enable`, owner.readWrite)).status).toBe(404);
  });

  it('documents every webhook operation, the answers given and the payloads in /openapi.json', async () => {
    const document = (await (await fetch(`${service.baseUrl}/openapi.json`)).json()) as Json;
    for (const path of ['/v1/webhooks', '/v1/webhooks/{id}', '/v1/webhooks/default-secret', '/v1/webhooks/{id}/rotate-secret', '/v1/webhooks/{id}/deliveries', '/v1/webhooks/{id}/deliveries/{delivery_id}/redeliver', '/v1/webhooks/{id}/test', '/v1/webhooks/{id}/enable', '/v1/videos/{id}/webhook-deliveries']) {
      expect(document.paths[path], path).toBeDefined();
    }
    expect(Object.keys(document.webhooks).sort()).toEqual(['video.completed', 'video.failed', 'video.processing', 'webhook.test']);
    const checked = await expectDocumentedResponses(service.baseUrl, recorded);
    for (const pair of ['createWebhook 201', 'listWebhooks 200', 'listWebhookDeliveries 200', 'redeliverWebhook 202', 'testWebhook 200', 'rotateWebhookSecret 200', 'createWebhook 400', 'createWebhook 409']) {
      expect(checked, pair).toContain(pair);
    }
  });

  it('replays every deliverWebhook history against the current workflow code', async () => {
    expect(await replayFinishedHistories(temporal.client, 'deliverWebhook')).toBeGreaterThanOrEqual(6);
  }, 120_000);
});
