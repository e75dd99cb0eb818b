import type { Kysely } from 'kysely';
import type { Database, LedgerEntry, LedgerReason } from '../db/schema.ts';

export type LedgerWrite = {
  userId: string;
  delta: number;
  reason: LedgerReason;
  videoId?: string | null;
  idempotencyKey?: string | null;
};

export class CreditRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** Appends one entry; the database trigger moves the balance and refuses an overdraft (SQLSTATE 23514). */
  append(entry: LedgerWrite, db: Kysely<Database> = this.db): Promise<LedgerEntry> {
    return db
      .insertInto('credit_ledger')
      .values({
        user_id: entry.userId,
        delta: entry.delta,
        reason: entry.reason,
        video_id: entry.videoId ?? null,
        idempotency_key: entry.idempotencyKey ?? null,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  async balance(userId: string): Promise<number> {
    const row = await this.db
      .selectFrom('credit_balances')
      .select('balance')
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return row?.balance ?? 0;
  }

  recent(userId: string, limit: number): Promise<LedgerEntry[]> {
    return this.db
      .selectFrom('credit_ledger')
      .selectAll()
      .where('user_id', '=', userId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
  }
}
