import type { Image, Template, Video } from '../db/schema.ts';
import { CREDITS_PER_VIDEO } from '../domain/pricing.ts';
import type { ApiCredential } from '../services/api-credential.ts';
import type { CreditStatement } from '../services/credit.service.ts';
import type { HostedAudioLink } from '../services/hosted-audio.service.ts';
import type { VoiceWithSample } from '../services/speech.service.ts';
import type { VideoLinks } from '../services/video-links.ts';
import type { CreatedVideo } from '../services/video-requests.ts';
import type { TemplateAsset } from '../templates/template-objects.ts';

/** The public URL of a template's song, preview picture or preview clip; null until it exists. */
export function templateMediaUrl(baseUrl: string, template: Template, asset: TemplateAsset): string | null {
  const present = asset === 'audio' || (asset === 'preview-image' ? template.preview_image_key : template.preview_video_key);
  return present ? `${baseUrl}/media/templates/${template.id}/${asset}` : null;
}

/**
 * The public records (ApiVideo, ApiTemplateList, ApiAccount, ApiCredits, CreatedApiVideo) built from what the
 * services answer, shared by /v1, the MCP tools and the webhook events so all of them say the same thing.
 * Presenting only shapes records (and signs a finished video's download links); it decides nothing.
 */
export function apiPresenter({ baseUrl, links }: { baseUrl: string; links: VideoLinks }) {
  const video = async (record: Video) => {
    const { videoUrl, thumbnailUrl } = await links.of(record);
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
      ...stageOf(record),
      sync: syncOf(record),
      error: record.status === 'failed' ? { code: record.failure_code ?? 'render_failed', message: record.failure_reason ?? 'The render failed.' } : null,
    };
  };

  return {
    video,

    videoList: async (records: Video[]) => ({ object: 'list' as const, data: await Promise.all(records.map(video)) }),

    templateList: (templates: Template[]) => ({
      object: 'list' as const,
      data: templates.map((template) => ({
        id: String(template.id),
        name: template.name,
        preview_video_url: templateMediaUrl(baseUrl, template, 'preview-video'),
        preview_image_url: templateMediaUrl(baseUrl, template, 'preview-image'),
      })),
    }),

    account: (credential: ApiCredential, balance: number) => ({
      user_id: credential.userId,
      credit_balance: balance,
      credits_per_video: CREDITS_PER_VIDEO,
      scopes: credential.scopes,
    }),

    credits: creditsRepresentation,

    /** CreatedApiVideo: what POST /v1/videos and create_video answer. */
    createdVideo: ({ video: created, creditsRemaining }: CreatedVideo) => ({
      id: created.id,
      status: 'processing' as const,
      ...(created.template_id !== null ? { template_id: String(created.template_id) } : {}),
      ...(created.audio_id !== null ? { audio_id: created.audio_id } : {}),
      aspect: created.aspect,
      credits_remaining: creditsRemaining,
      poll_url: `${baseUrl}/v1/videos/${created.id}`,
    }),

    voiceList: (voices: VoiceWithSample[]) => ({ object: 'list' as const, data: voices.map(voiceRepresentation) }),
  };
}

export type ApiPresenter = ReturnType<typeof apiPresenter>;

/** A video's render stage and since when; both null unless it is processing (and for renders begun before stages were recorded). */
function stageOf(record: Video) {
  const processing = record.status === 'processing' && record.render_stage !== null;
  return { stage: processing ? record.render_stage : null, stage_started_at: processing ? (record.render_stage_at?.toISOString() ?? null) : null };
}

/** VideoSync: the last finished render's sync report in the public spelling; null until a render recorded one. */
function syncOf({ sync }: Video) {
  if (!sync) return null;
  return {
    vocals_found: sync.vocalsFound,
    mouth_voice_r: sync.mouthVoiceR,
    instrumental_rest_share: sync.instrumentalRestShare,
    audio_start_seconds: sync.audioStartSeconds,
    audio_duration_seconds: sync.audioDurationSeconds,
  };
}

/** ApiCredits: the balance and its latest ledger entries, for GET /v1/credits, get_credits and GET /user/credits. */
export const creditsRepresentation = ({ balance, recent }: CreditStatement) => ({
  balance,
  credits_per_video: CREDITS_PER_VIDEO,
  recent: recent.map((entry) => ({ delta: entry.delta, reason: entry.reason, video_id: entry.video_id, created_at: entry.created_at.toISOString() })),
});

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
