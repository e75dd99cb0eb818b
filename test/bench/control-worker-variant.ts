import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { TASK_QUEUES, type ControlActivities, type PreparedAudio } from '@petsing/workflows';
import { AudioPreparer } from '../../control-plane/src/media/audio-preparer.ts';
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
 *
 * `cachedTemplateAudio` is a what-if, not product behaviour: audio preparation runs ffmpeg once per source
 * object and every later video of that template reuses the prepared WAV. It shows what a prepared-audio
 * cache for template songs would buy.
 */
export async function startTunedControlWorker(
  context: AppContext,
  tuning: ControlWorkerTuning,
  options: { cachedTemplateAudio?: boolean } = {},
): Promise<{ stop(): Promise<void> }> {
  const { env } = context.config;
  const activities = createControlActivities(context.services.renders);
  const connection = await NativeConnection.connect({ address: env.TEMPORAL_ADDRESS! });
  const worker = await Worker.create({
    connection,
    namespace: env.TEMPORAL_NAMESPACE,
    taskQueue: TASK_QUEUES.control,
    activities: options.cachedTemplateAudio ? { ...activities, prepareAudio: cachedPrepareAudio(context) } : activities,
    workflowsPath: fileURLToPath(import.meta.resolve('@petsing/workflows/workflows')),
    ...tuning,
  });
  const running = worker.run();
  return {
    stop: async () => {
      worker.shutdown();
      await running;
      await connection.close();
    },
  };
}

function cachedPrepareAudio(context: AppContext): ControlActivities['prepareAudio'] {
  const preparer = new AudioPreparer(context.objectStore);
  const prepared = new Map<string, Promise<PreparedAudio>>();
  return ({ sourceAudioKey }) => {
    let entry = prepared.get(sourceAudioKey);
    if (!entry) {
      // Outside any video's prefix, so deleting a video never removes the shared track.
      const audioKey = `prepared-audio/${createHash('sha256').update(sourceAudioKey).digest('hex').slice(0, 32)}.wav`;
      entry = preparer.prepare(sourceAudioKey, audioKey).then(({ durationSeconds }) => ({ audioKey, durationSeconds }));
      entry.catch(() => prepared.delete(sourceAudioKey));
      prepared.set(sourceAudioKey, entry);
    }
    return entry;
  };
}
