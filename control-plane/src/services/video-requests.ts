import type { FaceHints, PhotoCheck, VideoAspect } from '@petsing/workflows';
import { MIN_AUDIO_SECONDS } from '@petsing/workflows/api-rules';
import type { Video } from '../db/schema.ts';
import { AppError } from '../errors/app-error.ts';
import type { LocalUpload, MediaUpload, ReceivedFile } from '../media/uploads.ts';
import type { Charge } from '../repositories/video.repository.ts';
import type { VideoSurface } from './ports/metrics.ts';

// What a create asks of VideoService from each surface, and the rules that read a request (exactly one sound and
// one photo; the face and aspect fields as the route parsed them).

export type CreateVideoInput = {
  userId: string;
  origin: 'api' | 'web';
  /** The surface that asked, for the metrics: an `api` video comes from /v1 or from MCP; unset, its origin. */
  surface?: VideoSurface;
  charge: Charge;
  watermark: boolean;
  templateId?: number;
  /**
   * A photo to store, a URL the workflow fetches, or a photo the service holds (copied, so the video keeps it) with
   * its check, which the video keeps too: every render of it uses that face.
   */
  image: { upload: MediaUpload } | { url: string } | { key: string; check?: PhotoCheck };
  /** An uploaded file, or audio the service holds (copied; `hostedAudioId` names the hosted audio it came from). */
  audio?: { upload: MediaUpload } | { key: string; hostedAudioId?: string };
  face?: FaceHints;
  /** The output shape; square when not given. */
  aspect?: VideoAspect;
  /** deadline_seconds of an API create: canceled and refunded unless completed by then. */
  deadlineSeconds?: number;
  /** An API create's webhook_url, already vetted (WebhookService.vetVideoWebhookUrl). */
  webhookUrl?: string;
  /** Where in the audio the video begins (POST /v1/videos audio_start_seconds, checked against the audio's length). */
  audioStartSeconds?: number;
};

/** What every create surface takes besides the photo and the sound: face corrections and the output shape. */
export type VideoOptions = { face?: FaceHints; aspect?: VideoAspect };

/** POST /v1/videos and the create_video tool, as parsed from the wire: exactly one sound and one photo. */
export type ApiVideoRequest = {
  template_id?: string | undefined;
  audio_id?: string | undefined;
  image_url?: string | undefined;
  image_id?: string | undefined;
  face?: FaceHints | undefined;
  aspect?: VideoAspect | undefined;
  webhook_url?: string | undefined;
  deadline_seconds?: number | undefined;
  audio_start_seconds?: number | undefined;
};

/** What an API video sings: a template song, or audio stored by POST /v1/audio. */
export type ApiVideoSound = { templateId: string } | { audioId: string };

/** The photo of an API video: a URL the render fetches, or a photo checked by POST /v1/images. */
export type ApiVideoPhoto = { url: string } | { imageId: string };

/** The photo of a web video: an uploaded file, or a photo checked by POST /images. */
export type WebVideoPhoto = { upload: LocalUpload } | { imageId: string };

export type CreatedVideo = { video: Video; creditsRemaining: number };

export type VideoPage = { videos: Video[]; page: number; pageSize: number; total: number };

/** What a web video sings: a template song, an uploaded audio file (MP3) or stored audio (hosted speech). */
export type WebVideoSound = { templateId: number } | { audio: LocalUpload | { key: string; hostedAudioId: string } };

/**
 * What a web create's form holds besides its sound, as the route read it: the photo (an `image` file or the
 * `image_id` of a photo checked by POST /images; the service refuses both or neither) and the face and aspect
 * fields, parsed, or the refusal their parsing earned, which the service raises in its turn (after the template
 * is found), so a request with several faults is refused for the same one as always.
 */
export type WebVideoRequest = { image?: ReceivedFile; imageId?: string; options: VideoOptions | AppError };

/** POST /create-with-template: the `template_id` field exactly as sent (not blank). */
export type WebTemplateVideoRequest = WebVideoRequest & { templateId: string };

/** POST /create-with-audio: an uploaded `audio` file or the `audio_url` of the caller's hosted audio. */
export type WebAudioVideoRequest = WebVideoRequest & { sound: { file: ReceivedFile } | { url: string }; audioStartSeconds?: number | undefined };

/**
 * The creator's start in an audio of `audioSeconds` (POST /v1/videos and POST /create-with-audio `audio_start_seconds`),
 * as a CreateVideoInput field: it must leave the shortest audio a video is made from. Absent: nothing (the window is
 * chosen when the audio is prepared).
 */
export function audioStartWithin(startSeconds: number | undefined, audioSeconds: number): { audioStartSeconds?: number } {
  if (startSeconds === undefined) return {};
  const latest = Math.max(0, audioSeconds - MIN_AUDIO_SECONDS);
  if (!(startSeconds >= 0 && startSeconds <= latest)) {
    throw new AppError('audio_start_out_of_range', `audio_start_seconds is ${startSeconds}; the audio lasts ${audioSeconds.toFixed(2)} s, so it must be 0 to ${latest.toFixed(2)}.`);
  }
  return { audioStartSeconds: startSeconds };
}

/** The face and aspect fields of a web create, or the refusal the route found in them. */
export function optionsOf(request: WebVideoRequest): VideoOptions {
  if (request.options instanceof AppError) throw request.options;
  return request.options;
}

/** Exactly one of template_id and audio_id. */
export function apiVideoSound(request: ApiVideoRequest): ApiVideoSound {
  if (request.template_id !== undefined && request.audio_id !== undefined) {
    throw new AppError('template_or_audio_required', 'Send either template_id or audio_id, not both.');
  }
  if (request.template_id !== undefined) return { templateId: request.template_id };
  if (request.audio_id !== undefined) return { audioId: request.audio_id };
  throw new AppError('template_or_audio_required', 'The request needs template_id (a song from GET /v1/templates) or audio_id (from POST /v1/audio).');
}

/** Exactly one of image_url and image_id (a rule JSON Schema cannot carry into the MCP tool's input). */
export function apiVideoPhoto(request: ApiVideoRequest): ApiVideoPhoto {
  if (request.image_url !== undefined && request.image_id !== undefined) {
    throw new AppError('invalid_request', 'Send either image_url or image_id, not both.');
  }
  if (request.image_url !== undefined) return { url: request.image_url };
  if (request.image_id !== undefined) return { imageId: request.image_id };
  throw new AppError('invalid_request', 'The request needs image_url (a public photo URL) or image_id (from POST /v1/images).');
}
