import type { Migration } from 'kysely';
import * as initialSchema from './2026-11-26T00-00-00-initial-schema.ts';

/** Every migration, keyed by its timestamped name; Kysely runs them in key order. */
export const migrations: Record<string, Migration> = {
  '2026-11-26T00-00-00-initial-schema': initialSchema,
};
