/**
 * `npm run bench:load [-- options]`: the embedded service as an operator starts it (`petsing start` supervising the
 * API, the control worker, the render worker and its own Temporal dev server, on a fresh Postgres database) under a
 * steady stream of real creates through /v1 for a set time: each a real pet photo checked by POST /v1/images, then
 * a video of a template song or of an uploaded clip (POST /v1/audio), rendered to the end. Prints throughput,
 * create-to-completed percentiles, the wait for a render node, the render stages' seconds per video (the service's
 * own histograms) and CPU-seconds per video by process. See docs/benchmarks.md (## Load) and docs/capacity.md.
 *
 * Options: --duration S (300) of arrivals; --rate N (10) videos a minute, evenly spaced; --drain S (900) to wait
 * for the last videos after the arrivals stop; --size PX (the service's default, 720) for RENDER_OUTPUT_SIZE.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { sql } from 'kysely';
import { parseArgs } from 'node:util';
import { loadControlPlaneConfig } from '../../control-plane/src/config/env.ts';
import { createLogger } from '../../control-plane/src/logging/logger.ts';
import { openAppContext } from '../../control-plane/src/runtime/bootstrap.ts';
import { createTestAccount } from '../support/accounts.ts';
import { toneWav } from '../support/audio.ts';
import { apiCall, videoOutcome } from '../support/http.ts';
import { createPostgresTestDatabase } from '../support/database.ts';
import { freeMetricsPort, parseScrape, total, type Series } from '../support/metrics-scrape.ts';
import { petPhoto } from '../support/pet-photo.ts';
import { freePort, runPetsing, serviceProcessEnv, stopProcess, waitUntil } from '../support/processes.ts';
import { percentile, printTable, processTreeSeconds, type TreeSeconds } from './stats.ts';

const { values: options } = parseArgs({
  options: {
    duration: { type: 'string', default: '300' },
    rate: { type: 'string', default: '10' },
    drain: { type: 'string', default: '900' },
    size: { type: 'string' },
  },
});
const positive = (name: string, value: string | undefined) => {
  const parsed = Number(value);
  if (!(parsed > 0)) throw new Error(`--${name} must be a positive number, got ${value}`);
  return parsed;
};
const DURATION_S = positive('duration', options.duration);
const RATE_PER_MINUTE = positive('rate', options.rate);
const DRAIN_S = positive('drain', options.drain);

/** Real photos of the development set, one per species the stream cycles through (never trained on; read only). */
const PETS_DIR = join(import.meta.dirname, '..', '..', '..', 'shared', 'pets');
const PHOTOS = ['dog-01.jpg', 'cat-01.jpg', 'rabbit-01.jpg', 'bird-01.jpg', 'hamster-01.jpg', 'dog-03.jpg', 'cat-02.jpg'];
/** The uploaded clip's length: a template song's order of length. */
const CLIP_SECONDS = 12;

type Outcome = {
  kind: 'template' | 'upload';
  createdAt: number;
  accepted?: number;
  finishedAt?: number;
  status?: string;
  error?: string;
};

const started = Date.now();
const dataDir = await mkdtemp(join(tmpdir(), 'petsing-load-'));
const database = await createPostgresTestDatabase();
const port = await freePort();
const metricsPort = await freeMetricsPort();
const controlMetricsPort = await freeMetricsPort();
const renderMetricsPort = await freeMetricsPort();
const baseUrl = `http://127.0.0.1:${port}`;
const env: Record<string, string> = {
  DATA_DIR: dataDir,
  PORT: String(port),
  HOST: '127.0.0.1',
  BASE_URL: baseUrl,
  DATABASE_URL: database.url!,
  METRICS_PORT: String(metricsPort),
  CONTROL_WORKER_METRICS_PORT: String(controlMetricsPort),
  RENDER_METRICS_PORT: String(renderMetricsPort),
  LOG_LEVEL: 'warn',
  RATE_LIMIT_READS_PER_MINUTE: '100000',
  RATE_LIMIT_WRITES_PER_MINUTE: '100000',
  ...(options.size ? { RENDER_OUTPUT_SIZE: options.size } : {}),
};
const petsing = runPetsing(['start'], serviceProcessEnv(env));
const service = petsing.child;

try {
  await petsing.serving(baseUrl, 300_000);
  const healthyAfter = (Date.now() - started) / 1000;
  // The first start renders the template previews on the same render node: the stream starts once they are done.
  await waitUntil('the template previews', async () => {
    if (service.exitCode !== null) throw new Error(`petsing start exited ${service.exitCode}`);
    const templates = (await fetch(`${baseUrl}/templates`).then((response) => response.json(), () => [])) as { preview_video_url: string | null }[];
    return templates.length > 0 && templates.every((template) => template.preview_video_url);
  }, 900_000);
  const warmAfter = (Date.now() - started) / 1000;
  // The account through this process's own services on the same database, closed before the service stops (its
  // Temporal client would otherwise wait for the service's dev server).
  const context = await openAppContext(loadControlPlaneConfig(env), createLogger('silent'), { database });
  const account = await createTestAccount(context, 'load@example.com', 100_000).finally(() => context.close());
  const templateIds = ((await api('GET', '/v1/templates', account.readOnly)).body as { data: { id: string }[] }).data.map((template) => template.id);
  const photos = await Promise.all(PHOTOS.map(async (name) => {
    const path = join(PETS_DIR, name);
    return existsSync(path) ? { name, body: await readFile(path), type: 'image/jpeg' } : { name: 'synthetic.png', body: await petPhoto(512), type: 'image/png' };
  }));
  const clip = toneWav(CLIP_SECONDS);
  console.log(`service: /health after ${healthyAfter.toFixed(1)} s, template previews done after ${warmAfter.toFixed(1)} s`);
  console.log(`stream: ${RATE_PER_MINUTE} videos a minute for ${DURATION_S} s, alternately a template song and an uploaded ${CLIP_SECONDS} s clip; photos ${[...new Set(photos.map((photo) => photo.name))].join(', ')}`);

  const before = await scrape();
  const writesBefore = await databaseWrites();
  const storedBefore = await storedBytes();
  const cpuBefore = processTreeSeconds(service.pid!);
  const outcomes: Outcome[] = [];
  const runs: Promise<void>[] = [];
  const streamStart = Date.now();
  const count = Math.floor((DURATION_S * RATE_PER_MINUTE) / 60);
  for (let i = 0; i < count; i++) {
    const at = streamStart + (i * 60_000) / RATE_PER_MINUTE;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now())));
    const outcome: Outcome = { kind: i % 2 === 0 ? 'template' : 'upload', createdAt: Date.now() };
    outcomes.push(outcome);
    runs.push(createAndFollow(outcome, account.readWrite, photos[i % photos.length]!, templateIds[i % templateIds.length]!, clip).catch((error: unknown) => {
      outcome.error = String(error);
    }));
  }
  const drainDeadline = Date.now() + DRAIN_S * 1000;
  await Promise.race([Promise.all(runs), new Promise((resolve) => setTimeout(resolve, Math.max(0, drainDeadline - Date.now())))]);
  const streamEnd = Date.now();
  const cpuAfter = processTreeSeconds(service.pid!);
  const after = await scrape();
  // Postgres publishes a backend's statistics within a second or so of its transactions.
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const writesAfter = await databaseWrites();
  const storedAfter = await storedBytes();

  const completed = report(outcomes, streamStart, streamEnd, before, after, cpuBefore, cpuAfter);
  const perVideo = (value: number) => (completed ? (value / completed).toFixed(1) : '–');
  console.log('');
  printTable(['database, per completed video', 'count'], [
    ['transactions committed', perVideo(writesAfter.xact_commit - writesBefore.xact_commit)],
    ['rows inserted', perVideo(writesAfter.tup_inserted - writesBefore.tup_inserted)],
    ['rows updated', perVideo(writesAfter.tup_updated - writesBefore.tup_updated)],
    ['rows deleted', perVideo(writesAfter.tup_deleted - writesBefore.tup_deleted)],
  ]);
  console.log('');
  const kinds = [...new Set([...storedAfter.keys()])].sort();
  printTable(['stored, per completed video', 'KB'], kinds.map((kind) => [kind, perVideo(((storedAfter.get(kind) ?? 0) - (storedBefore.get(kind) ?? 0)) / 1024)]));
} catch (error) {
  console.error(`${String(error)}\nthe service's output ended with:\n${petsing.output().slice(-20_000)}`);
  process.exitCode = 1;
} finally {
  await stopProcess(service);
  await database.drop();
  await rm(dataDir, { recursive: true, force: true });
}
// The Temporal SDK's native runtime, created by the account's services, holds the event loop open: exit as the other benches do.
process.exit(process.exitCode ?? 0);

async function createAndFollow(outcome: Outcome, key: string, photo: { name: string; body: Buffer; type: string }, templateId: string, clip: Buffer): Promise<void> {
  const image = new FormData();
  image.append('image', new Blob([photo.body], { type: photo.type }), photo.name);
  const checked = await api('POST', '/v1/images', key, image);
  if (checked.status !== 201) throw new Error(`POST /v1/images answered ${checked.status}: ${JSON.stringify(checked.body)}`);
  const imageId = (checked.body as { id: string }).id;
  let sound: { template_id: string } | { audio_id: string } = { template_id: templateId };
  if (outcome.kind === 'upload') {
    const audio = new FormData();
    audio.append('audio', new Blob([clip], { type: 'audio/wav' }), 'clip.wav');
    const stored = await api('POST', '/v1/audio', key, audio);
    if (stored.status !== 201) throw new Error(`POST /v1/audio answered ${stored.status}: ${JSON.stringify(stored.body)}`);
    sound = { audio_id: (stored.body as { id: string }).id };
  }
  const created = await api('POST', '/v1/videos', key, { ...sound, image_id: imageId });
  if (created.status !== 202) throw new Error(`POST /v1/videos answered ${created.status}: ${JSON.stringify(created.body)}`);
  outcome.accepted = Date.now();
  // The video's event stream, read to its end: the completion as seen here.
  outcome.status = await videoOutcome(baseUrl, (created.body as { id: string }).id, key);
  outcome.finishedAt = Date.now();
}

/** Prints the run's figures; answers how many videos completed. */
function report(outcomes: Outcome[], streamStart: number, streamEnd: number, before: Series[], after: Series[], cpuBefore: TreeSeconds, cpuAfter: TreeSeconds): number {
  const completed = outcomes.filter((outcome) => outcome.status === 'completed');
  const lastFinish = Math.max(...completed.map((outcome) => outcome.finishedAt!));
  const hours = (lastFinish - streamStart) / 3_600_000;
  const seconds = (values: number[], p: number) => (percentile(values, p) / 1000).toFixed(1);
  const latency = completed.map((outcome) => outcome.finishedAt! - outcome.createdAt);
  console.log(`\nvideos: ${outcomes.length} created, ${completed.length} completed, ${outcomes.filter((o) => o.status === 'failed').length} failed, ${outcomes.filter((o) => o.error).length} errors, ${outcomes.filter((o) => !o.status && !o.error).length} unfinished after the drain (${((streamEnd - streamStart) / 1000).toFixed(0)} s in all)`);
  for (const outcome of outcomes.filter((o) => o.error).slice(0, 3)) console.log(`  error: ${outcome.error}`);
  console.log(`throughput: ${(completed.length / hours).toFixed(0)} videos per hour (completed, first create to last completion)\n`);
  printTable(['create → completed (s)', 'p50', 'p95', 'p99', 'max'], [
    ['all', seconds(latency, 50), seconds(latency, 95), seconds(latency, 99), seconds(latency, 100)],
    ...(['template', 'upload'] as const).map((kind) => {
      const of = completed.filter((outcome) => outcome.kind === kind).map((outcome) => outcome.finishedAt! - outcome.createdAt);
      return [kind, seconds(of, 50), seconds(of, 95), seconds(of, 99), seconds(of, 100)];
    }),
  ]);
  const delta = (name: string, labels: Record<string, string> = {}) => total(after, name, labels) - total(before, name, labels);
  // The wait for a render node, as the service measured it (petsing_render_queue_wait_seconds): a stream opened after
  // the create misses a `queued` stage shorter than the time it takes to open.
  const waits = delta('petsing_render_queue_wait_seconds_count');
  const waitBound = (p: number) => {
    const buckets = after
      .filter((series) => series.name === 'petsing_render_queue_wait_seconds_bucket')
      .map((series) => ({ le: Number(series.labels.le === '+Inf' ? Infinity : series.labels.le), count: delta(series.name, { le: series.labels.le! }) }))
      .sort((a, b) => a.le - b.le);
    return `≤ ${buckets.find((bucket) => bucket.count >= (p / 100) * waits)?.le ?? '–'}`;
  };
  console.log(`\nqueue wait (queued → a render node took it), ${waits} renders: mean ${(delta('petsing_render_queue_wait_seconds_sum') / waits).toFixed(2)} s, p50 ${waitBound(50)} s, p95 ${waitBound(95)} s, p99 ${waitBound(99)} s (histogram buckets)`);
  const perVideo = (value: number) => (completed.length ? (value / completed.length).toFixed(2) : '–');
  console.log('');
  printTable(['stage', 'count', 'seconds per video (wall)'], ['photo_check', 'audio_preparation', 'frames', 'encode', 'upload'].map((stage) => [
    stage,
    delta('petsing_render_stage_duration_seconds_count', { stage }),
    perVideo(delta('petsing_render_stage_duration_seconds_sum', { stage })),
  ]));
  console.log('');
  const cpu = (key: keyof TreeSeconds) => cpuAfter[key] - cpuBefore[key];
  printTable(['CPU-seconds per completed video', 'seconds'], [
    ['petsing start (the supervisor)', perVideo(cpu('service'))],
    ['its processes that exited', perVideo(cpu('reaped'))],
    ['its running processes (API, control worker, render worker, Temporal dev server) with their finished children (ffmpeg, ffprobe, espeak-ng)', perVideo(cpu('live'))],
    ['Postgres (every backend of the machine)', perVideo(cpu('postgres'))],
    ['all of these', perVideo(cpu('service') + cpu('reaped') + cpu('live') + cpu('postgres'))],
  ]);
  return completed.length;
}

/** The bench database's commits and row writes so far (pg_stat_database). */
async function databaseWrites(): Promise<{ xact_commit: number; tup_inserted: number; tup_updated: number; tup_deleted: number }> {
  const { rows } = await sql<Record<'xact_commit' | 'tup_inserted' | 'tup_updated' | 'tup_deleted', string>>`
    select xact_commit, tup_inserted, tup_updated, tup_deleted from pg_stat_database where datname = current_database()`.execute(database.db);
  const row = rows[0]!;
  return { xact_commit: Number(row.xact_commit), tup_inserted: Number(row.tup_inserted), tup_updated: Number(row.tup_updated), tup_deleted: Number(row.tup_deleted) };
}

/** Bytes in the local object store by kind of object (a video's MP4, thumbnail, photo, audio; the rest by first key segment). */
async function storedBytes(): Promise<Map<string, number>> {
  const sizes = new Map<string, number>();
  const objects = join(dataDir, 'object-store', 'objects');
  for (const entry of await readdir(objects, { recursive: true, withFileTypes: true }).catch(() => [])) {
    if (!entry.isFile()) continue;
    const key = relative(objects, join(entry.parentPath, entry.name)).split(sep);
    const kind = key[0] === 'videos' ? videoObjectKind(key.at(-1)!) : `${key[0]}/`;
    sizes.set(kind, (sizes.get(kind) ?? 0) + (await stat(join(entry.parentPath, entry.name))).size);
  }
  return sizes;
}

function videoObjectKind(name: string): string {
  if (name.startsWith('video-')) return 'video MP4';
  if (name.startsWith('thumbnail-')) return 'thumbnail JPEG';
  if (name.startsWith('image')) return 'photo';
  if (name.startsWith('audio')) return 'audio (source and prepared)';
  return 'other per-video objects';
}

function api(method: string, path: string, key: string, body?: unknown) {
  return apiCall(baseUrl, method, path, key, body);
}

/** The registries of every process `petsing start` supervises: the API's, the control worker's, the render worker's. */
async function scrape(): Promise<Series[]> {
  const read = async (port: number) => parseScrape(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text());
  return [...(await read(metricsPort)), ...(await read(controlMetricsPort)), ...(await read(renderMetricsPort))];
}
