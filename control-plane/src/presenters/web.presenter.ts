import type { User, Video } from '../db/schema.ts';
import { formatAmount, PLAN_INTERVALS, PLAN_TYPES, type LocalPrices } from '../domain/pricing.ts';
import type { BillingService } from '../services/billing.service.ts';
import type { VideoLinks } from '../services/video-links.ts';
import type { CreatedVideo, VideoPage } from '../services/video-requests.ts';
import { freeCreditsNow, isSubscribed, nextFreeCreditReset } from '../services/user.service.ts';
import { apiPresenter } from './api.presenter.ts';

/** The web-app records (WebAccount, WebVideo, WebVideoPage), shaped from what the services answer. */
export function webPresenter({ baseUrl, links }: { baseUrl: string; links: VideoLinks }) {
  const apiVideo = apiPresenter({ baseUrl, links }).video;

  /** The ApiVideo record plus what the web app shows besides: where the video was made and when it finished. */
  const video = async (record: Video) => ({
    ...(await apiVideo(record)),
    origin: record.origin,
    completed_at: record.completed_at?.toISOString() ?? null,
  });

  return {
    video,

    /** RenderQueued: what a web create answers; a subscriber has no free credits to count. */
    renderQueued: async ({ video: created, creditsRemaining }: CreatedVideo) => ({
      id: created.id,
      status: created.status,
      has_watermark: created.has_watermark,
      free_credits_remaining: created.payment === 'subscription' ? null : creditsRemaining,
      video: await video(created),
    }),

    videoPage: async ({ videos, page, pageSize, total }: VideoPage) => {
      const totalPages = Math.ceil(total / pageSize);
      return { videos: await Promise.all(videos.map(video)), page, page_size: pageSize, total, total_pages: totalPages, has_more: page < totalPages };
    },

    account: (user: User, apiCreditBalance: number, now = new Date()) => ({
      id: user.id,
      email: user.email,
      subscribed: isSubscribed(user),
      subscription: subscriptionOf(user),
      free_credits: freeCreditsNow(user, now),
      free_credits_reset_at: nextFreeCreditReset(now).toISOString(),
      api_credit_balance: apiCreditBalance,
      email_opt_out: user.email_opt_out,
      created_at: user.created_at.toISOString(),
    }),
  };
}

/** The WebSubscription record, shared by GET /user/me and GET /subscription/status. */
const subscriptionOf = (user: User) => ({
  status: user.subscription_status,
  plan: user.subscription_plan,
  current_period_end: user.subscription_current_period_end?.toISOString() ?? null,
  cancel_at_period_end: user.subscription_cancel_at_period_end,
});

/** SubscriptionStatusRecord: GET /subscription/status. */
export const subscriptionStatusRepresentation = ({ user, source }: Awaited<ReturnType<BillingService['subscriptionStatus']>>) => ({
  subscribed: isSubscribed(user),
  subscription: subscriptionOf(user),
  source,
});

/** Pricing: GET /subscription/pricing, each amount in minor units and as a person reads it, and whether they can be paid. */
export const pricingRepresentation = ({ country, currency, prices }: LocalPrices, paymentsAvailable: boolean) => ({
  country,
  currency,
  currency_exponent: prices.exponent,
  plans: PLAN_TYPES.map((plan) => ({ plan_type: plan, interval: PLAN_INTERVALS[plan], amount: prices[plan], formatted: formatAmount(prices[plan], currency) })),
  watermark_removal: { amount: prices.watermarkRemoval, formatted: formatAmount(prices.watermarkRemoval, currency) },
  payments_available: paymentsAvailable,
});

/** CreditPackList: GET /credits/packs, and whether they can be bought. */
export const creditPackListRepresentation = ({ currency, packs }: ReturnType<BillingService['creditPacks']>, paymentsAvailable: boolean) => ({
  currency,
  packs: packs.map((pack) => ({ ...pack, formatted: formatAmount(pack.amount, currency) })),
  payments_available: paymentsAvailable,
});
