import { sleep } from '@temporalio/workflow';
import { TASK_QUEUES } from '../constants.ts';
import { parseContract } from '../contract-parsing.ts';
import { controlActivitySchemas, VideoDeadlineInput } from '../contract.ts';
import { proxyParsedActivities } from './parsed-activities.ts';

const control = proxyParsedActivities(controlActivitySchemas, {
  taskQueue: TASK_QUEUES.control,
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 20 },
});

/**
 * Started with a video created with deadline_seconds: a durable timer (it survives restarts of every
 * process), then the video is canceled and refunded unless it completed by then (a finished one is left alone).
 */
export async function enforceVideoDeadline(started: VideoDeadlineInput): Promise<void> {
  const input = parseContract(VideoDeadlineInput, started, 'The input of the workflow enforceVideoDeadline');
  await sleep(input.deadlineSeconds * 1000);
  await control.cancelVideoAtDeadline(input);
}
