import { sleep } from '@temporalio/workflow';
import { TASK_QUEUES } from '../constants.ts';
import { parseContract } from '../contract-parsing.ts';
import { controlActivitySchemas, DeliverWebhookInput, type WebhookAttemptOutcome } from '../contract.ts';
import { proxyParsedActivities } from './parsed-activities.ts';

const control = proxyParsedActivities(controlActivitySchemas, {
  taskQueue: TASK_QUEUES.control,
  // An attempt waits at most 10 s for the receiver (plus name resolution); a failed HTTP answer is a
  // result, not an error, so these retries only cover the worker or the database failing mid-attempt.
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 10 },
});

/**
 * Delivers one webhook: an attempt, then, after each failure, a durable timer of the next delay of the
 * schedule and another attempt, until one succeeds, the schedule is spent or the endpoint is gone. Timers
 * live in Temporal, so the retries survive restarts of every process.
 */
export async function deliverWebhook(started: DeliverWebhookInput): Promise<WebhookAttemptOutcome> {
  const { deliveryId, firstAttempt, retryDelaysSeconds } = parseContract(DeliverWebhookInput, started, 'The input of the workflow deliverWebhook');
  for (let index = 0; ; index++) {
    const last = index >= retryDelaysSeconds.length;
    const outcome = await control.attemptWebhookDelivery({ deliveryId, attempt: firstAttempt + index, last });
    if (outcome !== 'failed' || last) return outcome;
    await sleep(retryDelaysSeconds[index]! * 1000);
  }
}
