import { TASK_QUEUES } from '../constants.ts';
import { parseContract } from '../contract-parsing.ts';
import { controlActivitySchemas, ReconcileVideosInput, type ReconcileVideosResult } from '../contract.ts';
import { proxyParsedActivities } from './parsed-activities.ts';

const control = proxyParsedActivities(controlActivitySchemas, {
  taskQueue: TASK_QUEUES.control,
  // A few Temporal calls per unsettled video; the next scheduled run picks up whatever this one did not reach.
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 3 },
});

/**
 * Started by RECONCILE_VIDEOS_SCHEDULE: every paid video either renders or is refunded, whatever process
 * died between its charge and its render. The result shows in the run's history for operators.
 */
export async function reconcileVideos(input: ReconcileVideosInput): Promise<ReconcileVideosResult> {
  return control.reconcileVideos(parseContract(ReconcileVideosInput, input, 'The input of the workflow reconcileVideos'));
}
