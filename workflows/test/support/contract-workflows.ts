import { proxyActivities, type ActivityOptions } from '@temporalio/workflow';
import { renderActivitySchemas } from '../../src/contract.ts';
import { proxyParsedActivities } from '../../src/workflows/parsed-activities.ts';

// The real workflow, for its start input (it fails before it schedules anything).
export { detectFace } from '../../src/workflows/detect-face.workflow.ts';

/** Activities on the workflow's own task queue; three attempts, so a retry would show. */
const options: ActivityOptions = { startToCloseTimeout: '10 seconds', retry: { initialInterval: '100 milliseconds', maximumAttempts: 3 } };

/** Sends `input` to a render activity as it is, with no schema on the way: what a buggy or older caller could send. */
export async function sendRawInput(name: 'renderLipSync' | 'detectFace', input: unknown): Promise<unknown> {
  return proxyActivities<Record<string, (input: unknown) => Promise<unknown>>>(options)[name]!(input);
}

/** Calls detectFace as the workflows do: through the proxy that parses its result. */
export async function detectThroughContract(imageKey: string): Promise<unknown> {
  return proxyParsedActivities(renderActivitySchemas, options).detectFace({ imageKey });
}
