import type { User, Video } from '../db/schema.ts';
import type { VideoLinks } from '../services/video-links.ts';
import type { VideoPage } from '../services/video.service.ts';
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
export const subscriptionOf = (user: User) => ({
  status: user.subscription_status,
  plan: user.subscription_plan,
  current_period_end: user.subscription_current_period_end?.toISOString() ?? null,
  cancel_at_period_end: user.subscription_cancel_at_period_end,
});
