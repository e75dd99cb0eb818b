import { FAILURE_TYPES, TASK_QUEUES } from '../constants.ts';
import { parseContract } from '../contract-parsing.ts';
import { DetectFaceInput, renderActivitySchemas, type DetectFaceResult } from '../contract.ts';
import { proxyParsedActivities } from './parsed-activities.ts';

/**
 * A person waits for this answer before paying, so the timeouts are tight: a node that does not pick the
 * check up soon is busy or absent, and the caller is better told to retry than kept waiting. The API
 * gives up (and terminates the workflow) sooner still; these bound a workflow whose caller is gone.
 */
const render = proxyParsedActivities(renderActivitySchemas, {
  taskQueue: TASK_QUEUES.detect,
  scheduleToStartTimeout: '1 minute',
  startToCloseTimeout: '30 seconds',
  retry: {
    initialInterval: '1 second',
    maximumAttempts: 2,
    nonRetryableErrorTypes: [FAILURE_TYPES.permanent],
  },
});

/** Finds the pet's face on a stored photo, where the detector lives: on a render node, on its photo-check queue. */
export async function detectFace(input: DetectFaceInput): Promise<DetectFaceResult> {
  return render.detectFace(parseContract(DetectFaceInput, input, 'The input of the workflow detectFace'));
}
