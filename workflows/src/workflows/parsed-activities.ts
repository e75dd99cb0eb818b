import { proxyActivities, type ActivityOptions } from '@temporalio/workflow';
import { parseContract } from '../contract-parsing.ts';
import type { ActivitiesOf, ActivitySchemas } from '../contract.ts';

/**
 * proxyActivities, with each activity's result parsed with its schema when it arrives: a result that breaks
 * the contract throws a non-retryable ContractViolation naming each field, where the workflow awaits it.
 * The activity is scheduled exactly when the plain proxy would schedule it (synchronously, on the call), so
 * the commands, and the replay of histories recorded before, are unchanged. Workflow code only (not a
 * workflow: workflows/index.ts must not export it).
 */
export function proxyParsedActivities<S extends ActivitySchemas>(schemas: S, options: ActivityOptions): ActivitiesOf<S> {
  const activities = proxyActivities<Record<string, (input: unknown) => Promise<unknown>>>(options);
  const parsed: Record<string, (input: unknown) => Promise<unknown>> = {};
  for (const [name, { output }] of Object.entries(schemas)) {
    parsed[name] = async (input: unknown) => parseContract(output, await activities[name]!(input), `The result of the activity ${name}`);
  }
  return parsed as ActivitiesOf<S>;
}
