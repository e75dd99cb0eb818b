import { startProcessMetrics } from '@petsing/platform/metrics';
import { installTemporalRuntime } from '@petsing/platform/runtime';
import { stopTracing } from '@petsing/platform/tracing';
import type { ControlPlaneConfig } from '../config/env.ts';
import { prometheusMetrics } from '../metrics/prometheus-metrics.ts';
import type { Logger } from '../logging/logger.ts';
import { startControlWorker } from '../temporal/control-worker.ts';
import { startApiServer } from './api-server.ts';
import type { AppContext } from './app-context.ts';
import { openAppContext } from './bootstrap.ts';
import { startControlSocket } from './control-socket.ts';
import { startExpiredMediaSweep } from '../services/expired-media-sweep.ts';
import { readSeparatorModel } from '../media/separator/vocal-separator.ts';
import { Lifecycle } from './lifecycle.ts';
import { keepDataPrivate } from './private-files.ts';

export type ServiceParts = { api: boolean; controlWorker: boolean };

/**
 * Starts the control-plane parts this process runs: `petsing api` and `petsing worker control` one each, `petsing
 * serve` both (what `petsing start` supervises on the embedded database, which one process opens).
 */
export async function startService(config: ControlPlaneConfig, logger: Logger, parts: ServiceParts): Promise<Lifecycle> {
  // One metrics endpoint per process (docs/metrics.md): the API's port when it runs the API (the API and control
  // worker of `petsing serve` both count into it), else the control worker's; the Temporal SDK's own 100 above it.
  const { env } = config;
  const endpoint = parts.api ? { port: env.METRICS_PORT, setting: 'METRICS_PORT' } : parts.controlWorker ? { port: env.CONTROL_WORKER_METRICS_PORT, setting: 'CONTROL_WORKER_METRICS_PORT' } : undefined;
  const processMetrics = endpoint && (await startProcessMetrics({ host: env.METRICS_HOST, ...endpoint, temporalWorkers: parts.controlWorker }));
  const lifecycle = new Lifecycle(logger);
  // Stopped last: the spans of everything stopped before it are exported (a no-op when the process does not trace).
  lifecycle.add('traces', stopTracing);
  if (processMetrics) lifecycle.add('metrics endpoint', processMetrics.close);
  installTemporalRuntime(logger.child({ part: 'temporal' }), { metricsBindAddress: processMetrics?.temporalBindAddress, server: env });
  const metrics = processMetrics && prometheusMetrics(processMetrics.registry);
  try {
    if (config.env.DEV_ALLOW_LOCAL_URLS) {
      logger.warn(
        'DEV_ALLOW_LOCAL_URLS=true: user URLs (image_url, soundtrack media) may reach http://, any port, loopback and private '
          + 'addresses of this machine and its network. For development only; never set it on a server others can reach.',
      );
    }
    // A missing or altered vocal separator stops a control worker before anything else opens (its path and expected hash said).
    if (parts.controlWorker) await readSeparatorModel(env.SEPARATOR_MODEL_PATH);
    const context = await openAppContext(config, logger, metrics ? { metrics } : {});
    lifecycle.add('database', context.close);
    if (parts.controlWorker) lifecycle.add('vocal separator', () => context.services.vocalStems.release());
    if (context.database.kind === 'pglite') {
      // PGlite unpacks its first database with the modes of its virtual file system (0666): tighten them.
      await keepDataPrivate(config.dataDir);
      const controlSocket = await startControlSocket(context);
      lifecycle.add('control socket', controlSocket.close);
    }
    // A first start builds the songs (seconds) while the API already serves; template requests wait for them.
    // A stop meanwhile waits for the songs being built only.
    const stopSeeding = new AbortController();
    const songs = parts.api ? context.services.templates.seedInBackground(logger, stopSeeding.signal) : undefined;
    if (songs) {
      lifecycle.add('template songs', () => {
        stopSeeding.abort();
        return songs;
      });
    }
    // The API answers at once, whether or not Temporal does yet (GET /health/ready says what is down, and a create
    // that cannot be queued is refused before it is charged); the control worker waits for Temporal meanwhile, however
    // long that takes (a dev server that is started again), rather than exit.
    const api = parts.api ? await startApiServer(context) : undefined;
    const worker = parts.controlWorker ? startControlWorkerParts(context, metrics !== undefined) : undefined;
    if (worker) {
      lifecycle.add('control worker', worker.stop);
      if (api) {
        // `petsing serve`: a worker that cannot start stops the process, which its supervisor starts again.
        worker.started.catch(async (error: unknown) => {
          if ((error as Error).name === 'AbortError') return; // stopped while it waited for Temporal
          logger.error({ err: error }, 'the control worker could not start; stopping');
          await lifecycle.stop();
          process.exit(1);
        });
      } else {
        await worker.started;
      }
    }
    if (parts.api || parts.controlWorker) {
      const sweep = context.services.sweeper.start({ scratch: true, objects: parts.controlWorker });
      lifecycle.add('orphan sweep', sweep.stop);
    }
    if (songs && config.env.TEMPLATE_PREVIEWS) {
      // Then the preview clips render on whichever render node is free (queued once a control worker polls, and
      // once Temporal answers when this process runs one).
      const { templates, scheduler } = context.services;
      const previews = Promise.all([songs, worker?.started]).then(() =>
        stopSeeding.signal.aborted ? 0 : templates.schedulePreviews(scheduler).catch((error: unknown) => logger.warn({ err: error }, 'could not queue template preview renders; they are retried at the next start')),
      );
      previews.catch(() => {});
      lifecycle.add('template previews', () => previews.then(() => undefined, () => undefined));
    }
    // Stopped first: no new work is accepted while the workers drain.
    if (api) lifecycle.add('api server', api.close);
    return lifecycle;
  } catch (error) {
    await lifecycle.stop();
    throw error;
  }
}

/**
 * The control worker and the background work that runs beside it. `started` resolves once the worker polls (it first
 * waits for Temporal); `stop` ends that wait, or stops what started, in reverse order.
 */
function startControlWorkerParts(context: AppContext, sampleBacklog: boolean): { started: Promise<void>; stop(): Promise<void> } {
  const waiting = new AbortController();
  const parts = new Lifecycle(context.logger);
  const started = (async () => {
    const worker = await startControlWorker(context, waiting.signal);
    parts.add('control worker', worker.stop);
    const { images, hostedAudio, emailDispatcher, renderBacklog } = context.services;
    const emailDispatch = emailDispatcher.start();
    parts.add('email dispatcher', emailDispatch.stop);
    const mediaSweep = startExpiredMediaSweep({ photos: () => images.sweepExpired(), audio: () => hostedAudio.sweepExpired() }, context.logger);
    parts.add('expired media sweep', mediaSweep.stop);
    if (sampleBacklog) {
      const backlog = renderBacklog.start();
      parts.add('render backlog sampling', backlog.stop);
    }
  })();
  return {
    started,
    stop: async () => {
      waiting.abort();
      await started.catch(() => undefined);
      await parts.stop();
    },
  };
}
