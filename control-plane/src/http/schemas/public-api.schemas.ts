import { MAX_URL_LENGTH } from '../../media/host-vetting.ts';
import { uuidPathField } from '../path-params.ts';
import { FaceHintsField } from './image.schemas.ts';
import { Voice } from './speech.schemas.ts';
import { AspectRequestField, VideoAspectField } from './video-aspect.schemas.ts';
import { RenderStageField, StageStartedAtField } from './video-stage.schemas.ts';
import { VideoSyncField } from './video-sync.schemas.ts';
import { z } from 'zod';
import { MAX_SOURCE_AUDIO_SECONDS, MAX_SPEECH_CHARACTERS, MIN_AUDIO_SECONDS } from '@petsing/workflows/api-rules';

const ApiTemplate = z
  .object({
    id: z.string().meta({ description: 'Numeric string; send back exactly as given, do not parse.', example: '1' }),
    name: z.string(),
    preview_video_url: z.url().nullable().optional(),
    preview_image_url: z.url().nullable().optional(),
  })
  .meta({ id: 'ApiTemplate' });

export const ApiTemplateList = z
  .object({ object: z.literal('list'), data: z.array(ApiTemplate) })
  .meta({ id: 'ApiTemplateList' });

export const ApiAccount = z
  .object({
    user_id: z.string(),
    credit_balance: z.number().int(),
    credits_per_video: z.number().int(),
    scopes: z.array(z.string()),
  })
  .meta({ id: 'ApiAccount' });

const CreditLedgerEntry = z
  .object({
    delta: z.number().int().meta({ description: 'Positive for a purchase, grant or refund; negative for a spend.' }),
    reason: z.enum(['purchase', 'video_create', 'refund', 'grant']),
    video_id: z.uuid().nullable().meta({ description: 'The video a video_create charged or a refund gave back; null for purchases and grants.' }),
    created_at: z.iso.datetime(),
  })
  .meta({ id: 'CreditLedgerEntry' });

export const ApiCredits = z
  .object({
    balance: z.number().int(),
    credits_per_video: z.number().int(),
    recent: z.array(CreditLedgerEntry),
  })
  .meta({ id: 'ApiCredits' });

const ApiVideoError = z
  .object({ code: z.string(), message: z.string() })
  .meta({ id: 'ApiVideoError', description: 'Why a video failed; present when status is failed.' });

export const ApiVideo = z
  .object({
    id: z.uuid(),
    status: z.string().meta({
      description: 'One of pending, processing, completed, failed. Extensible: treat an unknown value as not yet terminal.',
      examples: ['pending', 'processing', 'completed', 'failed'],
    }),
    template_id: z.string().nullable().optional().meta({ description: 'The template song sung; null when the video sings audio (audio_id) or web-uploaded audio.' }),
    audio_id: z.uuid().nullable().optional().meta({ description: 'The audio of POST /v1/audio (or hosted speech or soundtrack) the video sings; null for template songs (added field).' }),
    video_url: z.url().nullable().optional().meta({ description: 'Direct MP4 link (expires); null until completed.' }),
    thumbnail_url: z.url().nullable().optional(),
    has_watermark: z.boolean().meta({ description: 'Always false for API-created videos.' }),
    aspect: VideoAspectField,
    created_at: z.iso.datetime(),
    progress: z.number().int().min(0).max(100).optional().meta({ description: 'Render progress, 0-100 (added field).' }),
    stage: RenderStageField.optional().meta({ description: 'Where a processing video stands (added field); see RenderStage.' }),
    stage_started_at: StageStartedAtField.optional(),
    sync: VideoSyncField.optional(),
    error: ApiVideoError.nullable().optional(),
  })
  .meta({ id: 'ApiVideo' });

export const ApiVideoList = z.object({ object: z.literal('list'), data: z.array(ApiVideo) }).meta({ id: 'ApiVideoList' });

/** The range of deadline_seconds of POST /v1/videos: long enough for a render to start, at most a day. */
const VIDEO_DEADLINE_SECONDS = { min: 10, max: 86_400 } as const;

export const CreateApiVideoRequest = z
  .object({
    template_id: z.string().min(1).max(20).optional().meta({ description: 'A template id from GET /v1/templates. Send exactly one of template_id and audio_id.', example: '1' }),
    audio_id: z
      .uuid()
      .optional()
      .meta({ description: 'The id answered by POST /v1/audio (this account\'s, valid 24 hours); the video lasts as long as the audio. Send exactly one of template_id and audio_id.' }),
    image_url: z
      .url()
      .max(2048)
      .optional()
      .meta({ description: 'Public HTTPS URL of the pet photo (JPEG, PNG, WebP or HEIC, up to 15 MB). Send exactly one of image_url and image_id. Without face, the photo is fetched and checked before any charge: one with no supported pet is 400 face_not_found (error.image_id names the checked photo, kept 24 hours).' }),
    image_id: z
      .uuid()
      .optional()
      .meta({ description: 'The id answered by POST /v1/images (valid 24 hours). Without a found face, face.mouth is required (400 face_not_found otherwise, before any charge).' }),
    face: FaceHintsField.optional(),
    aspect: AspectRequestField,
    audio_start_seconds: z
      .number()
      .optional()
      .meta({
        description:
          'With audio_id: where in the audio the video begins, in seconds, from 0 to the audio\'s duration_seconds minus 2 (400 audio_start_out_of_range '
          + 'otherwise, before any charge); the video sings at most 30 s from there. Without it, a soundtrack longer than 30 s is cut at its 30 s with the '
          + 'most singing (starting at a sung phrase), and a shorter one is sung whole. The video\'s sync.audio_start_seconds says which window was sung.',
        example: 12.5,
      }),
    deadline_seconds: z
      .number()
      .int()
      .min(VIDEO_DEADLINE_SECONDS.min)
      .max(VIDEO_DEADLINE_SECONDS.max)
      .optional()
      .meta({
        description:
          `Seconds (${VIDEO_DEADLINE_SECONDS.min}-${VIDEO_DEADLINE_SECONDS.max}) from this create: a video not completed by then is canceled `
          + '(status failed, error code canceled) and its credit refunded, as POST /v1/videos/{id}/cancel does. Without it, no deadline.',
        example: 300,
      }),
    webhook_url: z
      .url()
      .max(MAX_URL_LENGTH)
      .optional()
      .meta({
        description:
          'Also send this video\'s events (video.processing, video.completed, video.failed) here, signed with the account\'s default webhook secret '
          + '(POST /v1/webhooks/default-secret, needed first: 400 webhook_secret_required otherwise). Vetted like image_url (400 webhook_url_refused).',
      }),
  })
  .meta({ id: 'CreateApiVideoRequest', description: 'Send exactly one of template_id and audio_id, and exactly one of image_url and image_id.' });

export const CreatedApiVideo = z
  .object({
    id: z.uuid(),
    status: z.literal('processing'),
    template_id: z.string().optional(),
    audio_id: z.uuid().optional().meta({ description: 'Present when the video sings audio of POST /v1/audio.' }),
    aspect: VideoAspectField,
    credits_remaining: z.number().int(),
    poll_url: z.url().meta({ description: 'Poll until status is completed, roughly every 10 seconds.' }),
  })
  .meta({ id: 'CreatedApiVideo' });

/** The `{id}` of /v1/videos/{id} and the paths below it. */
export const VideoIdPath = z.object({ id: uuidPathField('Video id (uuid).') });

export const VideoListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(25).meta({ description: '1-100, default 25.' }),
});

export const CreateApiAudioRequest = z
  .object({
    text: z.string().optional().meta({
      description: `Speech: the words to speak, at most ${MAX_SPEECH_CHARACTERS} characters (about 30 seconds), with voice_id.`,
      maxLength: MAX_SPEECH_CHARACTERS,
      example: 'Happy birthday, Max! You are the best dog in the world.',
    }),
    voice_id: z.string().optional().meta({ description: 'Speech: an id from GET /v1/voices.', example: 'en-us-female' }),
    video_url: z.string().max(MAX_URL_LENGTH).optional().meta({
      description: 'A short-video link (a public TikTok video); its soundtrack, up to 180 seconds, becomes the audio (a video sings 30 s of it: see audio_start_seconds).',
      example: 'https://www.tiktok.com/@user/video/7301234567890123456',
    }),
  })
  .meta({ id: 'CreateApiAudioRequest', description: 'Either speech (text and voice_id) or a short-video link (video_url). For an audio file, send multipart/form-data instead.' });

export const CreateApiAudioForm = z
  .object({ audio: z.string().meta({ format: 'binary', description: 'MP3, WAV, MP4/AAC or WebM audio of 2 to 30 seconds, up to 20 MB.' }) })
  .meta({ id: 'CreateApiAudioForm' });

export const ApiAudio = z
  .object({
    id: z.uuid().meta({ description: 'Pass as audio_id to POST /v1/videos.' }),
    duration_seconds: z.number().min(MIN_AUDIO_SECONDS).max(MAX_SOURCE_AUDIO_SECONDS).meta({ description: 'Length of the stored audio; the video lasts as long, up to 30 s (a longer short-video soundtrack, up to 180 s, is sung in its 30 s with the most singing, or from audio_start_seconds).' }),
    expires_at: z.iso.datetime().meta({ description: 'Creates can use the audio until then (24 hours).' }),
  })
  .meta({ id: 'ApiAudio' });

export const ApiVoiceList = z.object({ object: z.literal('list'), data: z.array(Voice) }).meta({ id: 'ApiVoiceList' });
