import { z } from 'zod';
import type { FaceHints, VideoAspect } from '@petsing/workflows';
import type { Image, Video } from '../db/schema.ts';
import { AppError, notFound } from '../errors/app-error.ts';
import type { AppContext } from '../runtime/app-context.ts';
import type { ApiCredential } from '../services/api-key.service.ts';
import { CREDITS_PER_VIDEO } from '../services/pricing.ts';
import type { HostedAudioLink } from '../services/hosted-audio.service.ts';
import type { VoiceWithSample } from '../services/speech.service.ts';
import type { ApiVideoPhoto, ApiVideoSound } from '../services/video.service.ts';
import { templateMediaUrl } from './routes/service.routes.ts';

const RECENT_LEDGER_ENTRIES = 20;
const videoId = z.uuid();

/**
 * The public records (ApiTemplateList, ApiAccount, ApiCredits, ApiVideo, CreatedApiVideo) built from the
 * services, shared by /v1 and the MCP tools so both always answer the same thing.
 */
export function apiRepresentations(context: AppContext) {
  const { baseUrl } = context.config;
  const { videos, credits, templates, speech, soundtracks, webhooks } = context.services;

  const video = async (record: Video) => {
    const { videoUrl, thumbnailUrl } = await videos.links(record);
    return {
      id: record.id,
      status: record.status,
      template_id: record.template_id === null ? null : String(record.template_id),
      audio_id: record.audio_id,
      video_url: videoUrl,
      thumbnail_url: thumbnailUrl,
      has_watermark: record.has_watermark,
      aspect: record.aspect,
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

    /**
     * POST /v1/videos/{id}/cancel and the cancel_video tool: the video failed with code canceled, refunded, and
     * video.failed emitted here, where it fails (nothing is sent twice for a video that had failed already).
     */
    cancelVideo: async (userId: string, id: string) => {
      if (!videoId.safeParse(id).success) throw notFound(`Video ${id}`);
      const canceled = await videos.cancel(userId, id);
      await webhooks.emitVideoEvent(canceled.id, 'video.failed', video);
      return video(canceled);
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
    createVideo: async (
      userId: string,
      request: { template_id?: string | undefined; audio_id?: string | undefined; image_url?: string | undefined; image_id?: string | undefined; face?: FaceHints | undefined; aspect?: VideoAspect | undefined; webhook_url?: string | undefined; deadline_seconds?: number | undefined },
    ) => {
      const { video: created, creditsRemaining } = await videos.createApiVideo(userId, {
        sound: apiVideoSound(request),
        photo: apiVideoPhoto(request),
        ...(request.face ? { face: request.face } : {}),
        ...(request.aspect ? { aspect: request.aspect } : {}),
        ...(request.webhook_url ? { webhookUrl: request.webhook_url } : {}),
        ...(request.deadline_seconds ? { deadlineSeconds: request.deadline_seconds } : {}),
      });
      return {
        id: created.id,
        status: 'processing' as const,
        ...(request.template_id !== undefined ? { template_id: request.template_id } : {}),
        ...(created.audio_id !== null ? { audio_id: created.audio_id } : {}),
        aspect: created.aspect,
        credits_remaining: creditsRemaining,
        poll_url: `${baseUrl}/v1/videos/${created.id}`,
      };
    },

    voiceList: () => ({ object: 'list' as const, data: speech.voices().map(voiceRepresentation) }),

    /** POST /v1/audio and the speak tool with JSON: speech or a short video's soundtrack, answered as ApiAudio. */
    createAudio: async (userId: string, request: { text?: string | undefined; voice_id?: string | undefined; video_url?: string | undefined }, signal?: AbortSignal) => {
      if (request.video_url !== undefined) {
        if (request.text !== undefined || request.voice_id !== undefined) {
          throw new AppError('invalid_request', 'Send either text and voice_id (speech) or video_url (a short video\'s soundtrack), not both.');
        }
        const soundtrack = await soundtracks.extract(userId, request.video_url, signal);
        return audioRepresentation(soundtrack.audio);
      }
      if (request.text === undefined || request.voice_id === undefined) {
        throw new AppError('invalid_request', 'Send text and voice_id (speech), video_url (a short video\'s soundtrack), or an audio file as multipart/form-data.', {
          hint: 'For speech send {"text": "...", "voice_id": "<id from GET /v1/voices>"}; for a soundtrack send {"video_url": "https://www.tiktok.com/@user/video/..."}.',
        });
      }
      return audioRepresentation(await speech.synthesize(userId, { text: request.text, voiceId: request.voice_id }, signal));
    },
  };
}

/** Voice: an entry of GET /tts/voices and GET /v1/voices. */
export const voiceRepresentation = (voice: VoiceWithSample) => ({ id: voice.id, name: voice.name, language: voice.language, sample_url: voice.sampleUrl });

/** ApiAudio: audio held for creates by audio_id. */
export const audioRepresentation = (audio: HostedAudioLink) => ({
  id: audio.id,
  duration_seconds: audio.durationSeconds,
  expires_at: audio.expiresAt.toISOString(),
});

/** ApiImage: a checked photo, for /v1, MCP and the web app alike. */
export const imageRepresentation = (record: Image) => ({
  id: record.id,
  width: record.width,
  height: record.height,
  face: record.face,
  expires_at: record.expires_at.toISOString(),
});

/** Exactly one of template_id and audio_id. */
function apiVideoSound(request: { template_id?: string | undefined; audio_id?: string | undefined }): ApiVideoSound {
  if (request.template_id !== undefined && request.audio_id !== undefined) {
    throw new AppError('template_or_audio_required', 'Send either template_id or audio_id, not both.');
  }
  if (request.template_id !== undefined) return { templateId: request.template_id };
  if (request.audio_id !== undefined) return { audioId: request.audio_id };
  throw new AppError('template_or_audio_required', 'The request needs template_id (a song from GET /v1/templates) or audio_id (from POST /v1/audio).');
}

/** Exactly one of image_url and image_id (a rule JSON Schema cannot carry into the MCP tool's input). */
function apiVideoPhoto(request: { image_url?: string | undefined; image_id?: string | undefined }): ApiVideoPhoto {
  if (request.image_url !== undefined && request.image_id !== undefined) {
    throw new AppError('invalid_request', 'Send either image_url or image_id, not both.');
  }
  if (request.image_url !== undefined) return { url: request.image_url };
  if (request.image_id !== undefined) return { imageId: request.image_id };
  throw new AppError('invalid_request', 'The request needs image_url (a public photo URL) or image_id (from POST /v1/images).');
}

export type ApiRepresentations = ReturnType<typeof apiRepresentations>;
