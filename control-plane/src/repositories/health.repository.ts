import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';

/** The database's side of GET /health/ready. */
export class HealthRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async ping(): Promise<void> {
    await sql`select 1`.execute(this.db);
  }
}
