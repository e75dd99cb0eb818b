import { mkdir, rename, stat } from 'node:fs/promises';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { ApplicationFailure } from '@temporalio/activity';
import { Worker } from '@temporalio/worker';
import { z } from 'zod';
import { FAILURE_TYPES, parsedActivities, RENDER_PROGRESS_SIGNAL, RENDER_STARTED_SIGNAL, renderActivitySchemas, TASK_QUEUES } from '@petsing/workflows';
import {
  ConfigError,
  connectTemporalClient,
  connectTemporalWorker,
  loadSigningSecret,
  metricsPort,
  objectStoreConfig,
  parseEnvironment,
  resolveDataDir,
  runWorker,
  sharedEnvProblems,
  sharedEnvShape,
  waitForTemporal,
} from '@petsing/platform/runtime';
import { createObjectStore, type ObjectStore } from '@petsing/platform/storage';
import { temporalWorkerTracing } from '@petsing/platform/tracing';
import { renderNodeEnvSchema } from '../config.ts';
import { loadLipSyncModel } from '../lipsync-model.ts';
import { loadOnnxFaceDetector } from '../onnx-detector.ts';
import { loadPetFaceModel } from '../pet-face-model.ts';
import type { Logger } from '../logger.ts';
import { startScratchSweep, type RenderRecord } from '../scratch.ts';
import { createRenderActivities } from './render-activities.ts';
import { deviceOf, noRenderNodeMetrics, type RenderNodeMetrics } from './render-metrics.ts';

/** A render node's whole environment: Temporal, object storage and the model settings. No database. */
export const renderWorkerEnvSchema = z.object({
  ...sharedEnvShape,
  ...renderNodeEnvSchema.shape,
  RENDER_CONCURRENCY: z.coerce.number().int().min(1).max(32).default(1),
  /** Photo checks at once, on their own queue beside the renders (each takes well under a second). */
  RENDER_DETECT_CONCURRENCY: z.coerce.number().int().min(1).max(32).default(2),
  /** GET /metrics of `petsing worker render` (on METRICS_HOST; the Temporal SDK's 100 above); 0: none. The embedded service serves its render worker's on METRICS_PORT. */
  RENDER_METRICS_PORT: metricsPort(9466),
});
export type RenderWorkerEnv = z.infer<typeof renderWorkerEnvSchema>;

export function loadRenderWorkerEnv(env: NodeJS.ProcessEnv = process.env): RenderWorkerEnv {
  const parsed = parseEnvironment(renderWorkerEnvSchema, env);
  const problems = sharedEnvProblems(parsed);
  if (problems.length > 0) throw new ConfigError(problems);
  return parsed;
}

export type RunningRenderWorker = { stop(): Promise<void> };

/** The queues a render node serves: activities only, by design (the workflows run on the control worker). */
export const RENDER_TASK_QUEUES = [TASK_QUEUES.render, TASK_QUEUES.detect] as const;

/**
 * Starts a render node: loads the pet-face model, and warms up a learned lip-sync model first when one is
 * configured (so it never takes a job it cannot run), then serves the GPU task queue and the photo-check
 * queue until stopped.
 */
export async function startRenderWorker(env: RenderWorkerEnv, logger: Logger, metrics: RenderNodeMetrics = noRenderNodeMetrics): Promise<RunningRenderWorker> {
  // First: what a node killed before this one left (a partial MP4 of 1.6 MB and more) goes now, not after the models
  // load. A start that fails leaves its timer, which keeps no process alive.
  // A render its predecessor died in is handed back to Temporal as soon as this node can reach it, rather than after
  // the render's 30 s heartbeat timeout (renders found before that wait for it).
  const leftRenders: { waiting: RenderRecord[]; handBack?: (render: RenderRecord) => void } = { waiting: [] };
  const scratchSweep = startScratchSweep(logger, { renderLeft: (render) => (leftRenders.handBack ? leftRenders.handBack(render) : leftRenders.waiting.push(render)) });
  const objects = createObjectStore(objectStoreConfig(env, await loadSigningSecret(env)));
  const modelPath = await resolveModelPath(env, objects);
  const model = modelPath
    ? await loadLipSyncModel({
        modelPath,
        provider: env.RENDER_EXECUTION_PROVIDER,
        cudaFallback: env.RENDER_CUDA_FALLBACK,
        batchSize: env.RENDER_BATCH_SIZE,
        logger,
      })
    : undefined;
  logger.info('renderer ready', model ? { renderer: 'model', source: model.source, provider: model.provider, faceSize: model.faceSize } : { renderer: 'face-rig' });
  const petFaceModel = env.RENDER_DETECTOR_MODEL_PATH
    ? undefined
    : await loadPetFaceModel({ provider: env.RENDER_EXECUTION_PROVIDER, cudaFallback: env.RENDER_CUDA_FALLBACK, logger });
  // A custom detector (RENDER_DETECTOR_MODEL_PATH) runs on the CPU.
  const detector = petFaceModel ?? (await loadOnnxFaceDetector(env.RENDER_DETECTOR_MODEL_PATH!, { logger }));

  // However long Temporal is away (a dev server starting again), rather than exit and be started again.
  await waitForTemporal(env, { stillWaiting: (waitedSeconds, address) => logger.warn('the render worker is waiting for Temporal to answer', { waitedSeconds, address }) });
  const temporal = await connectTemporalClient(env);
  const handingBack = new Set<Promise<void>>();
  leftRenders.handBack = (render) => {
    const handed = handBackRender(temporal.client, render, logger);
    handingBack.add(handed);
    void handed.finally(() => handingBack.delete(handed));
  };
  for (const render of leftRenders.waiting.splice(0)) leftRenders.handBack(render);
  const signalsInFlight = new Set<Promise<void>>();
  /** Signals a render's workflow within a deadline, tracked so a stopping node waits for what it sent. */
  const signal = (workflowId: string, name: string, ...args: unknown[]) => {
    const sent = temporal.client.connection.withDeadline(Date.now() + SIGNAL_DEADLINE_MS, () => temporal.client.workflow.getHandle(workflowId).signal(name, ...args));
    signalsInFlight.add(sent);
    return sent.finally(() => signalsInFlight.delete(sent));
  };
  // Each activity parses its input with its contract schema before it runs (a malformed one fails at once, non-retryably).
  const activities = parsedActivities(renderActivitySchemas, createRenderActivities({
    objects,
    ...(model ? { model } : {}),
    width: env.RENDER_OUTPUT_SIZE,
    ...(env.RENDER_RIG_THREADS === undefined ? {} : { rigThreads: env.RENDER_RIG_THREADS }),
    fps: env.RENDER_FPS,
    logger,
    detector,
    metrics,
    devices: { render: deviceOf(model?.provider), detect: deviceOf(petFaceModel?.provider) },
    signalProgress: (workflowId, percent) => signal(workflowId, RENDER_PROGRESS_SIGNAL, percent),
    signalStarted: (workflowId) => signal(workflowId, RENDER_STARTED_SIGNAL),
  }));
  // Tracing (docs/operations.md, "Traces"): each activity runs in a span that continues its workflow's trace.
  const tracing = await temporalWorkerTracing();
  /** One worker per task queue, each on its own connection with its own slots, so a check never waits behind a render. */
  const serve = async (taskQueue: string, slots: number, served: Parameters<typeof Worker.create>[0]['activities'], options: Partial<Parameters<typeof Worker.create>[0]> = {}) => {
    const connection = await connectTemporalWorker(env);
    const worker = await Worker.create({ ...tracing, connection, namespace: env.TEMPORAL_NAMESPACE, taskQueue, maxConcurrentActivityTaskExecutions: slots, activities: served, ...options });
    return runWorker(worker, connection);
  };
  const running = [
    await serve(TASK_QUEUES.render, env.RENDER_CONCURRENCY, { renderLipSync: activities.renderLipSync }, {
      // A cancellation (a deleted or canceled video) reaches a running render only in a heartbeat's answer: the SDK's
      // default throttle (0.8 × the 30 s heartbeat timeout) would keep a node rendering for nobody for up to 24 s.
      maxHeartbeatThrottleInterval: '2 seconds',
    }),
    await serve(TASK_QUEUES.detect, env.RENDER_DETECT_CONCURRENCY, { detectFace: activities.detectFace }),
  ];
  return {
    stop: async () => {
      await Promise.all(running.map((worker) => worker.stop()));
      await scratchSweep.stop();
      await Promise.allSettled(handingBack);
      // The client retries a failed signal from a timer, which throws once the connection is closed.
      await Promise.allSettled(signalsInFlight);
      await temporal.close();
      await detector.release?.();
    },
  };
}

/**
 * Fails the render a node killed mid-render left (its attempt), retryably, so that Temporal retries it at once (on this
 * node or another) instead of after its heartbeat timeout. An attempt that already ended (its heartbeat timed out and it
 * was retried, or it was cancelled) is not found: nothing to do.
 */
async function handBackRender(client: TemporalClient, { taskToken, videoId, workflowId }: RenderRecord, logger: Logger): Promise<void> {
  try {
    await client.activity.fail(taskToken, ApplicationFailure.retryable('the render node rendering this video stopped mid-render; the node started after it handed the render back', FAILURE_TYPES.renderNodeLost));
    logger.info('handed back a render the node before this one stopped in', { videoId, workflowId });
  } catch (error) {
    // @temporalio/client's ActivityNotFoundError.
    if (error instanceof Error && error.name === 'ActivityNotFoundError') return;
    logger.warn('could not hand back a render the node before this one stopped in; Temporal retries it after its heartbeat timeout', { videoId, workflowId, error: String(error) });
  }
}

type TemporalClient = Awaited<ReturnType<typeof connectTemporalClient>>['client'];


/** A signal still unanswered by then is dropped: the next progress signal carries newer progress anyway. */
const SIGNAL_DEADLINE_MS = 10_000;

/** RENDER_MODEL_PATH is a local file, or else an object-store key fetched once into DATA_DIR/models. */
async function resolveModelPath(env: RenderWorkerEnv, objects: ObjectStore): Promise<string | undefined> {
  const configured = env.RENDER_MODEL_PATH;
  if (!configured) return undefined;
  if (await stat(configured).then((s) => s.isFile(), () => false)) return configured;
  const cached = join(resolveDataDir(env), 'models', configured.replaceAll('/', '_'));
  if (!(await stat(cached).then((s) => s.isFile(), () => false))) {
    await mkdir(join(resolveDataDir(env), 'models'), { recursive: true });
    const object = await objects.get(configured);
    const partial = `${cached}.${process.pid}.partial`;
    await pipeline(object.body, createWriteStream(partial));
    await rename(partial, cached);
  }
  return cached;
}
