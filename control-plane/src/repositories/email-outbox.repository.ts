import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database, EmailOutboxTable } from '../db/schema.ts';

export type OutboxMessage = Selectable<EmailOutboxTable>;
export type OutboxStatus = OutboxMessage['status'];
/** A message due for delivery; its recipient may have opted out since it was queued. */
export type DeliverableMessage = OutboxMessage & { recipient_opted_out: boolean };

export type NewOutboxMessage = {
  userId: string;
  dedupeKey: string;
  kind: string;
  to: string;
  subject: string;
  text: string;
  headers: Record<string, string>;
};

/** Records what became of each message a dispatcher was handed. */
export class OutboxOutcomes {
  constructor(private readonly db: Kysely<Database>) {}

  async sent(id: string): Promise<void> {
    await this.db
      .updateTable('email_outbox')
      .set((eb) => ({ status: 'sent', attempts: eb('attempts', '+', 1), last_error: null, sent_at: new Date() }))
      .where('id', '=', id)
      .execute();
  }

  /** Counts a failed attempt; the message stays pending for a retry until it has had `maxAttempts`. */
  async attemptFailed(id: string, error: string, maxAttempts: number): Promise<OutboxStatus> {
    const row = await this.db
      .updateTable('email_outbox')
      .set((eb) => ({
        attempts: eb('attempts', '+', 1),
        last_error: error,
        status: sql<OutboxStatus>`case when attempts + 1 >= ${maxAttempts} then 'failed' else 'pending' end`,
      }))
      .where('id', '=', id)
      .returning('status')
      .executeTakeFirstOrThrow();
    return row.status;
  }

  /** Gives a message up without sending it. */
  async abandon(id: string, reason: string): Promise<void> {
    await this.db.updateTable('email_outbox').set({ status: 'failed', last_error: reason }).where('id', '=', id).execute();
  }
}

/** The email outbox: lifecycle messages wait here until the dispatcher hands them to SMTP. */
export class EmailOutboxRepository {
  /**
   * `lockRows` is false for PGlite: it is one connection, which a locking transaction would hold through
   * every SMTP round trip (stalling the API), and it admits a single process, so one dispatcher anyway.
   */
  constructor(
    private readonly db: Kysely<Database>,
    private readonly lockRows: boolean,
  ) {}

  /** Queues messages; one whose dedupe key is already in the outbox (any status) is skipped. Returns how many were queued. */
  async enqueue(messages: NewOutboxMessage[]): Promise<number> {
    if (messages.length === 0) return 0;
    const queued = await this.db
      .insertInto('email_outbox')
      .values(
        messages.map((message) => ({
          user_id: message.userId,
          dedupe_key: message.dedupeKey,
          kind: message.kind,
          to_address: message.to,
          subject: message.subject,
          text_body: message.text,
          headers: sql<Record<string, string>>`${JSON.stringify(message.headers)}::jsonb`,
        })),
      )
      .onConflict((conflict) => conflict.column('dedupe_key').doNothing())
      .returning('id')
      .execute();
    return queued.length;
  }

  /**
   * Hands up to `limit` pending messages that are due to `deliver`, oldest first. On Postgres they stay
   * locked (FOR UPDATE SKIP LOCKED) until `deliver` returns, so dispatchers in several processes never take
   * the same message. A message that failed waits retryBaseMs × (4^attempts − 1) after its creation.
   */
  async withDeliverable<T>(
    options: { limit: number; retryBaseMs: number },
    deliver: (messages: DeliverableMessage[], outcomes: OutboxOutcomes) => Promise<T>,
  ): Promise<T> {
    const claim = async (db: Kysely<Database>) => {
      const messages = await db
        .selectFrom('email_outbox as o')
        .leftJoin('users as u', 'u.id', 'o.user_id')
        .selectAll('o')
        .select(sql<boolean>`coalesce(u.email_opt_out, false)`.as('recipient_opted_out'))
        .where('o.status', '=', 'pending')
        .where(sql<boolean>`o.created_at <= now() - make_interval(secs => ${options.retryBaseMs / 1000} * (power(4, o.attempts) - 1))`)
        .orderBy('o.created_at')
        .orderBy('o.id')
        .limit(options.limit)
        .$if(this.lockRows, (query) => query.forUpdate('o').skipLocked())
        .execute();
      return deliver(messages, new OutboxOutcomes(db));
    };
    return this.lockRows ? this.db.transaction().execute(claim) : claim(this.db);
  }

  list(options: { status?: OutboxStatus | undefined; limit: number }): Promise<OutboxMessage[]> {
    return this.db
      .selectFrom('email_outbox')
      .selectAll()
      .$if(options.status !== undefined, (query) => query.where('status', '=', options.status!))
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(options.limit)
      .execute();
  }
}
