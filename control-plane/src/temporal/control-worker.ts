import { join } from 'node:path';
import { Worker } from '@temporalio/worker';
import { controlActivitySchemas, parsedActivities, TASK_QUEUES } from '@petsing/workflows';
import { cachedWorkflowBundle } from '@petsing/workflows/bundle';
import { connectTemporalWorker, runWorker, temporalLogger, waitForTemporal } from '@petsing/platform/runtime';
import { temporalWorkerTracing } from '@petsing/platform/tracing';
import type { AppContext } from '../runtime/app-context.ts';
import { createControlActivities } from './control-activities.ts';

/**
 * The control-plane worker: runs the workflows and the activities that need the database, and makes sure
 * the recurring work (the monthly lifecycle email's schedule, the paid-video reconciler) exists. Production workers
 * load the workflow bundle built ahead of time (`npm run bundle:workflows`, WORKFLOW_BUNDLE_PATH); without one the
 * worker keeps a bundle in DATA_DIR/workflow-bundle, made again only when the workflow code changes. It starts once
 * Temporal answers, however long that takes; `signal` ends the wait.
 */
export async function startControlWorker(context: AppContext, signal?: AbortSignal): Promise<{ stop(): Promise<void> }> {
  const { env } = context.config;
  // However long Temporal is away (a dev server starting again): the process goes on serving what it can meanwhile.
  await waitForTemporal(env, {
    ...(signal ? { signal } : {}),
    stillWaiting: (waitedSeconds, address) => context.logger.warn({ waitedSeconds, address }, 'the control worker is waiting for Temporal to answer'),
  });
  await context.services.recurringWork.ensure();
  // Tracing (docs/operations.md, "Traces"): the bundle carries the workflow interceptors; a worker that does not trace drops their spans.
  const tracing = await temporalWorkerTracing();
  // A bundle built ahead of time (production images), else the one kept in DATA_DIR, bundled again when the workflow
  // code changes; the bundler logs through ours (webpack's report one line, at debug).
  const codePath = env.WORKFLOW_BUNDLE_PATH ?? (await cachedWorkflowBundle(join(context.config.dataDir, 'workflow-bundle'), temporalLogger(context.logger.child({ part: 'workflow bundle' }))));
  const connection = await connectTemporalWorker(env);
  const worker = await Worker.create({
    ...tracing,
    connection,
    namespace: env.TEMPORAL_NAMESPACE,
    taskQueue: TASK_QUEUES.control,
    // Each activity parses its input with its contract schema before it runs (a malformed one fails at once, non-retryably).
    activities: parsedActivities(controlActivitySchemas, createControlActivities(context.services)),
    workflowBundle: { codePath },
  });
  return runWorker(worker, connection);
}
