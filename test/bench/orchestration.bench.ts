/**
 * `npm run bench:orchestration [-- options]`: create-to-completed latency and throughput of the render
 * orchestration with the render itself replaced by a no-op. Everything else is real: a Temporal dev
 * server of its own, the control worker with its real activities (audio preparation runs ffmpeg), a fresh
 * Postgres database, a local object store. See docs/benchmarks.md (## Orchestration).
 *
 * Options: --jobs N (100) created at once; --serial N (10) created one after another, for the latency of
 * a job alone; --warmup N (3); control-worker tuning, which switches to a bench-built worker because
 * startControlWorker takes no options: --max-activities, --max-workflow-tasks, --activity-polls,
 * --workflow-polls, --cached-workflows.
 */
import { cpus, tmpdir } from 'node:os';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { renderSamplePet } from '@petsing/render-node';
import { renderWorkflowId } from '@petsing/workflows';
import { Runtime, type LogLevel } from '@temporalio/worker';
import { connectTemporalClient } from '@petsing/platform/runtime';
import { loadControlPlaneConfig } from '../../control-plane/src/config/env.ts';
import { createLogger } from '../../control-plane/src/logging/logger.ts';
import { VIDEO_STATUS_CHANNEL, type VideoStatusEvent } from '../../control-plane/src/repositories/video.repository.ts';
import { openAppContext } from '../../control-plane/src/runtime/bootstrap.ts';
import { startControlWorker } from '../../control-plane/src/temporal/control-worker.ts';
import { createPostgresTestDatabase, type TestDatabase } from '../support/database.ts';
import { freePort } from '../support/processes.ts';
import { startTunedControlWorker, type ControlWorkerTuning } from './control-worker-variant.ts';
import { breakdownHistory, type Breakdown } from './history-breakdown.ts';
import { makeMediaFixtures, startNoopRenderWorker } from './noop-render-worker.ts';
import { ms, percentile, printTable, sampleCpu, type CpuSample } from './stats.ts';
import { startTemporalDevServer, type DevServer } from './temporal-dev-server.ts';

const { values: options } = parseArgs({
  options: {
    jobs: { type: 'string', default: '100' },
    serial: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '3' },
    'max-activities': { type: 'string' },
    'max-workflow-tasks': { type: 'string' },
    'activity-polls': { type: 'string' },
    'workflow-polls': { type: 'string' },
    'cached-workflows': { type: 'string' },
  },
});
const count = (name: string, value: string | undefined) => {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0) throw new Error(`--${name} must be a whole number, got ${value}`);
  return parsed;
};
const JOBS = count('jobs', options.jobs);
const SERIAL = count('serial', options.serial);
const WARMUP = count('warmup', options.warmup);
const tuning: ControlWorkerTuning = {};
if (options['max-activities']) tuning.maxConcurrentActivityTaskExecutions = count('max-activities', options['max-activities']);
if (options['max-workflow-tasks']) tuning.maxConcurrentWorkflowTaskExecutions = count('max-workflow-tasks', options['max-workflow-tasks']);
if (options['activity-polls']) tuning.maxConcurrentActivityTaskPolls = count('activity-polls', options['activity-polls']);
if (options['workflow-polls']) tuning.maxConcurrentWorkflowTaskPolls = count('workflow-polls', options['workflow-polls']);
if (options['cached-workflows']) tuning.maxCachedWorkflows = count('cached-workflows', options['cached-workflows']);
/** A job that has not finished by then is reported as lost, and the run fails. */
const JOB_TIMEOUT_MS = 5 * 60_000;

/** Wall-clock ms with sub-ms resolution, on the same clock as Temporal's event times. */
const now = () => performance.timeOrigin + performance.now();

type Job = { id: string; start: number; created: number; done: number; status: string };
type Terminal = { at: number; status: string };

/** Terminal status changes as Postgres announces them (the same NOTIFY the status websocket relays). */
class Completions {
  private readonly seen = new Map<string, Terminal>();
  private readonly waiters = new Map<string, (terminal: Terminal) => void>();

  record(event: VideoStatusEvent, at: number): void {
    if (event.status !== 'completed' && event.status !== 'failed') return;
    // A job can finish before its create call has returned its id, so completions are kept, not only awaited.
    if (this.seen.has(event.videoId)) return;
    const terminal = { at, status: event.status };
    this.seen.set(event.videoId, terminal);
    this.waiters.get(event.videoId)?.(terminal);
  }

  wait(videoId: string): Promise<Terminal> {
    const seen = this.seen.get(videoId);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`video ${videoId} did not finish within ${JOB_TIMEOUT_MS} ms`)), JOB_TIMEOUT_MS);
      this.waiters.set(videoId, (terminal) => {
        clearTimeout(timer);
        resolve(terminal);
      });
    });
  }
}

/**
 * Temporal's own warnings (workflow tasks over 5 s, tasks that timed out before they were completed) are
 * symptoms worth reporting, but one line each would bury the tables; they are counted instead.
 */
const temporalWarnings = new Map<string, number>();
function installCountingTemporalLogger(): void {
  const count = (level: LogLevel, message: string) => {
    if (level !== 'WARN' && level !== 'ERROR') return;
    const kind = `${level} ${message.replace(/[0-9a-f]{8}-[0-9a-f-]{27}\S*/g, '…').slice(0, 90)}`;
    temporalWarnings.set(kind, (temporalWarnings.get(kind) ?? 0) + 1);
  };
  Runtime.install({
    logger: {
      log: count,
      trace: () => {},
      debug: () => {},
      info: () => {},
      warn: (message) => count('WARN', message),
      error: (message) => count('ERROR', message),
    },
    telemetryOptions: { logging: { filter: { core: 'WARN', other: 'ERROR' }, forward: {} } },
  });
}

type Phase = { name: string; jobs: Job[]; wall: number; cpu?: { before: CpuSample; after: CpuSample } };

async function main(): Promise<number> {
  const cleanups: (() => Promise<unknown>)[] = [];
  installCountingTemporalLogger();
  try {
    console.log(`petsing orchestration benchmark: ${JOBS} jobs at once, ${SERIAL} one at a time, ${WARMUP} warm-up`);
    console.log(`machine: ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}`);

    const server: DevServer = await startTemporalDevServer();
    cleanups.push(() => server.stop());
    const database: TestDatabase = await createPostgresTestDatabase();
    cleanups.push(() => database.drop());
    const databaseUrl = database.url;
    if (!databaseUrl) throw new Error('the benchmark needs a Postgres database');
    const dataDir = await mkdtemp(join(tmpdir(), 'petsing-bench-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));

    const env: Record<string, string> = {
      DATA_DIR: dataDir,
      PORT: String(await freePort()),
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: server.address,
      TEMPORAL_NAMESPACE: 'default',
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'error',
    };
    const config = loadControlPlaneConfig(env);
    const logger = createLogger(config.env.LOG_LEVEL);
    const context = await openAppContext(config, logger, { database });
    cleanups.push(() => context.close());

    const { services } = context;
    await services.templates.seed(logger);
    const userId = (await services.users.create({ email: 'bench@example.com' })).id;
    await services.credits.grant(userId, WARMUP + SERIAL + JOBS);
    const photo = await renderSamplePet(256);

    const render = await startNoopRenderWorker({
      address: server.address,
      namespace: 'default',
      objects: context.objectStore,
      fixtures: await makeMediaFixtures(),
    });
    cleanups.push(() => render.stop());
    const tuned = Object.keys(tuning).length > 0;
    const control = tuned
      ? await startTunedControlWorker(context, tuning)
      : await startControlWorker(context);
    cleanups.push(() => control.stop());
    console.log(
      `control worker: ${tuned ? `bench-built with ${JSON.stringify(tuning)}` : 'startControlWorker (SDK defaults)'}`,
    );

    const completions = new Completions();
    const listener = new pg.Client({ connectionString: databaseUrl });
    await listener.connect();
    cleanups.push(() => listener.end());
    listener.on('notification', (message) => {
      if (message.channel === VIDEO_STATUS_CHANNEL && message.payload) completions.record(JSON.parse(message.payload) as VideoStatusEvent, now());
    });
    await listener.query(`LISTEN ${VIDEO_STATUS_CHANNEL}`);

    const temporal = await connectTemporalClient(config.env);
    cleanups.push(() => temporal.close());

    const runJob = async (): Promise<Job> => {
      const start = now();
      const created = await services.videos.create({
        userId,
        origin: 'api',
        charge: { kind: 'api_credit' },
        watermark: false,
        templateId: 1,
        image: { upload: { body: photo, contentType: 'image/png', extension: 'png' } },
      });
      if (!created) throw new Error('the create was refused: not enough credits');
      const createdAt = now();
      const terminal = await completions.wait(created.video.id);
      return { id: created.video.id, start, created: createdAt, done: terminal.at, status: terminal.status };
    };
    const runSerially = async (n: number) => {
      const jobs: Job[] = [];
      for (let i = 0; i < n; i++) jobs.push(await runJob());
      return jobs;
    };

    await runSerially(WARMUP);
    const phases: Phase[] = [];
    if (SERIAL > 0) {
      const start = now();
      const jobs = await runSerially(SERIAL);
      phases.push({ name: `one at a time (${SERIAL})`, jobs, wall: now() - start });
    }
    if (JOBS > 0) {
      const before = sampleCpu(server.pid);
      const start = now();
      const jobs = await Promise.all(Array.from({ length: JOBS }, runJob));
      const wall = Math.max(...jobs.map((job) => job.done)) - start;
      phases.push({ name: `${JOBS} at once`, jobs, wall, cpu: { before, after: sampleCpu(server.pid) } });
    }

    const breakdowns = new Map<string, Breakdown>();
    for (const job of phases.flatMap((phase) => phase.jobs)) {
      const history = await temporal.client.workflow.getHandle(renderWorkflowId(job.id)).fetchHistory();
      breakdowns.set(job.id, breakdownHistory(history.events ?? [], job.start, job.created, job.done));
    }
    report(phases, breakdowns);
    if (temporalWarnings.size > 0) {
      console.log('\nTemporal warnings during the run (count × kind):');
      for (const [kind, times] of temporalWarnings) console.log(`  ${times} × ${kind}`);
    }

    const failed = phases.flatMap((phase) => phase.jobs).filter((job) => job.status !== 'completed');
    if (failed.length > 0) {
      console.error(`${failed.length} jobs did not complete: ${failed.map((job) => `${job.id} (${job.status})`).join(', ')}`);
      return 1;
    }
    return 0;
  } finally {
    for (const cleanup of cleanups.reverse()) {
      await cleanup().catch((error: unknown) => console.error('cleanup failed:', error));
    }
  }
}

function report(phases: Phase[], breakdowns: Map<string, Breakdown>): void {
  console.log('\nCreate-to-completed latency (ms; create call start → LISTEN sees `completed`). The render is a no-op,');
  console.log('so this is the orchestration overhead.\n');
  printTable(
    ['phase', 'jobs', 'p50', 'p95', 'max', 'wall time (s)', 'jobs/s'],
    phases.map((phase) => {
      const latencies = phase.jobs.map((job) => job.done - job.start);
      return [
        phase.name,
        phase.jobs.length,
        ms(percentile(latencies, 50)),
        ms(percentile(latencies, 95)),
        ms(Math.max(...latencies)),
        (phase.wall / 1000).toFixed(2),
        (phase.jobs.length / (phase.wall / 1000)).toFixed(1),
      ];
    }),
  );

  const segments = [...new Set([...breakdowns.values()].flatMap((breakdown) => [...breakdown.keys()]))];
  console.log('\nWhere the time goes (ms per job, p50 / p95; from the workflow histories):\n');
  printTable(
    ['segment', ...phases.flatMap((phase) => [`${phase.name} p50`, 'p95'])],
    segments.map((segment) => [
      segment,
      ...phases.flatMap((phase) => {
        const values = phase.jobs.map((job) => breakdowns.get(job.id)?.get(segment) ?? Number.NaN).filter(Number.isFinite);
        return [ms(percentile(values, 50)), ms(percentile(values, 95))];
      }),
    ]),
  );

  for (const phase of phases) {
    if (!phase.cpu) continue;
    const { before, after } = phase.cpu;
    const seconds = (key: keyof CpuSample) => after[key] - before[key];
    const wall = phase.wall / 1000;
    const cores = cpus().length;
    const self = seconds('self');
    const children = seconds('children');
    const temporalServer = seconds('server');
    const postgres = seconds('postgres');
    const rest = seconds('busy') - self - children - temporalServer - postgres;
    console.log(`\nCPU during "${phase.name}" (${wall.toFixed(2)} s wall, ${cores} cores = ${(wall * cores).toFixed(1)} core-seconds):\n`);
    printTable(
      ['who', 'CPU s', 'CPU ms per job'],
      [
        ['whole machine (busy)', seconds('busy').toFixed(2), ms((seconds('busy') * 1000) / phase.jobs.length)],
        ['bench process (workers, workflow sandbox, client)', self.toFixed(2), ms((self * 1000) / phase.jobs.length)],
        ['ffmpeg/ffprobe (audio preparation)', children.toFixed(2), ms((children * 1000) / phase.jobs.length)],
        ['temporal dev server', temporalServer.toFixed(2), ms((temporalServer * 1000) / phase.jobs.length)],
        ['postgres (the shared server: all sessions)', postgres.toFixed(2), ms((postgres * 1000) / phase.jobs.length)],
        ['rest (kernel, other processes)', rest.toFixed(2), ms((rest * 1000) / phase.jobs.length)],
      ],
    );
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
