import { workflowInfo } from '@temporalio/workflow';
import { TASK_QUEUES } from '../constants.ts';
import { controlActivitySchemas } from '../contract.ts';
import { proxyParsedActivities } from './parsed-activities.ts';

const control = proxyParsedActivities(controlActivitySchemas, {
  taskQueue: TASK_QUEUES.control,
  // One activity walks every opted-in user page by page; a retry starts over, which the per-user-and-month
  // dedupe keys make harmless.
  startToCloseTimeout: '1 hour',
  retry: { initialInterval: '1 minute', backoffCoefficient: 2, maximumInterval: '30 minutes', maximumAttempts: 10 },
});

/**
 * Started by the monthly schedule (FREE_CREDITS_EMAIL_SCHEDULE): announces the renewal of the month the
 * run started in, so a late catch-up run still names the right month and a second run sends nothing twice.
 */
export async function sendFreeCreditsRenewedEmails(): Promise<{ month: string; enqueued: number }> {
  const month = workflowInfo().startTime.toISOString().slice(0, 7);
  const { enqueued } = await control.enqueueFreeCreditsEmails({ month });
  return { month, enqueued };
}
