import { ApplicationFailure } from '@temporalio/common';
import type { z } from 'zod';
import { FAILURE_TYPES } from './constants.ts';
import type { ActivitiesOf, ActivitySchemas } from './contract.ts';

/**
 * Parsing at the receiving end of the contract (contract.ts). Safe in workflow code as well: zod and
 * ApplicationFailure are plain, deterministic JavaScript (the workflow side is proxyParsedActivities in
 * workflows/parsed-activities.ts).
 */

/** A field the contract refused, and why. */
export type ContractProblem = { field: string; message: string };

/**
 * `value` parsed with its contract schema (unknown fields dropped); a value that breaks the schema throws a
 * non-retryable ApplicationFailure of type ContractViolation whose message names each field (`what` says
 * whose value it was), with the problems as its details.
 */
export function parseContract<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const problems: ContractProblem[] = parsed.error.issues.map((issue) => ({
    field: issue.path.length > 0 ? issue.path.map(String).join('.') : '(the whole value)',
    message: issue.message,
  }));
  throw ApplicationFailure.create({
    type: FAILURE_TYPES.contract,
    nonRetryable: true,
    message: `${what} breaks the contract: ${problems.map(({ field, message }) => `${field}: ${message}`).join('; ')}`,
    details: [{ problems }],
  });
}

/**
 * The activities a worker serves, each parsing its input with its schema before the implementation runs:
 * a malformed input fails the activity at once, non-retryably, naming each field (retries would get the
 * same input). Hand this to Worker.create; every activity needs a schema (else this throws at start).
 */
export function parsedActivities<S extends ActivitySchemas>(schemas: S, implementations: ActivitiesOf<S>): ActivitiesOf<S> {
  const served: Record<string, (input: unknown) => Promise<unknown>> = {};
  for (const [name, implementation] of Object.entries(implementations as Record<string, (input: unknown) => Promise<unknown>>)) {
    const schema = Object.hasOwn(schemas, name) ? schemas[name] : undefined;
    if (!schema) throw new Error(`The activity ${name} has no schema in the contract.`);
    served[name] = async (input: unknown) => implementation(parseContract(schema.input, input, `The input of the activity ${name}`));
  }
  return served as ActivitiesOf<S>;
}
