import { runWorker } from '@petsing/platform/runtime';
import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { controlActivitySchemas, parsedActivities, TASK_QUEUES } from '@petsing/workflows';
import type { AppContext } from '../../control-plane/src/runtime/app-context.ts';
import { createControlActivities } from '../../control-plane/src/temporal/control-activities.ts';

export type ControlWorkerTuning = Pick<
  WorkerOptions,
  | 'maxConcurrentActivityTaskExecutions'
  | 'maxConcurrentWorkflowTaskExecutions'
  | 'maxConcurrentActivityTaskPolls'
  | 'maxConcurrentWorkflowTaskPolls'
  | 'maxCachedWorkflows'
>;

/**
 * The control worker as startControlWorker builds it (same activities, same workflow code) plus worker
 * options, which startControlWorker does not take yet. Used only when a tuning flag is given, to measure
 * what passing such options through would buy.
 */
export async function startTunedControlWorker(
  context: AppContext,
  tuning: ControlWorkerTuning,
): Promise<{ stop(): Promise<void> }> {
  const { env } = context.config;
  const connection = await NativeConnection.connect({ address: env.TEMPORAL_ADDRESS! });
  const worker = await Worker.create({
    connection,
    namespace: env.TEMPORAL_NAMESPACE,
    taskQueue: TASK_QUEUES.control,
    activities: parsedActivities(controlActivitySchemas, createControlActivities(context.services)),
    workflowsPath: fileURLToPath(import.meta.resolve('@petsing/workflows/workflows')),
    ...tuning,
  });
  return runWorker(worker, connection);
}
