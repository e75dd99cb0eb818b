import type { SubscriptionStatus } from '../../db/schema.ts';
import type { PlanType } from '../../domain/pricing.ts';

/**
 * What billing needs from a payment provider (payments/stripe-gateway.ts implements it with Stripe): the
 * provider's objects stop at the adapter, and billing sees the small records below.
 */
export interface PaymentGateway {
  /** The configured provider price of a plan, or undefined when plans are priced per currency instead. */
  priceIdOf(plan: PlanType): string | undefined;
  createCustomer(input: { userId: string; email: string }, idempotencyKey: string): Promise<string>;
  createCheckoutSession(request: CheckoutRequest): Promise<{ id: string; url: string }>;
  createPortalSession(customerId: string, returnUrl: string, idempotencyKey: string): Promise<string>;
  latestSubscription(customerId: string, timeoutMs: number): Promise<{ reachable: false } | { reachable: true; subscription: SubscriptionSnapshot | undefined }>;
  /** Verifies a webhook's signature over the raw body and reads the event; throws an AppError when it does not verify. */
  parseWebhook(rawBody: Buffer, signature: string | undefined): PaymentEvent;
}

/** A subscription as the service stores it: Stripe's status mapped onto users.subscription_status. */
export type SubscriptionSnapshot = {
  id: string;
  customerId: string | null;
  userId: string | null;
  status: SubscriptionStatus;
  plan: PlanType | null;
  currentPeriodEnd: Date | null;
  cancelAtPeriodEnd: boolean;
};

export type CompletedCheckout = {
  sessionId: string;
  mode: 'subscription' | 'payment';
  /** True once the money is in (or none was due); async payment methods complete unpaid first. */
  paid: boolean;
  customerId: string | null;
  subscriptionId: string | null;
  amount: number | null;
  currency: string | null;
  metadata: Record<string, string>;
};

/** A verified webhook event, reduced to what the service acts on. */
export type PaymentEvent = { id: string; type: string; createdAt: Date } & (
  | { kind: 'checkout_completed'; checkout: CompletedCheckout }
  | { kind: 'checkout_expired'; sessionId: string }
  | { kind: 'subscription_changed'; subscription: SubscriptionSnapshot }
  | { kind: 'invoice_payment_failed'; subscriptionId: string; customerId: string | null }
  | { kind: 'other' }
);

export type CheckoutLineItem =
  | { kind: 'subscription'; plan: PlanType; priceId: string }
  | { kind: 'subscription'; plan: PlanType; currency: string; amount: number; productName: string }
  | { kind: 'payment'; currency: string; amount: number; productName: string; description: string };

export type CheckoutRequest = {
  customerId: string;
  userId: string;
  item: CheckoutLineItem;
  /** Copied onto the session (and the subscription or payment) so the webhook knows what was bought. */
  metadata: Record<string, string>;
  successUrl: string;
  cancelUrl: string;
  idempotencyKey: string;
};
