import { fileURLToPath } from 'node:url';
import { Worker } from '@temporalio/worker';
import { controlActivitySchemas, parsedActivities, TASK_QUEUES } from '@petsing/workflows';
import { connectTemporalWorker, runWorker, waitForTemporal, WORKER_TEMPORAL_WAIT_MS } from '@petsing/platform/runtime';
import { temporalWorkerTracing } from '@petsing/platform/tracing';
import type { AppContext } from '../runtime/app-context.ts';
import { createControlActivities } from './control-activities.ts';

/**
 * The control-plane worker: runs the workflows and the activities that need the database, and makes sure
 * the recurring work (the monthly lifecycle email's schedule, the paid-video reconciler) exists. Production workers
 * load the workflow bundle built ahead of time (`npm run bundle:workflows`, WORKFLOW_BUNDLE_PATH); without one the worker bundles the workflow
 * code at start.
 */
export async function startControlWorker(context: AppContext): Promise<{ stop(): Promise<void> }> {
  const { env } = context.config;
  await waitForTemporal(env, WORKER_TEMPORAL_WAIT_MS);
  await context.services.recurringWork.ensure();
  // Tracing (docs/operations.md, "Traces"): a bundle built ahead of time carries the workflow interceptors already.
  const tracing = await temporalWorkerTracing(
    env.WORKFLOW_BUNDLE_PATH ? {} : { workflowModules: [fileURLToPath(import.meta.resolve('@petsing/workflows/workflow-interceptors'))] },
  );
  const connection = await connectTemporalWorker(env);
  const worker = await Worker.create({
    ...tracing,
    connection,
    namespace: env.TEMPORAL_NAMESPACE,
    taskQueue: TASK_QUEUES.control,
    // Each activity parses its input with its contract schema before it runs (a malformed one fails at once, non-retryably).
    activities: parsedActivities(controlActivitySchemas, createControlActivities(context.services)),
    ...(env.WORKFLOW_BUNDLE_PATH
      ? { workflowBundle: { codePath: env.WORKFLOW_BUNDLE_PATH } }
      : { workflowsPath: fileURLToPath(import.meta.resolve('@petsing/workflows/workflows')) }),
  });
  return runWorker(worker, connection);
}
