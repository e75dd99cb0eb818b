import { z } from 'zod';
import { CREDIT_PACK_KEYS, CREDITS_PER_VIDEO, PLAN_INTERVALS, PLAN_TYPES } from '../../domain/pricing.ts';
import { WebSubscription } from './web-app.schemas.ts';

/** Records of the payment endpoints (/subscription/*, /credits/*, /webhooks/stripe); field names are ours. */

const Money = z.object({
  amount: z.number().int().min(0).meta({ description: "In the currency's minor unit as Stripe counts it: cents for USD, whole yen for JPY and whole won for KRW." }),
  formatted: z.string().meta({ description: 'The amount for display, e.g. "$4.99" or "¥750".', example: '$4.99' }),
});

const PlanPrice = Money.extend({
  plan_type: z.enum(PLAN_TYPES).meta({ description: 'The value to send as plan_type to POST /subscription/create-checkout-session.' }),
  interval: z.enum(Object.values(PLAN_INTERVALS)).meta({ description: 'How often the plan renews.' }),
}).meta({ id: 'PlanPrice' });

/** Said by GET /subscription/pricing and GET /credits/packs, so a page that shows prices knows whether to offer them. */
const PaymentsAvailable = z.boolean().meta({
  description: 'Whether anything can be bought: false when the operator has not configured payments; then every checkout and the billing '
    + 'portal answer 503 payments_not_configured, and the web app offers no purchase.',
});

export const Pricing = z
  .object({
    country: z.string().nullable().meta({ description: 'ISO 3166-1 alpha-2 country from the edge header, or null when absent or malformed.', example: 'JP' }),
    currency: z.string().meta({ description: 'ISO 4217 code of every amount here; USD for an unknown or missing country.', example: 'JPY' }),
    currency_exponent: z.number().int().min(0).max(3).meta({ description: 'Digits of the minor unit: amount / 10^currency_exponent is the price in the major unit (0 for JPY and KRW).' }),
    plans: z.array(PlanPrice).meta({ description: 'The weekly and the annual plan.' }),
    watermark_removal: Money.meta({ description: 'Price of removing the watermark of one video (POST /subscription/create-one-time-checkout).' }),
    payments_available: PaymentsAvailable,
  })
  .meta({ id: 'Pricing', description: "Plan prices in the caller's currency, chosen from the country the edge reports." });

export const SubscriptionStatusRecord = z
  .object({
    subscribed: z.boolean().meta({ description: 'True while the plan gives its benefits (status active or trialing): no credits spent, no watermark.' }),
    subscription: WebSubscription,
    source: z.enum(['payment_provider', 'database']).meta({ description: 'payment_provider: refreshed from Stripe just now; database: Stripe was not reachable in time (or there is no customer yet).' }),
  })
  .meta({ id: 'SubscriptionStatus' });

export const CheckoutSession = z
  .object({
    url: z.url().nullable().meta({ description: 'Stripe Checkout page to send the caller to; null when an already-paid re-render was restarted instead.' }),
    rerendering: z.boolean().meta({ description: 'True when the video was already paid for and its re-render without watermark (re)started; nothing is charged.' }),
    session_id: z.string().nullable().meta({ description: 'The Stripe Checkout session id; null when rerendering.' }),
  })
  .meta({ id: 'CheckoutSession' });

export const CreateCheckoutSessionRequest = z
  .object({ plan_type: z.string().meta({ description: 'weekly or annual; anything else answers 400 unknown_plan.', example: 'annual' }) })
  .meta({ id: 'CreateCheckoutSessionRequest' });

export const CreateOneTimeCheckoutRequest = z
  .object({ video_id: z.string().min(1).meta({ description: 'Id of one of the caller\'s completed, watermarked videos.' }) })
  .meta({ id: 'CreateOneTimeCheckoutRequest' });

export const CreateCreditCheckoutRequest = z
  .object({ pack: z.string().meta({ description: 'starter, growth or scale (see GET /credits/packs); anything else answers 400 unknown_credit_pack.', example: 'growth' }) })
  .meta({ id: 'CreateCreditCheckoutRequest' });

export const PortalSession = z
  .object({ url: z.url().meta({ description: 'Stripe billing portal page where the caller changes or cancels the plan.' }) })
  .meta({ id: 'PortalSession' });

const CreditPack = Money.extend({
  pack: z.enum(CREDIT_PACK_KEYS),
  credits: z.number().int().min(1).meta({ description: `Credits added to the API balance; a video costs ${CREDITS_PER_VIDEO} credit; credits never expire.` }),
}).meta({ id: 'CreditPack' });

export const CreditPackList = z
  .object({
    currency: z.string().meta({ description: 'Credit packs are priced in USD.', example: 'USD' }),
    packs: z.array(CreditPack),
    payments_available: PaymentsAvailable,
  })
  .meta({ id: 'CreditPackList' });

export const WebhookAck = z
  .object({
    received: z.literal(true),
    duplicate: z.boolean().meta({ description: 'True when this event id was processed before; nothing changed.' }),
  })
  .meta({ id: 'WebhookAck' });
