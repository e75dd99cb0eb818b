import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Purchase, SubscriptionStatus, User } from '../db/schema.ts';
import { AppError, notFound } from '../errors/app-error.ts';
import type { Logger } from '../logging/logger.ts';
import type { CheckoutLineItem, CompletedCheckout, PaymentEvent, PaymentGateway, SubscriptionSnapshot } from './ports/payment-gateway.ts';
import type { PaymentRepository, PaymentUnit } from '../repositories/payment.repository.ts';
import type { VideoRepository } from '../repositories/video.repository.ts';
import type { RenderScheduling } from './ports/render-scheduling.ts';
import { noMetrics, type Metrics } from './ports/metrics.ts';
import { CREDIT_PACK_CURRENCY, CREDIT_PACK_KEYS, CREDIT_PACKS, CREDITS_PER_VIDEO, PLAN_TYPES, pricesForCountry, type LocalPrices } from '../domain/pricing.ts';
import { isSubscribed } from './user.service.ts';

/** What a checkout call answers: where to pay, or (already paid) that the re-render restarted. */
export type CheckoutAnswer = { url: string | null; rerendering: boolean; sessionId: string | null };

/** A subscription state learned from Stripe; fields it did not carry (undefined) keep their stored value. */
type SubscriptionChange = Pick<SubscriptionSnapshot, 'id' | 'customerId' | 'userId' | 'status' | 'plan'> &
  Partial<Pick<SubscriptionSnapshot, 'currentPeriodEnd' | 'cancelAtPeriodEnd'>>;

type Purpose = 'subscription' | 'watermark_removal' | 'credit_pack';

const uuid = z.uuid();

/**
 * Subscriptions, one-time purchases and Stripe's webhooks. users.subscription_status stays the source of
 * truth for the plan's benefits (isSubscribed); Stripe's events move it, in the order of Stripe's own
 * clock rather than of their arrival, and each event applies once.
 */
export class BillingService {
  private readonly payments: PaymentRepository;
  private readonly videos: VideoRepository;
  private readonly scheduler: RenderScheduling;
  private readonly gateway: PaymentGateway | undefined;
  private readonly settings: { siteUrl: string; statusTimeoutMs: number };
  private readonly logger: Logger;
  private readonly metrics: Metrics;

  constructor(dependencies: {
    payments: PaymentRepository;
    videos: VideoRepository;
    scheduler: RenderScheduling;
    gateway: PaymentGateway | undefined;
    settings: { siteUrl: string; statusTimeoutMs: number };
    logger: Logger;
    /** Counts the credits of paid credit packs; default: nothing. */
    metrics?: Metrics;
  }) {
    ({ payments: this.payments, videos: this.videos, scheduler: this.scheduler, gateway: this.gateway, settings: this.settings, logger: this.logger } = dependencies);
    this.metrics = dependencies.metrics ?? noMetrics;
  }

  /** GET /subscription/pricing: the prices a checkout from this country charges (its currency's, USD when unknown). */
  pricing(country: string | undefined): LocalPrices {
    return pricesForCountry(country);
  }

  /** GET /credits/packs: the API credit packs for sale, each with its credits and price in CREDIT_PACK_CURRENCY. */
  creditPacks() {
    return { currency: CREDIT_PACK_CURRENCY, packs: CREDIT_PACK_KEYS.map((pack) => ({ pack, ...CREDIT_PACKS[pack] })) };
  }

  /** Whether anything can be bought: Stripe is configured. Without it every checkout, the portal and the webhook answer payments_not_configured. */
  paymentsAvailable(): boolean {
    return this.gateway !== undefined;
  }

  async subscriptionCheckout(user: User, planType: string, country: string | undefined): Promise<CheckoutAnswer> {
    const gateway = this.requireGateway();
    const plan = PLAN_TYPES.find((type) => type === planType);
    if (!plan) throw new AppError('unknown_plan', `There is no plan "${planType}"; plan_type is weekly or annual.`);
    // A second subscription would bill twice; a plan in dunning is paid (or ended) in the portal instead.
    if (BILLED_STATES.includes(user.subscription_status)) {
      throw new AppError('conflict', `This account already has a subscription (${user.subscription_status}).`, {
        hint: 'Change, pay or cancel the plan in the billing portal (POST /subscription/create-portal-session).',
      });
    }
    const priceId = gateway.priceIdOf(plan);
    const { currency, prices } = pricesForCountry(country);
    const item: CheckoutLineItem = priceId
      ? { kind: 'subscription', plan, priceId }
      : { kind: 'subscription', plan, currency, amount: prices[plan], productName: `petsing ${plan} plan` };
    const session = await this.checkout(user, item, { purpose: 'subscription', plan });
    return { url: session.url, rerendering: false, sessionId: session.id };
  }

  /**
   * Buys a video's watermark removal. A video already paid for is not charged again: its re-render is
   * (re)started instead, which is how a re-render that failed after payment is recovered.
   */
  async watermarkRemovalCheckout(user: User, videoId: string, country: string | undefined): Promise<CheckoutAnswer> {
    this.requireGateway();
    const video = uuid.safeParse(videoId).success ? await this.videos.findOwned(videoId, user.id) : undefined;
    if (!video) throw notFound(`Video ${videoId}`);
    if (!video.has_watermark) throw new AppError('video_not_watermarked', `Video ${videoId} has no watermark.`);
    const paid = await this.payments.findPaidWatermarkRemoval(video.id);
    if (paid) {
      await this.startPaidRerender(paid);
      return { url: null, rerendering: true, sessionId: null };
    }
    if (video.status !== 'completed') throw new AppError('video_not_ready', `Video ${videoId} is ${video.status}; only a completed video can be re-rendered.`);

    const { currency, prices } = pricesForCountry(country);
    const item: CheckoutLineItem = {
      kind: 'payment',
      currency,
      amount: prices.watermarkRemoval,
      productName: 'Watermark removal',
      description: 'Re-renders one petsing video without the watermark.',
    };
    const session = await this.checkout(user, item, { purpose: 'watermark_removal', video_id: video.id });
    await this.payments.createPurchase({
      checkout_session_id: session.id,
      user_id: user.id,
      kind: 'watermark_removal',
      video_id: video.id,
      amount: item.amount,
      currency: currency.toLowerCase(),
    });
    return { url: session.url, rerendering: false, sessionId: session.id };
  }

  async creditPackCheckout(user: User, packKey: string): Promise<CheckoutAnswer> {
    this.requireGateway();
    const pack = CREDIT_PACK_KEYS.find((key) => key === packKey);
    if (!pack) throw new AppError('unknown_credit_pack', `There is no credit pack "${packKey}".`);
    const { credits, amount } = CREDIT_PACKS[pack];
    const item: CheckoutLineItem = {
      kind: 'payment',
      currency: CREDIT_PACK_CURRENCY,
      amount,
      productName: `petsing API credits: ${pack}`,
      description: `${credits} credits for the petsing API (a video costs ${CREDITS_PER_VIDEO} credit; credits never expire).`,
    };
    const session = await this.checkout(user, item, { purpose: 'credit_pack', pack });
    await this.payments.createPurchase({
      checkout_session_id: session.id,
      user_id: user.id,
      kind: 'credit_pack',
      pack,
      credits,
      amount,
      currency: CREDIT_PACK_CURRENCY.toLowerCase(),
    });
    return { url: session.url, rerendering: false, sessionId: session.id };
  }

  async portalSession(user: User): Promise<string> {
    const gateway = this.requireGateway();
    if (!user.payment_customer_id) {
      throw notFound('A payment customer record for this account', { hint: 'The portal manages existing plans and purchases; subscribe or buy something first.' });
    }
    return gateway.createPortalSession(user.payment_customer_id, `${this.settings.siteUrl}/account`, `portal:${user.id}:${randomUUID()}`);
  }

  /**
   * The user's subscription, refreshed from Stripe when it answers within the short timeout (a missed or
   * delayed webhook is caught up this way); otherwise what the database knows.
   */
  async subscriptionStatus(user: User): Promise<{ user: User; source: 'payment_provider' | 'database' }> {
    const customerId = user.payment_customer_id;
    if (!this.gateway || !customerId) return { user, source: 'database' };
    // Stripe's state now is at least as new as any event created before this second.
    const asOf = new Date(Math.floor(Date.now() / 1000) * 1000);
    const latest = await this.gateway.latestSubscription(customerId, this.settings.statusTimeoutMs);
    if (!latest.reachable) return { user, source: 'database' };
    const subscription = latest.subscription;
    const refreshed = subscription
      ? await this.payments.transaction((unit) => this.applySubscription(unit, { ...subscription, customerId, userId: user.id }, asOf))
      : undefined;
    return { user: refreshed ?? user, source: 'payment_provider' };
  }

  /**
   * POST /webhooks/stripe: verifies the event, applies it once (its id is recorded in the same
   * transaction as its effect), then starts what cannot run inside a transaction: the re-render of a paid
   * watermark removal. If that start fails the answer is an error, Stripe redelivers, and the redelivery
   * (a duplicate, otherwise a no-op) starts it.
   */
  async handleWebhook(rawBody: Buffer, signature: string | undefined): Promise<{ duplicate: boolean }> {
    const event = this.requireGateway().parseWebhook(rawBody, signature);
    let creditsBought = 0;
    const outcome = await this.payments.processEventOnce(event, async (unit) => {
      creditsBought = await this.apply(unit, event);
    });
    // Counted once the transaction that added them has committed.
    if (creditsBought > 0) this.metrics.creditsGranted('purchase', creditsBought);
    // Credit packs were fulfilled inside the transaction; a watermark removal's re-render starts now.
    if (event.kind === 'checkout_completed' && event.checkout.mode === 'payment' && event.checkout.paid && event.checkout.metadata.purpose === 'watermark_removal') {
      const purchase = await this.payments.findPurchaseBySession(event.checkout.sessionId);
      if (purchase?.kind === 'watermark_removal' && purchase.status === 'paid' && !purchase.fulfilled_at) await this.startPaidRerender(purchase);
    }
    return { duplicate: outcome.duplicate };
  }

  /** Applies the event; answers the API credits it added (a paid credit pack), else 0. */
  private async apply(unit: PaymentUnit, event: PaymentEvent): Promise<number> {
    switch (event.kind) {
      case 'subscription_changed':
        await this.applySubscription(unit, event.subscription, event.createdAt);
        return 0;
      case 'checkout_completed':
        return this.applyCheckout(unit, event.checkout, event.createdAt);
      case 'checkout_expired':
        await unit.markExpired(event.sessionId);
        return 0;
      case 'invoice_payment_failed':
        await this.applyPaymentFailure(unit, event.subscriptionId, event.customerId, event.createdAt);
        return 0;
      case 'other':
        return 0;
    }
  }

  private async applyCheckout(unit: PaymentUnit, checkout: CompletedCheckout, asOf: Date): Promise<number> {
    const { metadata } = checkout;
    const purpose = metadata.purpose as Purpose | undefined;
    if (checkout.mode === 'subscription') {
      if (!checkout.subscriptionId) return 0;
      const plan = PLAN_TYPES.find((type) => type === metadata.plan) ?? null;
      const status: SubscriptionStatus = checkout.paid ? 'active' : 'incomplete';
      await this.applySubscription(unit, { id: checkout.subscriptionId, customerId: checkout.customerId, userId: metadata.user_id ?? null, status, plan }, asOf);
      return 0;
    }
    // Async payment methods complete unpaid; checkout.session.async_payment_succeeded brings the money.
    if (!checkout.paid || (purpose !== 'watermark_removal' && purpose !== 'credit_pack')) return 0;
    const user = await unit.lockUser({ customerId: checkout.customerId, userId: metadata.user_id ?? null });
    if (!user) {
      this.logger.warn({ sessionId: checkout.sessionId }, 'paid checkout session of an unknown customer; ignored');
      return 0;
    }
    const paidFor = { checkout_session_id: checkout.sessionId, user_id: user.id, amount: checkout.amount ?? 0, currency: (checkout.currency ?? 'usd').toLowerCase() };
    if (purpose === 'watermark_removal') {
      const videoId = metadata.video_id && uuid.safeParse(metadata.video_id).success && (await unit.videoExists(metadata.video_id)) ? metadata.video_id : null;
      await unit.ensurePurchase({ ...paidFor, kind: 'watermark_removal', video_id: videoId });
      await unit.markPaid(checkout.sessionId);
      return 0;
    }
    const pack = CREDIT_PACK_KEYS.find((key) => key === metadata.pack);
    if (!pack) {
      this.logger.error({ sessionId: checkout.sessionId, pack: metadata.pack }, 'paid credit pack checkout names no known pack');
      return 0;
    }
    await unit.ensurePurchase({ ...paidFor, kind: 'credit_pack', pack, credits: CREDIT_PACKS[pack].credits });
    const purchase = await unit.markPaid(checkout.sessionId);
    if (!purchase?.credits) return 0;
    await unit.creditPack({ ...purchase, credits: purchase.credits });
    return purchase.credits;
  }

  /** Applies the change unless it is stale; answers the user as it stands afterwards (undefined: unknown customer). */
  private async applySubscription(unit: PaymentUnit, change: SubscriptionChange, asOf: Date): Promise<User | undefined> {
    const user = await unit.lockUser({ customerId: change.customerId, userId: change.userId });
    if (!user) {
      this.logger.warn({ subscriptionId: change.id }, 'subscription of an unknown customer; ignored');
      return undefined;
    }
    if (!subscriptionChangeApplies(user, change, asOf)) {
      this.logger.info({ userId: user.id, subscriptionId: change.id, status: change.status }, 'stale subscription change ignored');
      return user;
    }
    const same = user.subscription_id === change.id;
    return unit.updateSubscription(user.id, {
      subscription_id: change.id,
      subscription_status: change.status,
      subscription_plan: change.plan ?? (same ? user.subscription_plan : null),
      subscription_current_period_end: change.currentPeriodEnd !== undefined ? change.currentPeriodEnd : same ? user.subscription_current_period_end : null,
      subscription_cancel_at_period_end: change.cancelAtPeriodEnd ?? (same ? user.subscription_cancel_at_period_end : false),
      subscription_updated_at: asOf,
    });
  }

  private async applyPaymentFailure(unit: PaymentUnit, subscriptionId: string, customerId: string | null, asOf: Date): Promise<void> {
    const user = await unit.lockUser({ customerId, userId: null });
    // Only the stored subscription falls into dunning, under the same staleness rule as any other change.
    if (!user || user.subscription_id !== subscriptionId || !subscriptionChangeApplies(user, { id: subscriptionId, status: 'past_due' }, asOf)) return;
    await unit.updateSubscription(user.id, { subscription_status: 'past_due', subscription_updated_at: asOf });
  }

  private async startPaidRerender(purchase: Purchase): Promise<void> {
    const video = purchase.video_id ? await this.videos.findById(purchase.video_id) : undefined;
    if (video?.has_watermark) {
      try {
        await this.scheduler.startRerender(video.id);
      } catch (error) {
        throw new AppError('service_unavailable', 'The re-render could not be queued; the payment is recorded and the re-render will be retried.', { cause: error });
      }
      this.logger.info({ videoId: video.id, purchaseId: purchase.id }, 're-render without watermark started');
    }
    await this.payments.markFulfilled(purchase.id);
  }

  private async checkout(user: User, item: CheckoutLineItem, purpose: { purpose: Purpose } & Record<string, string>): Promise<{ id: string; url: string }> {
    const gateway = this.requireGateway();
    const customerId = await this.customerOf(user, gateway);
    return gateway.createCheckoutSession({
      customerId,
      userId: user.id,
      item,
      metadata: { user_id: user.id, ...purpose },
      successUrl: `${this.settings.siteUrl}/checkout/success?session_id={CHECKOUT_SESSION_ID}`,
      cancelUrl: `${this.settings.siteUrl}/checkout/cancel`,
      idempotencyKey: `checkout:${user.id}:${randomUUID()}`,
    });
  }

  /**
   * The user's Stripe customer, created on first need. The idempotency key is the user's, so concurrent
   * first purchases get the same customer from Stripe, and the first stored id wins.
   */
  private async customerOf(user: User, gateway: PaymentGateway): Promise<string> {
    if (user.payment_customer_id) return user.payment_customer_id;
    const created = await gateway.createCustomer({ userId: user.id, email: user.email }, `customer:${user.id}`);
    return this.payments.setCustomerIfAbsent(user.id, created);
  }

  private requireGateway(): PaymentGateway {
    if (!this.gateway) {
      // The operator's part stays in the log: the caller is an end user (or Stripe), told only that nothing can be bought.
      this.logger.warn({ code: 'payments_not_configured' }, 'a payment call was refused: payments are off; set STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET to turn them on');
      throw new AppError('payments_not_configured', 'Payments are not available on this service.');
    }
    return this.gateway;
  }
}

/** States in which Stripe still bills (or tries to bill) the subscription. */
const BILLED_STATES: readonly SubscriptionStatus[] = ['active', 'trialing', 'past_due', 'unpaid'];
const LIVE_STATES: readonly SubscriptionStatus[] = [...BILLED_STATES, 'incomplete'];

/**
 * Whether a subscription state learned at `asOf` may replace the stored one. Decided by Stripe's clock,
 * not by arrival order:
 * - for the stored subscription, only a state at least as new as the stored one applies, and `canceled`
 *   is terminal (Stripe never revives a canceled subscription; a new one gets a new id);
 * - a different subscription replaces the stored one only if it is newer, alive, and does not take a
 *   paying subscriber's benefits away; with none stored, anything (even `canceled`) is recorded.
 */
function subscriptionChangeApplies(user: User, change: Pick<SubscriptionChange, 'id' | 'status'>, asOf: Date): boolean {
  const newer = !user.subscription_updated_at || asOf >= user.subscription_updated_at;
  if (user.subscription_id === change.id) return user.subscription_status !== 'canceled' && newer;
  if (user.subscription_id === null) return true;
  if (!LIVE_STATES.includes(change.status) || !newer) return false;
  return !isSubscribed(user) || isSubscribed({ subscription_status: change.status });
}
