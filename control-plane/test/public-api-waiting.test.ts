import type { Client } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { loadRenderWorkerEnv, startRenderWorker } from '@petsing/render-node';
import { renderOutputKeys, renderWorkflowId, videoDeadlineWorkflowId, videoObjectPrefix } from '@petsing/workflows';
import { connectTemporalClient } from '@petsing/platform/runtime';
import { temporal as temporalProto } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadControlPlaneConfig } from '../src/config/env.ts';
import { openPostgres } from '../src/db/database.ts';
import { createLogger, messageFirstLogger } from '../src/logging/logger.ts';
import { startApiServer } from '../src/runtime/api-server.ts';
import { openAppContext } from '../src/runtime/bootstrap.ts';
import type { Json } from '../../test/support/http.ts';
import { startImageHost } from '../../test/support/image-host.ts';
import { freePort, waitFor } from '../../test/support/processes.ts';
import { startTestService, type TestService } from '../../test/support/test-service.ts';
import { productionWorkflowBundle } from '../../test/support/temporal.ts';
import { createTestAccount } from '../../test/support/accounts.ts';
import { expectDocumentedResponses, type RecordedResponse } from '../../test/support/openapi.ts';
import { toneWav } from '../../test/support/audio.ts';
import { PET_PHOTO_MOUTH, petPhoto } from '../../test/support/pet-photo.ts';
import { seedTemplates } from '../../test/support/templates.ts';

type StreamEvent = { id: number; event: string; data: Json };

/**
 * Waiting instead of polling (Prefer: wait, Server-Sent Events), cancel and deadline, through the real HTTP
 * API with Temporal and real workers. The render node is started here so tests can stop it and keep a video
 * waiting in the render queue.
 */
describe('/v1 waiting, events, cancel and deadline', () => {
  let service: TestService;
  let imageHost: Awaited<ReturnType<typeof startImageHost>>;
  let renderNode: { stop(): Promise<void> } | undefined;
  let temporal: { client: Client; close(): Promise<void> };
  let owner: { id: string; readWrite: string; readOnly: string };
  /** A second API replica on the same database, without workers: its waits can only be woken through Postgres. */
  let replica: { baseUrl: string; stop(): Promise<void> };
  const recorded: RecordedResponse[] = [];

  const call = async (operation: string, method: string, path: string, key: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${service.baseUrl}${path}`, {
      method,
      headers: { Authorization: `Bearer ${key}`, ...(body ? { 'Content-Type': 'application/json' } : {}), ...headers },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    const parsed = text ? JSON.parse(text) : undefined;
    recorded.push({ operation, status: response.status, body: parsed });
    return { response, body: parsed as Json, receivedAt: Date.now() };
  };
  const create = async (extra: Record<string, unknown> = {}, account = owner) => {
    // A mouth hint: no photo check before the charge, so a create needs no render node (some tests stop it).
    const { response, body } = await call('createApiVideo', 'POST', '/v1/videos', account.readWrite, { template_id: '1', image_url: imageHost.url('/pet.png'), face: { mouth: PET_PHOTO_MOUTH }, ...extra });
    expect(response.status, JSON.stringify(body)).toBe(202);
    return body.id as string;
  };
  const videoRow = (id: string) => service.database.db.selectFrom('videos').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const refunds = async (id: string) =>
    (await service.database.db.selectFrom('credit_ledger').select('reason').where('video_id', '=', id).where('reason', '=', 'refund').execute()).length;
  const balance = (userId: string) => service.context.services.credits.balance(userId);

  /** Reads an event stream until it ends or `until` is satisfied; aborts the request then. */
  const readEvents = async (id: string, headers: Record<string, string> = {}, until?: (event: StreamEvent) => boolean) => {
    const controller = new AbortController();
    const response = await fetch(`${service.baseUrl}/v1/videos/${id}/events`, {
      headers: { Authorization: `Bearer ${owner.readOnly}`, ...headers },
      signal: controller.signal,
    });
    const events: StreamEvent[] = [];
    const comments: string[] = [];
    if (response.status !== 200) return { response, events, comments, ended: true };
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    let ended = false;
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) {
        ended = true;
        break;
      }
      buffer += chunk.value;
      let boundary: number;
      let stop = false;
      while ((boundary = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, boundary);
        buffer = buffer.slice(boundary + 2);
        const fields = Object.fromEntries(block.split('\n').filter((line) => !line.startsWith(':')).map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 2)]));
        comments.push(...block.split('\n').filter((line) => line.startsWith(':')));
        if (fields.data === undefined) continue;
        const event = { id: Number(fields.id), event: fields.event!, data: JSON.parse(fields.data) };
        events.push(event);
        if (until?.(event)) stop = true;
      }
      if (stop) {
        controller.abort();
        break;
      }
    }
    return { response, events, comments, ended };
  };

  beforeAll(async () => {
    imageHost = await startImageHost({ '/pet.png': { body: await petPhoto(512), contentType: 'image/png' } });
    service = await startTestService({
      temporal: true,
      controlWorker: true,
      userUrlFetcher: imageHost.fetcher,
      env: { ALLOW_HTTP_IMAGE_URLS: 'true', RENDER_OUTPUT_SIZE: '320', RATE_LIMIT_WRITES_PER_MINUTE: '60' },
    });
    renderNode = await service.startRenderWorker();
    temporal = await connectTemporalClient({ ...service.context.config.env });
    await seedTemplates(service.context);
    owner = await createTestAccount(service.context, 'waiter@example.com', 20);
    const port = await freePort();
    const config = loadControlPlaneConfig({ ...service.env, PORT: String(port) });
    const database = await openPostgres(service.database.url!, 4);
    const context = await openAppContext(config, createLogger('silent'), { database });
    const api = await startApiServer(context, port);
    replica = {
      baseUrl: config.baseUrl,
      stop: async () => {
        await api.close();
        await context.close();
        await database.close();
      },
    };
  }, 180_000);
  afterAll(async () => {
    await replica?.stop();
    await temporal?.close();
    await service?.stop();
    await imageHost?.close();
  });

  it('Prefer: wait answers within 1 s of the completion, on every replica, with Preference-Applied', async ({ annotate }) => {
    const id = await create();
    const waitOnReplica = async () => {
      for (;;) {
        const response = await fetch(`${replica.baseUrl}/v1/videos/${id}`, { headers: { Authorization: `Bearer ${owner.readOnly}`, Prefer: 'wait=60' } });
        const body = await response.json() as Json;
        if (body.status !== 'processing') return { body, receivedAt: Date.now() };
      }
    };
    const onReplica = waitOnReplica();
    let answer: Awaited<ReturnType<typeof call>>;
    // A render on two busy cores may outlast one wait: wait again, as a client would.
    do answer = await call('getApiVideo', 'GET', `/v1/videos/${id}`, owner.readOnly, undefined, { Prefer: 'wait=60' });
    while (answer.body.status === 'processing');
    expect(answer.response.status).toBe(200);
    expect(answer.response.headers.get('preference-applied')).toBe('wait=60');
    expect(answer.response.headers.get('vary')).toMatch(/prefer/i);
    expect(answer.body).toMatchObject({ id, status: 'completed', progress: 100 });
    const completedAt = (await videoRow(id)).completed_at!.getTime();
    const delay = answer.receivedAt - completedAt;
    const replicaAnswer = await onReplica;
    const replicaDelay = replicaAnswer.receivedAt - completedAt;
    await annotate(`answered ${delay} ms (replica: ${replicaDelay} ms) after the completion was stored`);
    expect(delay).toBeGreaterThanOrEqual(0);
    expect(delay).toBeLessThan(1_000);
    expect(replicaAnswer.body).toMatchObject({ id, status: 'completed' });
    expect(replicaDelay).toBeGreaterThanOrEqual(0);
    expect(replicaDelay).toBeLessThan(1_000);

    // Capped at 60 and saying so; a finished video answers at once.
    const capped = await call('getApiVideo', 'GET', `/v1/videos/${id}`, owner.readOnly, undefined, { Prefer: 'respond-async, wait=600' });
    expect(capped.response.headers.get('preference-applied')).toBe('wait=60');
    expect(capped.body.status).toBe('completed');
    const plain = await call('getApiVideo', 'GET', `/v1/videos/${id}`, owner.readOnly);
    expect(plain.response.headers.get('preference-applied')).toBeNull();
  }, 240_000);

  it('Prefer: wait answers the unfinished video after N seconds, counted as one read; a hang-up frees the wait', async () => {
    await renderNode!.stop();
    renderNode = undefined;
    try {
      const id = await create();
      const before = await call('getApiVideo', 'GET', `/v1/videos/${id}`, owner.readOnly);
      const remaining = Number(/r=(\d+)/.exec(before.response.headers.get('ratelimit')!)![1]);
      const started = Date.now();
      const answer = await call('getApiVideo', 'GET', `/v1/videos/${id}`, owner.readOnly, undefined, { Prefer: 'wait=2' });
      const elapsed = answer.receivedAt - started;
      expect(elapsed).toBeGreaterThanOrEqual(2_000);
      expect(elapsed).toBeLessThan(3_000);
      expect(answer.body).toMatchObject({ id, status: 'processing' });
      expect(answer.response.headers.get('preference-applied')).toBe('wait=2');
      expect(answer.response.headers.get('ratelimit')).toContain(`r=${remaining - 1};`);

      // A client that hangs up: the wait ends with it (the status feed keeps no watcher).
      const hangUp = new AbortController();
      const abandoned = fetch(`${service.baseUrl}/v1/videos/${id}`, { headers: { Authorization: `Bearer ${owner.readOnly}`, Prefer: 'wait=60' }, signal: hangUp.signal });
      // Waits on one video (the status websocket watches every video, for as long as the server runs).
      const watchers = () => [...(service.context.services.videoWatch as unknown as { feed: { watchers: Set<{ videoId?: string }> } }).feed.watchers].filter((watcher) => watcher.videoId === id).length;
      await waitFor('the wait to start', async () => watchers() === 1, 5_000);
      hangUp.abort();
      await expect(abandoned).rejects.toThrow();
      await waitFor('the wait to be freed', async () => watchers() === 0, 5_000);

      // Cleans up for the tests after: no render node would pick it up.
      expect((await call('cancelApiVideo', 'POST', `/v1/videos/${id}/cancel`, owner.readWrite)).body.error.code).toBe('canceled');
    } finally {
      renderNode ??= await service.startRenderWorker();
    }
  }, 120_000);

  it('streams processing → completed as Server-Sent Events, resumable with Last-Event-ID', async () => {
    const id = await create();
    // The first connection leaves mid-render, after a progress event.
    const first = await readEvents(id, {}, (event) => event.data.progress >= 10 || event.data.status !== 'processing');
    expect(first.response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(first.events[0]).toMatchObject({ event: 'video.status', data: { id, status: 'processing' } });
    const resumeFrom = first.events.at(-1)!;
    expect(resumeFrom.data).toMatchObject({ status: 'processing' });

    const second = await readEvents(id, { 'Last-Event-ID': String(resumeFrom.id) });
    expect(second.ended).toBe(true);
    const all = [...first.events, ...second.events];
    const ids = all.map((event) => event.id);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    expect(second.events.every((event) => event.id > resumeFrom.id)).toBe(true);
    expect(all.map((event) => event.data.status)).toEqual([...all.slice(0, -1).map(() => 'processing'), 'completed']);
    const progress = all.map((event) => event.data.progress);
    expect([...progress].sort((a, b) => a - b)).toEqual(progress);
    expect(all.at(-1)!.data).toMatchObject({ id, status: 'completed', progress: 100, video_url: expect.any(String), error: null });

    // After the end: the current state at once without Last-Event-ID; 204 (stop reconnecting) with the last one.
    const again = await readEvents(id);
    expect(again.events.map((event) => [event.id, event.data.status])).toEqual([[all.at(-1)!.id, 'completed']]);
    const done = await readEvents(id, { 'Last-Event-ID': String(all.at(-1)!.id) });
    expect(done.response.status).toBe(204);
    const unknown = await call('streamApiVideoEvents', 'GET', `/v1/videos/${crypto.randomUUID()}/events`, owner.readOnly);
    expect(unknown.response.status).toBe(404);
  }, 240_000);

  it('cancels mid-render: failed with code canceled, refunded exactly once under parallel cancels, the render stopped', async () => {
    // A node rendering the largest frames at a high rate: 29 s of song take it several times the 2 s a cancellation
    // may take to reach it (at 720 px and 25 fps the face rig could finish first on an idle machine).
    await renderNode!.stop();
    renderNode = undefined;
    const slowNode = await startRenderWorker(loadRenderWorkerEnv({ ...service.env, RENDER_OUTPUT_SIZE: '1080', RENDER_FPS: '60' }), messageFirstLogger(service.context.logger));
    try {
      await cancelMidRender();
    } finally {
      await slowNode.stop();
      renderNode = await service.startRenderWorker();
    }
  }, 240_000);

  const cancelMidRender = async () => {
    const before = await balance(owner.id);
    // A long song (29 s of frames): the render outlasts the 2 s a cancellation may take to reach it.
    const created = await service.context.services.videos.create({
      userId: owner.id, origin: 'api', charge: { kind: 'api_credit' }, watermark: false,
      image: { upload: { body: await petPhoto(512), contentType: 'image/png', extension: 'png' } },
      audio: { upload: { body: toneWav(29), contentType: 'audio/wav', extension: 'wav' } },
    });
    const id = created!.video.id;
    // Canceled as soon as the render node has picked the render up.
    await waitFor('the render to be under way', async () => {
      const { raw } = await temporal.client.workflow.getHandle(renderWorkflowId(id)).describe();
      return (raw.pendingActivities ?? []).some((activity) => activity.activityType?.name === 'renderLipSync'
        && activity.state === temporalProto.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED);
    }, 180_000);
    const cancels = await Promise.all(Array.from({ length: 5 }, () => call('cancelApiVideo', 'POST', `/v1/videos/${id}/cancel`, owner.readWrite)));
    for (const { response, body } of cancels) {
      expect(response.status).toBe(200);
      expect(body).toMatchObject({ id, status: 'failed', video_url: null, error: { code: 'canceled', message: expect.any(String) } });
    }
    expect(await refunds(id)).toBe(1);
    expect(await balance(owner.id)).toBe(before);

    const handle = temporal.client.workflow.getHandle(renderWorkflowId(id));
    await waitFor('the render workflow to close', async () => (await handle.describe()).status.name !== 'RUNNING', 60_000);
    const description = await handle.describe();
    expect(description.status.name).toBe('CANCELLED');
    const history = await handle.fetchHistory();
    // The render node acknowledged the cancellation (the render activity waits for it) instead of finishing.
    const renders = history.events!.filter((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'renderLipSync').map((event) => Number(event.eventId));
    const endings = history.events!.flatMap((event) => {
      const ended = event.activityTaskCanceledEventAttributes ?? event.activityTaskCompletedEventAttributes ?? event.activityTaskFailedEventAttributes;
      return ended && renders.includes(Number(ended.scheduledEventId)) ? [temporalProto.api.enums.v1.EventType[event.eventType!]] : [];
    });
    expect(endings).toEqual(['EVENT_TYPE_ACTIVITY_TASK_CANCELED']);
    expect(await service.context.objectStore.exists(renderOutputKeys(id, description.runId).output)).toBe(false);
    const left: string[] = [];
    for await (const object of service.context.objectStore.list(videoObjectPrefix(id))) left.push(object.key);
    expect(left).toEqual([]);
    const row = await videoRow(id);
    expect(row).toMatchObject({ status: 'failed', failure_code: 'canceled', output_key: null });

    const answer = await call('getApiVideo', 'GET', `/v1/videos/${id}`, owner.readOnly);
    expect(answer.body).toMatchObject({ status: 'failed', error: { code: 'canceled' } });
    expect((await call('cancelApiVideo', 'POST', `/v1/videos/${id}/cancel`, owner.readWrite)).response.status).toBe(200);
    expect(await refunds(id)).toBe(1);
  };

  it('refuses to cancel a completed video (409), answers a failed one as it is, and checks scope and ownership', async () => {
    const completed = (await service.database.db.selectFrom('videos').select('id').where('user_id', '=', owner.id).where('status', '=', 'completed').executeTakeFirstOrThrow()).id;
    const refused = await call('cancelApiVideo', 'POST', `/v1/videos/${completed}/cancel`, owner.readWrite);
    expect(refused.response.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'video_already_completed', hint: expect.any(String) });
    expect((await videoRow(completed)).status).toBe('completed');

    const failed = await create({ image_url: imageHost.url('/missing.png') });
    await call('getApiVideo', 'GET', `/v1/videos/${failed}`, owner.readOnly, undefined, { Prefer: 'wait=60' });
    expect((await videoRow(failed)).failure_code).toBe('image_url_unreachable');
    const again = await call('cancelApiVideo', 'POST', `/v1/videos/${failed}/cancel`, owner.readWrite);
    expect(again.response.status).toBe(200);
    expect(again.body.error.code).toBe('image_url_unreachable');
    expect(await refunds(failed)).toBe(1);

    expect((await call('cancelApiVideo', 'POST', `/v1/videos/${failed}/cancel`, owner.readOnly)).response.status).toBe(403);
    const stranger = await createTestAccount(service.context, 'stranger@example.com', 0);
    expect((await call('cancelApiVideo', 'POST', `/v1/videos/${failed}/cancel`, stranger.readWrite)).response.status).toBe(404);
  }, 120_000);

  it('cancels and refunds a video past its deadline_seconds, with a replayable timer', async () => {
    for (const deadline of [9, 86_401, 2.5, '60']) {
      const refused = await call('createApiVideo', 'POST', '/v1/videos', owner.readWrite, { template_id: '1', image_url: imageHost.url('/pet.png'), deadline_seconds: deadline });
      expect(refused.response.status, String(deadline)).toBe(400);
      expect(refused.body.error.code).toBe('invalid_request');
    }
    // Without a render node the video waits in the render queue past its deadline.
    await renderNode!.stop();
    renderNode = undefined;
    try {
      const before = await balance(owner.id);
      const id = await create({ deadline_seconds: 10 });
      expect(await balance(owner.id)).toBe(before - 1);
      let answer: Awaited<ReturnType<typeof call>>;
      do answer = await call('getApiVideo', 'GET', `/v1/videos/${id}`, owner.readOnly, undefined, { Prefer: 'wait=30' });
      while (answer.body.status === 'processing');
      expect(answer.body).toMatchObject({ status: 'failed', error: { code: 'canceled', message: expect.stringContaining('deadline of 10 seconds') } });
      const row = await videoRow(id);
      expect(row.updated_at.getTime() - row.created_at.getTime()).toBeGreaterThanOrEqual(10_000);
      expect(await balance(owner.id)).toBe(before);
      expect(await refunds(id)).toBe(1);
      const render = temporal.client.workflow.getHandle(renderWorkflowId(id));
      await waitFor('the render workflow to close', async () => (await render.describe()).status.name !== 'RUNNING', 30_000);
      expect((await render.describe()).status.name).toBe('CANCELLED');

      const deadline = temporal.client.workflow.getHandle(videoDeadlineWorkflowId(id));
      await deadline.result();
      const workflowBundle = await productionWorkflowBundle();
      for await (const result of Worker.runReplayHistories({ workflowBundle, replayName: 'deadline' }, [{ workflowId: deadline.workflowId, history: await deadline.fetchHistory() }])) {
        expect(result.error, `replay of ${result.workflowId}`).toBeUndefined();
      }
    } finally {
      renderNode ??= await service.startRenderWorker();
    }
  }, 180_000);

  it('validates every recorded JSON response against /openapi.json', async () => {
    const checked = await expectDocumentedResponses(service.baseUrl, recorded.filter((entry) => entry.operation !== 'streamApiVideoEvents' || entry.status !== 200));
    expect(checked).toContain('cancelApiVideo 200');
    expect(checked).toContain('cancelApiVideo 409');
    expect(checked).toContain('getApiVideo 200');
  });
});
