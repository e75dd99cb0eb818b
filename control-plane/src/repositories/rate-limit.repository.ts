import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';

export class RateLimitRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** Counts one hit in a fixed window; atomic under concurrency (one upsert). Returns the hits so far. */
  async hit(bucket: string, windowStart: Date): Promise<number> {
    const row = await this.db
      .insertInto('rate_limit_windows')
      .values({ bucket, window_start: windowStart, hits: 1 })
      .onConflict((oc) => oc.columns(['bucket', 'window_start']).doUpdateSet({ hits: sql<number>`rate_limit_windows.hits + 1` }))
      .returning('hits')
      .executeTakeFirstOrThrow();
    return row.hits;
  }

  async deleteBefore(cutoff: Date): Promise<void> {
    await this.db.deleteFrom('rate_limit_windows').where('window_start', '<', cutoff).execute();
  }
}
