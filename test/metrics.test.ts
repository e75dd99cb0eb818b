import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadControlPlaneConfig } from '../control-plane/src/config/env.ts';
import { createLogger } from '../control-plane/src/logging/logger.ts';
import type { AppContext } from '../control-plane/src/runtime/app-context.ts';
import { openAppContext } from '../control-plane/src/runtime/bootstrap.ts';
import { awayFromWindowEdge, createTestAccount } from './support/accounts.ts';
import { createPostgresTestDatabase, type TestDatabase } from './support/database.ts';
import { apiCall, type Json } from './support/http.ts';
import { petPhoto } from './support/pet-photo.ts';
import { freeMetricsPort, parseScrape, total, type Series } from './support/metrics-scrape.ts';
import { freePort, runPetsing, serviceProcessEnv, stopProcess, waitFor, waitUntil, type PetsingProcess } from './support/processes.ts';
import { createTestNamespace } from './support/temporal.ts';

/**
 * The metric catalogue (docs/metrics.md) on the service as operators run it: `petsing start`, here against the shared
 * Temporal dev server and a Postgres database of this file's own, so that it supervises the API (METRICS_PORT), the
 * control worker (CONTROL_WORKER_METRICS_PORT) and the render worker (RENDER_METRICS_PORT) as processes of their own,
 * each with its registry (the Temporal SDK's metrics 100 above each worker's). One real
 * render of a template video through /v1, one create canceled and refunded, one refused for want of credits, one
 * refused by the write limit: each counter must have moved by exactly that work.
 */
describe('metrics of the embedded service', () => {
  let database: TestDatabase;
  let dataDir: string;
  let service: PetsingProcess | undefined;
  let baseUrl: string;
  let metricsUrl: string;
  let controlMetricsUrl: string;
  let renderMetricsUrl: string;
  let renderTemporalMetricsUrl: string;
  let context: AppContext & { close(): Promise<void> };

  const scrape = async (url = metricsUrl) => {
    const response = await fetch(url);
    expect(response.status).toBe(200);
    return parseScrape(await response.text());
  };
  const api = (method: string, path: string, key: string | undefined, body?: unknown) => apiCall(baseUrl, method, path, key, body);

  beforeAll(async () => {
    database = await createPostgresTestDatabase();
    dataDir = await mkdtemp(join(tmpdir(), 'petsing-metrics-'));
    const { address, namespace } = await createTestNamespace();
    const port = await freePort();
    const metricsPort = await freeMetricsPort();
    baseUrl = `http://127.0.0.1:${port}`;
    metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    const controlMetricsPort = await freeMetricsPort();
    controlMetricsUrl = `http://127.0.0.1:${controlMetricsPort}/metrics`;
    const renderMetricsPort = await freeMetricsPort();
    renderMetricsUrl = `http://127.0.0.1:${renderMetricsPort}/metrics`;
    renderTemporalMetricsUrl = `http://127.0.0.1:${renderMetricsPort + 100}/metrics`;
    const env: Record<string, string> = {
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      BASE_URL: baseUrl,
      DATABASE_URL: database.url!,
      TEMPORAL_ADDRESS: address,
      TEMPORAL_NAMESPACE: namespace,
      METRICS_PORT: String(metricsPort),
      CONTROL_WORKER_METRICS_PORT: String(controlMetricsPort),
      RENDER_METRICS_PORT: String(renderMetricsPort),
      LOG_LEVEL: 'warn',
      // Small, short renders.
      RENDER_OUTPUT_SIZE: '128',
      RENDER_FPS: '10',
      RATE_LIMIT_READS_PER_MINUTE: '100000',
      RATE_LIMIT_WRITES_PER_MINUTE: '5',
    };
    service = runPetsing(['start'], serviceProcessEnv(env));
    await service.serving(baseUrl);
    // The render worker starts once the API and the control worker serve.
    await waitUntil('the workers\' metrics endpoints', async () => (await Promise.all([controlMetricsUrl, renderMetricsUrl].map((url) => fetch(url).then((response) => response.ok, () => false)))).every(Boolean), 120_000);
    // Accounts are made through this file's own services on the same database (the service process counts nothing of it).
    context = await openAppContext(loadControlPlaneConfig(env), createLogger('silent'), { database });
  }, 240_000);

  afterAll(async () => {
    await stopProcess(service?.child);
    await context?.close();
    await database?.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('serves /metrics on its own port, never on the public one', async () => {
    expect((await fetch(`${baseUrl}/metrics`)).status).toBe(404);
    expect((await fetch(metricsUrl.replace('/metrics', '/health'))).status).toBe(404);
    const scraped = await scrape();
    // prom-client's default process metrics, unprefixed.
    expect(scraped.some((series) => series.name === 'process_cpu_seconds_total')).toBe(true);
    expect(scraped.some((series) => series.name.startsWith('nodejs_'))).toBe(true);
    // The control worker samples the render queue's backlog from Temporal's task-queue statistics at its start.
    await waitFor('the render backlog to be sampled', async () => (await scrape(controlMetricsUrl)).some((series) => series.name === 'petsing_render_backlog' && series.labels.queue === 'render'), 30_000);
    expect((await scrape()).some((series) => series.name === 'petsing_render_backlog')).toBe(false);
    const backlog = (await scrape(controlMetricsUrl)).filter((series) => series.name.startsWith('petsing_render_backlog'));
    expect(backlog.map((series) => [series.name, series.labels])).toEqual(expect.arrayContaining([
      ['petsing_render_backlog', { queue: 'render' }],
      ['petsing_render_backlog_oldest_age_seconds', { queue: 'render' }],
    ]));
    for (const series of backlog) expect(series.value).toBeGreaterThanOrEqual(0);
  });

  it('counts one render through /v1, a cancel, a refused create and a rate-limited write exactly', async () => {
    const owner = await createTestAccount(context, 'metrics@example.com', 2);
    const broke = await createTestAccount(context, 'broke@example.com', 0);
    // Every process's registry: the API's, the control worker's and the render node's.
    const scrapeAll = async () => [...(await scrape()), ...(await scrape(controlMetricsUrl)), ...(await scrape(renderMetricsUrl))];
    const before = await scrapeAll();
    const delta = (after: Series[], name: string, labels: Record<string, string> = {}) => total(after, name, labels) - total(before, name, labels);

    // A photo checked by the render node (photo_check), then a template video of it, rendered to the end.
    const photo = new FormData();
    photo.append('image', new Blob([await petPhoto(384)], { type: 'image/png' }), 'pet.png');
    const checked = await api('POST', '/v1/images', owner.readWrite, photo);
    expect(checked.status, JSON.stringify(checked.body)).toBe(201);
    const created = await api('POST', '/v1/videos', owner.readWrite, { template_id: '1', image_id: checked.body.id });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    // A second one, canceled at once (failed with code canceled, its credit refunded), and a third the balance cannot pay.
    const canceled = await api('POST', '/v1/videos', owner.readWrite, { template_id: '1', image_id: checked.body.id });
    expect(canceled.status, JSON.stringify(canceled.body)).toBe(202);
    const refused = await api('POST', '/v1/videos', owner.readWrite, { template_id: '1', image_id: checked.body.id });
    expect(refused.status).toBe(402);
    const cancel = await api('POST', `/v1/videos/${canceled.body.id}/cancel`, owner.readWrite);
    expect(cancel.body).toMatchObject({ status: 'failed', error: { code: 'canceled' } });

    let polls = 0;
    let video: Json;
    await waitUntil('the video to complete', async () => {
      const answer = await api('GET', `/v1/videos/${created.body.id}`, owner.readOnly);
      polls += 1;
      video = answer.body;
      if (video.status === 'failed') throw new Error(`the render failed: ${JSON.stringify(video)}\n${service!.output().slice(-20_000)}`);
      return video.status === 'completed';
    }, 240_000);
    // A read of a video that does not exist still has its route's template.
    expect((await api('GET', `/v1/videos/${randomUUID()}`, owner.readOnly)).status).toBe(404);
    expect((await api('GET', '/no-such-page', undefined)).status).toBe(404);
    // One write over the limit of 5 a minute (every one of these is refused for its body before the limit is reached).
    await awayFromWindowEdge();
    const writes = [];
    for (let i = 0; i < 6; i++) writes.push((await api('POST', '/v1/videos', broke.readWrite, {})).status);
    expect(writes).toEqual([400, 400, 400, 400, 400, 429]);

    // Counters settle as their activities finish: the refund with the cancel, the completion with the last activity.
    let after: Series[] = [];
    await waitFor('the completion to be counted', async () => delta((after = await scrapeAll()), 'petsing_videos_completed_total') >= 1, 30_000);
    expect(delta(after, 'petsing_videos_created_total', { surface: 'api' })).toBe(2);
    expect(delta(after, 'petsing_videos_created_total')).toBe(2);
    expect(delta(after, 'petsing_videos_completed_total')).toBe(1);
    expect(delta(after, 'petsing_videos_failed_total', { code: 'canceled' })).toBe(1);
    expect(delta(after, 'petsing_videos_failed_total')).toBe(1);
    expect(delta(after, 'petsing_refunds_total', { payment: 'api_credit' })).toBe(1);
    expect(delta(after, 'petsing_refunds_total')).toBe(1);
    expect(delta(after, 'petsing_credits_spent_total', { kind: 'api_credit' })).toBe(2);
    expect(delta(after, 'petsing_credits_granted_total', { reason: 'refund' })).toBe(1);
    expect(delta(after, 'petsing_credits_granted_total')).toBe(1);
    expect(delta(after, 'petsing_rate_limit_refusals_total', { policy: 'write' })).toBe(1);
    expect(delta(after, 'petsing_rate_limit_refusals_total')).toBe(1);
    // Every GET /v1/videos/{id} of an existing video read it once, through the cache.
    expect(delta(after, 'petsing_video_poll_cache_requests_total')).toBe(polls + 1);
    expect(delta(after, 'petsing_video_poll_cache_requests_total', { result: 'miss' })).toBeGreaterThanOrEqual(1);

    // The render node's stages (on the CPU: the face rig), the photo check, and one speed per render.
    for (const stage of ['photo_check', 'frames', 'encode', 'upload']) {
      expect(delta(after, 'petsing_render_stage_duration_seconds_count', { stage, device: 'cpu' }), stage).toBeGreaterThanOrEqual(1);
    }
    expect(delta(after, 'petsing_render_stage_duration_seconds_count', { device: 'gpu' })).toBe(0);
    expect(delta(after, 'petsing_render_frames_per_second_count', { device: 'cpu' })).toBeGreaterThanOrEqual(1);
    // The rendered video's wait for a render node, once (the canceled one, if a node took it before the cancel).
    expect(delta(after, 'petsing_render_queue_wait_seconds_count')).toBeGreaterThanOrEqual(1);
    expect(delta(after, 'petsing_render_queue_wait_seconds_count')).toBeLessThanOrEqual(2);

    // Requests by route template: never a raw path or id.
    const requests = (labels: Record<string, string>) => delta(after, 'http_request_duration_seconds_count', labels);
    expect(requests({ method: 'POST', route: '/v1/images', status_code: '201' })).toBe(1);
    expect(requests({ method: 'POST', route: '/v1/videos', status_code: '202' })).toBe(2);
    expect(requests({ method: 'POST', route: '/v1/videos', status_code: '402' })).toBe(1);
    expect(requests({ method: 'POST', route: '/v1/videos', status_code: '400' })).toBe(5);
    expect(requests({ method: 'POST', route: '/v1/videos/:id/cancel', status_code: '200' })).toBe(1);
    expect(requests({ method: 'GET', route: '/v1/videos/:id', status_code: '200' })).toBe(polls);
    expect(requests({ method: 'GET', route: '/v1/videos/:id', status_code: '404' })).toBe(1);
    // No route matched: the unknown page, and the write refused by the limit in front of /v1's routes.
    expect(requests({ method: 'GET', route: 'unmatched', status_code: '404' })).toBe(1);
    expect(requests({ method: 'POST', route: 'unmatched', status_code: '429' })).toBe(1);
    const ids = [created.body.id, canceled.body.id, checked.body.id];
    const routes = new Set(after.filter((series) => series.name === 'http_request_duration_seconds_count').map((series) => series.labels.route!));
    for (const route of routes) {
      expect(route === 'unmatched' || route.startsWith('/'), route).toBe(true);
      for (const id of ids) expect(route).not.toContain(id);
    }
    expect(routes.has('/no-such-page')).toBe(false);
    expect(after.some((series) => Object.values(series.labels).some((value) => ids.some((id) => value.includes(id))))).toBe(false);

    // The Temporal SDK's own worker metrics, on the port 100 above the render node's, named as the catalogue has them.
    const temporal = await scrape(renderTemporalMetricsUrl);
    const names = new Set(temporal.map((series) => series.name));
    expect(names).toContain('temporal_worker_task_slots_available');
    expect(names).toContain('temporal_num_pollers');
    expect(names).toContain('temporal_activity_schedule_to_start_latency_seconds_bucket');
    expect(total(temporal, 'temporal_activity_execution_latency_seconds_count', { activity_type: 'renderLipSync' })).toBeGreaterThanOrEqual(1);
    expect([...names].filter((name) => name.startsWith('petsing_'))).toEqual([]);
  }, 420_000);
});
