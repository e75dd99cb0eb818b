import Stripe from 'stripe';
import type { StripeConfig } from '../config/env.ts';
import type { SubscriptionStatus } from '../db/schema.ts';
import { AppError } from '../errors/app-error.ts';
import type { Logger } from '../logging/logger.ts';
import { PLAN_INTERVALS, PLAN_TYPES, type PlanType } from '../domain/pricing.ts';
import type { CheckoutRequest, PaymentEvent, PaymentGateway, SubscriptionSnapshot } from '../services/ports/payment-gateway.ts';

/**
 * The only code that talks to Stripe: customers, Checkout and billing-portal sessions, subscription reads
 * and webhook verification. Stripe's objects stop here; the rest of the service sees the small records
 * of services/ports/payment-gateway.ts. Every write carries an idempotency key, so the SDK's own network retries never duplicate it.
 */

export class StripeGateway implements PaymentGateway {
  private readonly stripe: Stripe;

  constructor(
    private readonly config: StripeConfig,
    private readonly logger: Logger,
  ) {
    const base = config.apiBase;
    this.stripe = new Stripe(config.secretKey, {
      maxNetworkRetries: 2,
      timeout: 20_000,
      telemetry: false,
      appInfo: { name: 'petsing' },
      ...(base
        ? { host: base.hostname, port: base.port || (base.protocol === 'https:' ? 443 : 80), protocol: base.protocol === 'https:' ? 'https' : 'http' }
        : {}),
    });
  }

  /** Configured Price id of a plan, when the operator set one. */
  priceIdOf(plan: PlanType): string | undefined {
    return this.config.prices[plan];
  }

  async createCustomer(input: { userId: string; email: string }, idempotencyKey: string): Promise<string> {
    const customer = await this.call('create a customer', () =>
      this.stripe.customers.create({ email: input.email, metadata: { user_id: input.userId } }, { idempotencyKey }),
    );
    return customer.id;
  }

  async createCheckoutSession(request: CheckoutRequest): Promise<{ id: string; url: string }> {
    const { item, metadata } = request;
    const common = {
      customer: request.customerId,
      client_reference_id: request.userId,
      metadata,
      success_url: request.successUrl,
      cancel_url: request.cancelUrl,
    };
    const params: Stripe.Checkout.SessionCreateParams =
      item.kind === 'subscription'
        ? {
            ...common,
            mode: 'subscription',
            line_items: [
              'priceId' in item
                ? { price: item.priceId, quantity: 1 }
                : {
                    price_data: {
                      currency: item.currency.toLowerCase(),
                      unit_amount: item.amount,
                      recurring: { interval: PLAN_INTERVALS[item.plan] },
                      product_data: { name: item.productName },
                    },
                    quantity: 1,
                  },
            ],
            subscription_data: { metadata },
          }
        : {
            ...common,
            mode: 'payment',
            line_items: [
              {
                price_data: {
                  currency: item.currency.toLowerCase(),
                  unit_amount: item.amount,
                  product_data: { name: item.productName, description: item.description },
                },
                quantity: 1,
              },
            ],
            payment_intent_data: { metadata },
          };
    const session = await this.call('create a checkout session', () =>
      this.stripe.checkout.sessions.create(params, { idempotencyKey: request.idempotencyKey }),
    );
    if (!session.url) throw new Error(`Stripe answered checkout session ${session.id} without a url`);
    return { id: session.id, url: session.url };
  }

  async createPortalSession(customerId: string, returnUrl: string, idempotencyKey: string): Promise<string> {
    const session = await this.call('open the billing portal', () =>
      this.stripe.billingPortal.sessions.create({ customer: customerId, return_url: returnUrl }, { idempotencyKey }),
    );
    return session.url;
  }

  /**
   * The customer's newest subscription, read with a short timeout and no retries; `reachable: false`
   * when Stripe did not answer in time (the caller falls back to what the database knows).
   */
  async latestSubscription(customerId: string, timeoutMs: number): Promise<{ reachable: false } | { reachable: true; subscription: SubscriptionSnapshot | undefined }> {
    try {
      const list = await this.stripe.subscriptions.list({ customer: customerId, status: 'all', limit: 1 }, { timeout: timeoutMs, maxNetworkRetries: 0 });
      const [newest] = list.data;
      return { reachable: true, subscription: newest ? snapshotOf(newest) : undefined };
    } catch (error) {
      this.logger.warn({ err: error, customerId }, 'could not refresh the subscription from Stripe');
      return { reachable: false };
    }
  }

  /** Verifies the Stripe-Signature header over the raw body and reads the event. */
  parseWebhook(rawBody: Buffer, signature: string | undefined): PaymentEvent {
    let event: Stripe.Event;
    try {
      if (!signature) throw new Error('No Stripe-Signature header was sent.');
      event = this.stripe.webhooks.constructEvent(rawBody, signature, this.config.webhookSecret);
    } catch (error) {
      throw new AppError('webhook_signature_invalid', `The webhook could not be verified: ${(error as Error).message}`);
    }
    return toPaymentEvent(event);
  }

  private async call<T>(what: string, request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (error) {
      if (!(error instanceof Stripe.errors.StripeError)) throw error;
      this.logger.error({ err: error, stripeRequestId: error.requestId, stripeCode: error.code }, `Stripe refused to ${what}`);
      throw new AppError('service_unavailable', `The payment provider could not ${what} right now.`, { cause: error });
    }
  }
}

function toPaymentEvent(event: Stripe.Event): PaymentEvent {
  const base = { id: event.id, type: event.type, createdAt: new Date(event.created * 1000) };
  switch (event.type) {
    case 'checkout.session.completed':
    case 'checkout.session.async_payment_succeeded': {
      const session = event.data.object;
      const mode = session.mode === 'subscription' || session.mode === 'payment' ? (session.mode as 'subscription' | 'payment') : undefined;
      if (!mode) return { ...base, kind: 'other' };
      return {
        ...base,
        kind: 'checkout_completed',
        checkout: {
          sessionId: session.id,
          mode,
          paid: session.payment_status === 'paid' || session.payment_status === 'no_payment_required',
          customerId: idOf(session.customer),
          subscriptionId: idOf(session.subscription),
          amount: session.amount_total,
          currency: session.currency,
          metadata: session.metadata ?? {},
        },
      };
    }
    case 'checkout.session.expired':
      return { ...base, kind: 'checkout_expired', sessionId: event.data.object.id };
    case 'customer.subscription.created':
    case 'customer.subscription.updated':
    case 'customer.subscription.deleted':
    case 'customer.subscription.paused':
    case 'customer.subscription.resumed':
      return { ...base, kind: 'subscription_changed', subscription: snapshotOf(event.data.object) };
    case 'invoice.payment_failed': {
      const invoice = event.data.object;
      const subscriptionId = idOf(invoice.parent?.subscription_details?.subscription ?? null);
      return subscriptionId ? { ...base, kind: 'invoice_payment_failed', subscriptionId, customerId: idOf(invoice.customer) } : { ...base, kind: 'other' };
    }
    default:
      return { ...base, kind: 'other' };
  }
}

function snapshotOf(subscription: Stripe.Subscription): SubscriptionSnapshot {
  const [item] = subscription.items?.data ?? [];
  const metadataPlan = subscription.metadata?.plan;
  const interval = item?.price?.recurring?.interval;
  const plan = PLAN_TYPES.find((type) => type === metadataPlan) ?? PLAN_TYPES.find((type) => PLAN_INTERVALS[type] === interval) ?? null;
  return {
    id: subscription.id,
    customerId: idOf(subscription.customer),
    userId: subscription.metadata?.user_id ?? null,
    status: statusOf(subscription.status),
    plan,
    currentPeriodEnd: item?.current_period_end ? new Date(item.current_period_end * 1000) : null,
    // The billing portal may schedule the end as cancel_at rather than cancel_at_period_end.
    cancelAtPeriodEnd: subscription.cancel_at_period_end || (subscription.cancel_at !== null && subscription.status !== 'canceled'),
  };
}

/**
 * Stripe's subscription statuses onto ours: an expired first payment is as good as canceled, and a paused
 * subscription (trial over, no payment method) gives no benefits until it is paid, like `unpaid`.
 */
const STATUS_OF: Record<string, SubscriptionStatus> = {
  active: 'active',
  trialing: 'trialing',
  past_due: 'past_due',
  unpaid: 'unpaid',
  incomplete: 'incomplete',
  canceled: 'canceled',
  incomplete_expired: 'canceled',
  paused: 'unpaid',
};

function statusOf(status: Stripe.Subscription.Status): SubscriptionStatus {
  return STATUS_OF[status] ?? 'unpaid';
}

function idOf(value: string | { id: string } | null | undefined): string | null {
  if (!value) return null;
  return typeof value === 'string' ? value : value.id;
}
