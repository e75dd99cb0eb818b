import { z } from 'zod';
import type { Video } from '../db/schema.ts';
import { notFound } from '../errors/app-error.ts';
import type { AppContext } from '../runtime/app-context.ts';
import type { ApiCredential } from '../services/api-key.service.ts';
import { CREDITS_PER_VIDEO } from '../services/credit.service.ts';
import { templateMediaUrl } from './routes/service.routes.ts';

const RECENT_LEDGER_ENTRIES = 20;
const videoId = z.uuid();

/**
 * The public records (ApiTemplateList, ApiAccount, ApiCredits, ApiVideo, CreatedApiVideo) built from the
 * services, shared by /v1 and the MCP tools so both always answer the same thing.
 */
export function apiRepresentations(context: AppContext) {
  const { baseUrl } = context.config;
  const { videos, credits, templates } = context.services;

  const video = async (record: Video) => {
    const { videoUrl, thumbnailUrl } = await videos.links(record);
    return {
      id: record.id,
      status: record.status,
      template_id: record.template_id === null ? null : String(record.template_id),
      video_url: videoUrl,
      thumbnail_url: thumbnailUrl,
      has_watermark: record.has_watermark,
      created_at: record.created_at.toISOString(),
      progress: record.progress,
      error: record.status === 'failed' ? { code: record.failure_code ?? 'render_failed', message: record.failure_reason ?? 'The render failed.' } : null,
    };
  };

  return {
    video,

    /** Malformed ids answer not_found like unknown ones: either way no such video belongs to the caller. */
    ownedVideo: async (userId: string, id: string) => {
      const record = videoId.safeParse(id).success ? await videos.get(userId, id) : undefined;
      if (!record) throw notFound(`Video ${id}`);
      return record;
    },

    videoList: async (userId: string, limit: number) => ({
      object: 'list' as const,
      data: await Promise.all((await videos.list(userId, { limit })).map(video)),
    }),

    templateList: async () => ({
      object: 'list' as const,
      data: (await templates.list()).map((template) => ({
        id: String(template.id),
        name: template.name,
        preview_video_url: templateMediaUrl(baseUrl, template, 'preview-video'),
        preview_image_url: templateMediaUrl(baseUrl, template, 'preview-image'),
      })),
    }),

    account: async (credential: ApiCredential) => ({
      user_id: credential.userId,
      credit_balance: await credits.balance(credential.userId),
      credits_per_video: CREDITS_PER_VIDEO,
      scopes: credential.scopes,
    }),

    credits: async (userId: string) => {
      const [balance, recent] = await Promise.all([credits.balance(userId), credits.recent(userId, RECENT_LEDGER_ENTRIES)]);
      return {
        balance,
        credits_per_video: CREDITS_PER_VIDEO,
        recent: recent.map((entry) => ({ delta: entry.delta, reason: entry.reason, created_at: entry.created_at.toISOString() })),
      };
    },

    /** Creates an API video (one credit) and answers CreatedApiVideo. */
    createVideo: async (userId: string, request: { template_id: string; image_url: string }) => {
      const { video: created, creditsRemaining } = await videos.createApiVideo(userId, { templateId: request.template_id, imageUrl: request.image_url });
      return {
        id: created.id,
        status: 'processing' as const,
        template_id: request.template_id,
        credits_remaining: creditsRemaining,
        poll_url: `${baseUrl}/v1/videos/${created.id}`,
      };
    },
  };
}

export type ApiRepresentations = ReturnType<typeof apiRepresentations>;
