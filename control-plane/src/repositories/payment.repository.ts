import type { Kysely, Transaction } from 'kysely';
import type { Database, NewPurchase, Purchase, User, UserUpdate } from '../db/schema.ts';
import type { CreditRepository } from './credit.repository.ts';

export type SubscriptionUpdate = Pick<
  UserUpdate,
  'subscription_status' | 'subscription_id' | 'subscription_plan' | 'subscription_current_period_end' | 'subscription_cancel_at_period_end' | 'subscription_updated_at'
>;

export class PaymentRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly ledger: CreditRepository,
  ) {}

  /**
   * Runs `work` in one transaction that first records the Stripe event id. An id already recorded (a
   * replay, or a concurrent duplicate delivery, which waits here for the first one to commit) skips the
   * work; a failed `work` rolls the record back too, so Stripe's redelivery tries again.
   */
  async processEventOnce(event: { id: string; type: string; createdAt: Date }, work: (unit: PaymentUnit) => Promise<void>): Promise<{ duplicate: boolean }> {
    return this.db.transaction().execute(async (trx) => {
      const recorded = await trx
        .insertInto('payment_events')
        .values({ id: event.id, type: event.type, object_created_at: event.createdAt })
        .onConflict((oc) => oc.column('id').doNothing())
        .returning('id')
        .executeTakeFirst();
      if (!recorded) return { duplicate: true };
      await work(this.unit(trx));
      return { duplicate: false };
    });
  }

  /** Runs `work` in one transaction (a subscription refresh read from Stripe). */
  transaction<T>(work: (unit: PaymentUnit) => Promise<T>): Promise<T> {
    return this.db.transaction().execute((trx) => work(this.unit(trx)));
  }

  private unit(trx: Transaction<Database>): PaymentUnit {
    return new PaymentUnit(trx, this.ledger, this);
  }

  /** Stores the user's Stripe customer unless one is stored already; answers the stored one. */
  async setCustomerIfAbsent(userId: string, customerId: string): Promise<string> {
    const updated = await this.db
      .updateTable('users')
      .set({ payment_customer_id: customerId, updated_at: new Date() })
      .where('id', '=', userId)
      .where('payment_customer_id', 'is', null)
      .returning('payment_customer_id')
      .executeTakeFirst();
    if (updated?.payment_customer_id) return updated.payment_customer_id;
    const row = await this.db.selectFrom('users').select('payment_customer_id').where('id', '=', userId).executeTakeFirstOrThrow();
    return row.payment_customer_id ?? customerId;
  }

  async createPurchase(purchase: NewPurchase): Promise<void> {
    await this.db.insertInto('purchases').values(purchase).execute();
  }

  findPurchaseBySession(checkoutSessionId: string): Promise<Purchase | undefined> {
    return this.db.selectFrom('purchases').selectAll().where('checkout_session_id', '=', checkoutSessionId).executeTakeFirst();
  }

  /** The paid watermark removal of a video, if any (the oldest when a user paid twice). */
  findPaidWatermarkRemoval(videoId: string): Promise<Purchase | undefined> {
    return this.db
      .selectFrom('purchases')
      .selectAll()
      .where('video_id', '=', videoId)
      .where('kind', '=', 'watermark_removal')
      .where('status', '=', 'paid')
      .orderBy('paid_at')
      .executeTakeFirst();
  }

  async markFulfilled(purchaseId: string, db: Kysely<Database> = this.db): Promise<void> {
    await db.updateTable('purchases').set({ fulfilled_at: new Date() }).where('id', '=', purchaseId).where('fulfilled_at', 'is', null).execute();
  }
}

/** The writes of one payment event (or refresh), all inside its transaction. */
export class PaymentUnit {
  constructor(
    private readonly trx: Transaction<Database>,
    private readonly ledger: CreditRepository,
    private readonly purchases: PaymentRepository,
  ) {}

  /** The user a payment belongs to, locked so that concurrent events for it apply one after another. */
  lockUser(by: { customerId: string | null; userId: string | null }): Promise<User | undefined> {
    const query = this.trx.selectFrom('users').selectAll().forUpdate();
    if (by.customerId) {
      return query.where('payment_customer_id', '=', by.customerId).executeTakeFirst().then((user) => user ?? this.lockUserById(by.userId));
    }
    return this.lockUserById(by.userId);
  }

  updateSubscription(userId: string, update: SubscriptionUpdate): Promise<User> {
    return this.trx.updateTable('users').set({ ...update, updated_at: new Date() }).where('id', '=', userId).returningAll().executeTakeFirstOrThrow();
  }

  async videoExists(videoId: string): Promise<boolean> {
    return (await this.trx.selectFrom('videos').select('id').where('id', '=', videoId).executeTakeFirst()) !== undefined;
  }

  /** Records a purchase the webhook learned of before (or without) its row from checkout creation. */
  async ensurePurchase(purchase: NewPurchase): Promise<void> {
    await this.trx.insertInto('purchases').values(purchase).onConflict((oc) => oc.column('checkout_session_id').doNothing()).execute();
  }

  /** Marks the purchase paid; answers it only when this call made it so (at most once per purchase). */
  markPaid(checkoutSessionId: string): Promise<Purchase | undefined> {
    return this.trx
      .updateTable('purchases')
      .set({ status: 'paid', paid_at: new Date() })
      .where('checkout_session_id', '=', checkoutSessionId)
      .where('status', '<>', 'paid')
      .returningAll()
      .executeTakeFirst();
  }

  /**
   * Credits a paid credit pack to the ledger and marks it fulfilled. The ledger entry's idempotency key is
   * the checkout session id, so its unique index refuses a second credit for the same payment.
   */
  async creditPack(purchase: Purchase & { credits: number }): Promise<void> {
    await this.ledger.append({ userId: purchase.user_id, delta: purchase.credits, reason: 'purchase', idempotencyKey: purchase.checkout_session_id }, this.trx);
    await this.purchases.markFulfilled(purchase.id, this.trx);
  }

  async markExpired(checkoutSessionId: string): Promise<void> {
    await this.trx.updateTable('purchases').set({ status: 'expired' }).where('checkout_session_id', '=', checkoutSessionId).where('status', '=', 'pending').execute();
  }

  private async lockUserById(userId: string | null): Promise<User | undefined> {
    if (!userId || !/^[0-9a-f-]{36}$/i.test(userId)) return undefined;
    return this.trx.selectFrom('users').selectAll().where('id', '=', userId).forUpdate().executeTakeFirst();
  }
}
