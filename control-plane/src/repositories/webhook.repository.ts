import { sql, type Insertable, type Kysely } from 'kysely';
import type { Database, WebhookDeliveriesTable, WebhookDelivery, WebhookDeliveryAttempt, WebhookDeliveryState, WebhookEndpoint, WebhookEventType } from '../db/schema.ts';

export type NewWebhookDelivery = Insertable<WebhookDeliveriesTable>;

export type AttemptRecord = Omit<WebhookDeliveryAttempt, 'attempted_at'>;

export class WebhookRepository {
  constructor(private readonly db: Kysely<Database>) {}

  countEndpoints(userId: string): Promise<number> {
    return this.db
      .selectFrom('webhook_endpoints')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow()
      .then((row) => Number(row.count));
  }

  insertEndpoint(row: { user_id: string; url: string; events: WebhookEventType[]; secret_ciphertext: string }): Promise<WebhookEndpoint> {
    return this.db.insertInto('webhook_endpoints').values(row).returningAll().executeTakeFirstOrThrow();
  }

  listEndpoints(userId: string): Promise<WebhookEndpoint[]> {
    return this.db.selectFrom('webhook_endpoints').selectAll().where('user_id', '=', userId).orderBy('created_at').execute();
  }

  findEndpoint(userId: string, id: string): Promise<WebhookEndpoint | undefined> {
    return this.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
  }

  findEndpointById(id: string): Promise<WebhookEndpoint | undefined> {
    return this.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async deleteEndpoint(userId: string, id: string): Promise<boolean> {
    const deleted = await this.db.deleteFrom('webhook_endpoints').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
    return deleted.numDeletedRows > 0n;
  }

  /** The current secret becomes the previous one, signing until `overlapUntil`. */
  rotateEndpointSecret(userId: string, id: string, secretCiphertext: string, overlapUntil: Date): Promise<WebhookEndpoint | undefined> {
    return this.db
      .updateTable('webhook_endpoints')
      .set((eb) => ({
        previous_secret_ciphertext: eb.ref('secret_ciphertext'),
        previous_secret_expires_at: overlapUntil,
        secret_ciphertext: secretCiphertext,
        updated_at: new Date(),
      }))
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .returningAll()
      .executeTakeFirst();
  }

  accountSecret(userId: string) {
    return this.db.selectFrom('webhook_account_secrets').selectAll().where('user_id', '=', userId).executeTakeFirst();
  }

  /** Sets the account's default secret; an earlier one keeps signing until `overlapUntil`. */
  async rotateAccountSecret(userId: string, secretCiphertext: string, overlapUntil: Date): Promise<void> {
    await this.db
      .insertInto('webhook_account_secrets')
      .values({ user_id: userId, secret_ciphertext: secretCiphertext })
      .onConflict((conflict) =>
        conflict.column('user_id').doUpdateSet({
          previous_secret_ciphertext: sql.ref('webhook_account_secrets.secret_ciphertext'),
          previous_secret_expires_at: overlapUntil,
          secret_ciphertext: secretCiphertext,
        }),
      )
      .execute();
  }

  /** The account's enabled endpoints that subscribed to the event. */
  subscribedEndpoints(userId: string, event: WebhookEventType): Promise<WebhookEndpoint[]> {
    return this.db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('user_id', '=', userId)
      .where('disabled_at', 'is', null)
      .where(sql<boolean>`${event} = any(events)`)
      .execute();
  }

  /**
   * Records a video event's deliveries, each once: a row already there for the same (video, event, target)
   * wins, so an emission repeated by a retried activity adds nothing. Answers every delivery of the event.
   */
  async insertVideoDeliveries(videoId: string, event: WebhookEventType, rows: NewWebhookDelivery[]): Promise<WebhookDelivery[]> {
    if (rows.length > 0) {
      await this.db.insertInto('webhook_deliveries').values(rows).onConflict((conflict) => conflict.columns(['video_id', 'event_type', 'target']).doNothing()).execute();
    }
    return this.db.selectFrom('webhook_deliveries').selectAll().where('video_id', '=', videoId).where('event_type', '=', event).execute();
  }

  insertDelivery(row: NewWebhookDelivery): Promise<WebhookDelivery> {
    return this.db.insertInto('webhook_deliveries').values(row).returningAll().executeTakeFirstOrThrow();
  }

  findDelivery(id: string): Promise<WebhookDelivery | undefined> {
    return this.db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirst();
  }

  findEndpointDelivery(endpointId: string, id: string): Promise<WebhookDelivery | undefined> {
    return this.db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).where('endpoint_id', '=', endpointId).executeTakeFirst();
  }

  /** Deliveries to an endpoint, or to a video's own webhook_url (`target`), newest first, with their attempts. */
  async listDeliveries(of: { endpointId: string } | { videoId: string; target: string }, limit: number): Promise<{ delivery: WebhookDelivery; attempts: WebhookDeliveryAttempt[] }[]> {
    const all = this.db.selectFrom('webhook_deliveries').selectAll();
    const deliveries = await ('endpointId' in of ? all.where('endpoint_id', '=', of.endpointId) : all.where('video_id', '=', of.videoId).where('target', '=', of.target))
      .orderBy('created_at', 'desc')
      .orderBy('id')
      .limit(limit)
      .execute();
    const attempts = await this.attemptsOf(deliveries.map((delivery) => delivery.id));
    return deliveries.map((delivery) => ({ delivery, attempts: attempts.filter((attempt) => attempt.delivery_id === delivery.id) }));
  }

  attemptsOf(deliveryIds: string[]): Promise<WebhookDeliveryAttempt[]> {
    if (deliveryIds.length === 0) return Promise.resolve([]);
    return this.db.selectFrom('webhook_delivery_attempts').selectAll().where('delivery_id', 'in', deliveryIds).orderBy('attempt').execute();
  }

  /** Records one attempt (again, when a retried activity repeats it) and the delivery's state after it. */
  async recordAttempt(record: AttemptRecord, state: WebhookDeliveryState): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('webhook_delivery_attempts')
        .values(record)
        .onConflict((conflict) =>
          conflict.columns(['delivery_id', 'attempt']).doUpdateSet({
            attempted_at: new Date(),
            status_code: record.status_code,
            latency_ms: record.latency_ms,
            response_snippet: record.response_snippet,
            error: record.error,
          }),
        )
        .execute();
      await trx
        .updateTable('webhook_deliveries')
        .set((eb) => ({ state, attempts: sql<number>`greatest(${eb.ref('attempts')}, ${record.attempt})`, updated_at: new Date() }))
        .where('id', '=', record.delivery_id)
        .execute();
    });
  }

  /** A redelivery starts: the delivery is pending again. */
  async reopenDelivery(id: string): Promise<void> {
    await this.db.updateTable('webhook_deliveries').set({ state: 'pending', updated_at: new Date() }).where('id', '=', id).execute();
  }

  async markEndpointSucceeded(id: string): Promise<void> {
    await this.db.updateTable('webhook_endpoints').set({ failing_since: null }).where('id', '=', id).where('failing_since', 'is not', null).execute();
  }

  /** Notes a failure; answers since when the endpoint has been failing without a success. */
  async markEndpointFailed(id: string, now: Date): Promise<Date | undefined> {
    const row = await this.db
      .updateTable('webhook_endpoints')
      .set((eb) => ({ failing_since: eb.fn.coalesce('failing_since', sql<Date>`cast(${now.toISOString()} as timestamptz)`) }))
      .where('id', '=', id)
      .returning('failing_since')
      .executeTakeFirst();
    return row?.failing_since ?? undefined;
  }

  /** Disables the endpoint; answers it only the first time, so its owner is told once. */
  disableEndpoint(id: string, now: Date): Promise<WebhookEndpoint | undefined> {
    return this.db
      .updateTable('webhook_endpoints')
      .set({ disabled_at: now, updated_at: now })
      .where('id', '=', id)
      .where('disabled_at', 'is', null)
      .returningAll()
      .executeTakeFirst();
  }

  /** Turns the caller's endpoint on again (a no-op for one that is on); undefined for none. */
  enableEndpoint(userId: string, id: string, now: Date): Promise<WebhookEndpoint | undefined> {
    return this.db
      .updateTable('webhook_endpoints')
      .set({ disabled_at: null, failing_since: null, updated_at: now })
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .returningAll()
      .executeTakeFirst();
  }
}
