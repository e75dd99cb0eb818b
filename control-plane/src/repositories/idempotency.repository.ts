import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';

export type IdempotencyRecord = { requestHash: string; status: number | null; body: unknown; createdAt: Date };

export class IdempotencyRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** Claims a key for a request; false when the key is already taken (by this or another request). */
  async claim(userId: string, key: string, requestHash: string): Promise<boolean> {
    const inserted = await this.db
      .insertInto('idempotency_keys')
      .values({ user_id: userId, key, request_hash: requestHash })
      .onConflict((oc) => oc.columns(['user_id', 'key']).doNothing())
      .returning('key')
      .executeTakeFirst();
    return inserted !== undefined;
  }

  async find(userId: string, key: string): Promise<IdempotencyRecord | undefined> {
    const row = await this.db
      .selectFrom('idempotency_keys')
      .selectAll()
      .where('user_id', '=', userId)
      .where('key', '=', key)
      .executeTakeFirst();
    return row && { requestHash: row.request_hash, status: row.response_status, body: row.response_body, createdAt: row.created_at };
  }

  async complete(userId: string, key: string, status: number, body: unknown): Promise<void> {
    await this.db
      .updateTable('idempotency_keys')
      .set({ response_status: status, response_body: JSON.stringify(body) })
      .where('user_id', '=', userId)
      .where('key', '=', key)
      .execute();
  }

  async release(userId: string, key: string): Promise<void> {
    await this.db.deleteFrom('idempotency_keys').where('user_id', '=', userId).where('key', '=', key).execute();
  }

  async deleteExpired(userId: string, key: string, cutoff: Date): Promise<void> {
    await this.db
      .deleteFrom('idempotency_keys')
      .where('user_id', '=', userId)
      .where('key', '=', key)
      .where('created_at', '<', cutoff)
      .execute();
  }
}
