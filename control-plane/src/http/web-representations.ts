import type { User, Video } from '../db/schema.ts';
import type { AppContext } from '../runtime/app-context.ts';
import { apiRepresentations } from './api-representations.ts';
import { freeCreditsNow, isSubscribed, nextFreeCreditReset } from '../services/user.service.ts';

/** The web-app records (WebAccount, WebVideo, WebVideoPage), built from the services in one place. */
export function webRepresentations(context: AppContext) {
  const { videos, credits } = context.services;
  const apiVideo = apiRepresentations(context).video;

  /** The ApiVideo record plus what the web app shows besides: where the video was made and when it finished. */
  const video = async (record: Video) => ({
    ...(await apiVideo(record)),
    origin: record.origin,
    completed_at: record.completed_at?.toISOString() ?? null,
  });

  return {
    video,

    videoPage: async (userId: string, page: number, pageSize: number) => {
      const [records, total] = await Promise.all([videos.list(userId, { limit: pageSize, offset: (page - 1) * pageSize }), videos.count(userId)]);
      const totalPages = Math.ceil(total / pageSize);
      return { videos: await Promise.all(records.map(video)), page, page_size: pageSize, total, total_pages: totalPages, has_more: page < totalPages };
    },

    account: async (user: User, now = new Date()) => ({
      id: user.id,
      email: user.email,
      subscribed: isSubscribed(user),
      subscription: subscriptionOf(user),
      free_credits: freeCreditsNow(user, now),
      free_credits_reset_at: nextFreeCreditReset(now).toISOString(),
      api_credit_balance: await credits.balance(user.id),
      email_opt_out: user.email_opt_out,
      created_at: user.created_at.toISOString(),
    }),
  };
}

/** The WebSubscription record, shared by GET /user/me and GET /subscription/status. */
export const subscriptionOf = (user: User) => ({
  status: user.subscription_status,
  plan: user.subscription_plan,
  current_period_end: user.subscription_current_period_end?.toISOString() ?? null,
  cancel_at_period_end: user.subscription_cancel_at_period_end,
});
