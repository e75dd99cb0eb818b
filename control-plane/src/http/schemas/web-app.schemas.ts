import { z } from 'zod';
import { FREE_CREDITS_PER_MONTH, PLAN_TYPES } from '../../domain/pricing.ts';
import { VideoAspectField } from './video-aspect.schemas.ts';
import { RenderStageField, StageStartedAtField } from './video-stage.schemas.ts';
import { VideoSyncField } from './video-sync.schemas.ts';

/** Records of the web-app endpoints (field names are ours: the spec leaves them open; see docs/web-app.md). */

const WebVideo = z
  .object({
    id: z.uuid(),
    status: z.string().meta({ description: 'pending, processing, completed or failed; extensible: treat an unknown value as not yet terminal.' }),
    progress: z.number().int().min(0).max(100).meta({ description: 'Render progress in percent.' }),
    stage: RenderStageField,
    stage_started_at: StageStartedAtField,
    sync: VideoSyncField,
    template_id: z.string().nullable().meta({ description: 'The template song, or null for a video made from audio.' }),
    has_watermark: z.boolean().meta({ description: 'True while the video carries the visible watermark (owner not subscribed and no removal bought).' }),
    aspect: VideoAspectField,
    video_url: z.url().nullable().meta({ description: 'Expiring MP4 link; null until completed.' }),
    thumbnail_url: z.url().nullable(),
    origin: z.enum(['web', 'api']).meta({ description: 'Where the video was created.' }),
    error: z.object({ code: z.string(), message: z.string() }).nullable().meta({ description: 'Why the render failed; null unless failed.' }),
    created_at: z.iso.datetime(),
    completed_at: z.iso.datetime().nullable(),
  })
  .meta({ id: 'WebVideo' });

export const WebVideoPage = z
  .object({
    videos: z.array(WebVideo).meta({ description: 'This page, newest first.' }),
    page: z.number().int().min(1),
    page_size: z.number().int().min(1).max(100),
    total: z.number().int().min(0).meta({ description: 'How many videos the caller has in all.' }),
    total_pages: z.number().int().min(0),
    has_more: z.boolean().meta({ description: 'True when a later page exists.' }),
  })
  .meta({ id: 'WebVideoPage' });

export const WebVideoPageQuery = z.object({
  page: z.coerce.number().int().min(1).default(1).meta({ description: 'Page number, from 1.' }),
  pageSize: z.coerce.number().int().min(1).max(100).default(10).meta({ description: 'Videos per page, 1 to 100.' }),
});

export const WebSubscription = z
  .object({
    status: z.enum(['none', 'active', 'trialing', 'past_due', 'canceled', 'unpaid', 'incomplete']),
    plan: z.enum(PLAN_TYPES).nullable(),
    current_period_end: z.iso.datetime().nullable(),
    cancel_at_period_end: z.boolean(),
  })
  .meta({ id: 'WebSubscription' });

export const WebAccount = z
  .object({
    id: z.uuid(),
    email: z.email(),
    subscribed: z.boolean().meta({ description: 'True while a plan is active: videos are free of credits and watermarks.' }),
    subscription: WebSubscription,
    free_credits: z.number().int().min(0).max(FREE_CREDITS_PER_MONTH).meta({ description: 'Free web credits left this calendar month (UTC).' }),
    free_credits_reset_at: z.iso.datetime().meta({ description: `When free credits next reset to ${FREE_CREDITS_PER_MONTH} (start of next month, UTC).` }),
    api_credit_balance: z.number().int().min(0).meta({ description: 'Prepaid credits of the public API (/v1).' }),
    email_opt_out: z.boolean().meta({ description: 'True once the user unsubscribed from lifecycle email.' }),
    created_at: z.iso.datetime(),
  })
  .meta({ id: 'WebAccount' });

export const RenderQueued = z
  .object({
    id: z.uuid().meta({ description: 'The new video.' }),
    status: z.string().meta({ description: 'Always pending: the render is queued.' }),
    has_watermark: z.boolean(),
    free_credits_remaining: z.number().int().min(0).nullable().meta({ description: 'Free credits left this month; null for subscribers (nothing was spent).' }),
    video: WebVideo,
  })
  .meta({ id: 'RenderQueued' });
