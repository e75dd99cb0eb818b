import { Router } from 'express';
import { FaceHints, VideoAspect } from '@petsing/workflows';
import { AppError } from '../../errors/app-error.ts';
import type { AppContext } from '../../runtime/app-context.ts';
import type { VideoOptions, WebVideoRequest } from '../../services/video-requests.ts';
import { imageRepresentation } from '../../presenters/api.presenter.ts';
import { describeZodError, requestBodyError } from '../errors.ts';
import { parseClientJson } from '../json-body.ts';
import { rateLimit } from '../middleware/rate-limit.ts';
import { requireWebUser, webUserOf } from '../middleware/web-auth.ts';
import { AUDIO_CONTENT_TYPES, AUDIO_UPLOAD } from '../audio-upload.ts';
import { readMultipart, type MultipartForm } from '../multipart.ts';
import { errorResponses, jsonResponse, type OpenAPIRegistry } from '../openapi.ts';
import { IMAGE_UPLOAD, withUploadedPhoto } from '../photo-upload.ts';
import { ApiImage, CheckImageForm, FACE_HINT } from '../schemas/image.schemas.ts';
import { ASPECT_HINT } from '../schemas/video-aspect.schemas.ts';
import { RenderQueued } from '../schemas/web-app.schemas.ts';
import { AudioCheck, CheckAudioForm, CreateWithAudioForm, CreateWithTemplateForm, DeleteVideoRequest, DeleteVideoResult, NO_VOICE_WARNING } from '../schemas/web-videos.schemas.ts';
import { parseBody } from '../validation.ts';
import { webPresenter } from '../../presenters/web.presenter.ts';
import { idTokenSecurity } from './web-app.routes.ts';

/** Form fields every create takes besides its sound: the photo by id instead of a file, the face hints as JSON and the output shape. */
const PHOTO_FIELDS = ['image_id', 'face', 'aspect'] as const;

/** POST /create-with-template, POST /create-with-audio and DELETE /delete-video of the web app. */
export function webVideosRoutes(context: AppContext): Router {
  const router = Router();
  const signedIn = requireWebUser(context.services.identity);
  const { videos, images, audioChecks, rateLimiter } = context.services;
  const limited = rateLimit(rateLimiter, 'media');
  const represent = webPresenter({ baseUrl: context.config.baseUrl, links: context.services.videoLinks });

  router.post('/create-with-template', signedIn, limited, async (req, res) => {
    const form = await readMultipart(req, { files: { image: IMAGE_UPLOAD }, fields: ['template_id', ...PHOTO_FIELDS] });
    try {
      const templateId = requiredField(form, 'template_id', 'an id from GET /templates');
      const created = await videos.createWebVideoWithTemplate(webUserOf(res), { ...photoRequest(form), templateId });
      res.set('Cache-Control', 'no-store');
      res.json(await represent.renderQueued(created));
    } finally {
      await form.cleanup();
    }
  });

  router.post('/create-with-audio', signedIn, limited, async (req, res) => {
    const form = await readMultipart(req, { files: { image: IMAGE_UPLOAD, audio: AUDIO_UPLOAD }, fields: ['audio_url', 'audio_start_seconds', ...PHOTO_FIELDS] });
    try {
      const audio = form.files.audio;
      const audioUrl = form.fields.audio_url?.trim();
      if (audio && audioUrl) throw new AppError('invalid_request', 'Send either an "audio" file or an "audio_url" field, not both.');
      if (!audio && !audioUrl) throw new AppError('invalid_request', 'The form needs an "audio" file or an "audio_url" field.');
      const sound = audio ? { file: audio } : { url: audioUrl ?? '' };
      const start = audioStartField(form);
      const created = await videos.createWebVideoWithAudio(webUserOf(res), { ...photoRequest(form), sound, ...(start !== undefined ? { audioStartSeconds: start } : {}) });
      res.set('Cache-Control', 'no-store');
      res.json(await represent.renderQueued(created));
    } finally {
      await form.cleanup();
    }
  });

  router.post('/images', signedIn, limited, async (req, res) => {
    const user = webUserOf(res);
    const image = await withUploadedPhoto(req, (photo) => images.checkUpload(user.id, photo));
    res.set('Cache-Control', 'no-store');
    res.status(201).json(imageRepresentation(image));
  });

  router.post('/audio-check', signedIn, limited, async (req, res) => {
    const form = await readMultipart(req, { files: { audio: AUDIO_UPLOAD }, fields: ['audio_url'] });
    try {
      const audio = form.files.audio;
      const audioUrl = form.fields.audio_url?.trim();
      if (Boolean(audio) === Boolean(audioUrl)) throw new AppError('invalid_request', 'Send either an "audio" file or an "audio_url" field.');
      const check = audio ? await audioChecks.checkUpload(audio) : await audioChecks.checkHosted(webUserOf(res).id, audioUrl ?? '');
      res.set('Cache-Control', 'no-store');
      res.json({
        vocals_found: check.vocalsFound,
        voiced_seconds: check.voicedSeconds,
        audio_start_seconds: check.startSeconds,
        duration_seconds: check.durationSeconds,
        warning: check.vocalsFound ? null : NO_VOICE_WARNING,
      });
    } finally {
      await form.cleanup();
    }
  });

  router.delete('/delete-video', signedIn, async (req, res) => {
    const { video_id: videoId } = parseBody(DeleteVideoRequest, req);
    await videos.delete(webUserOf(res).id, videoId);
    res.json({ message: `Video ${videoId} deleted.` });
  });

  return router;
}

/**
 * The photo and option fields of a create form, for the service: the `image` file and the `image_id` as sent
 * (the service refuses both or neither), and the `face` and `aspect` fields parsed, or the refusal they earned.
 */
function photoRequest(form: MultipartForm): WebVideoRequest {
  const id = form.fields.image_id?.trim();
  let options: VideoOptions | AppError;
  try {
    options = videoOptions(form);
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    options = error;
  }
  return { ...(form.files.image ? { image: form.files.image } : {}), ...(id ? { imageId: id } : {}), options };
}

/** The optional `face` and `aspect` fields, refused before anything is decoded, stored or spent. */
function videoOptions(form: MultipartForm): VideoOptions {
  const face = faceField(form);
  const aspect = aspectField(form);
  return { ...(face ? { face } : {}), ...(aspect ? { aspect } : {}) };
}

/** The optional `aspect` field: the same values as `aspect` of POST /v1/videos; empty means the default. */
function aspectField(form: MultipartForm): VideoAspect | undefined {
  const text = form.fields.aspect?.trim();
  if (!text) return undefined;
  const parsed = VideoAspect.safeParse(text);
  if (!parsed.success) throw new AppError('invalid_request', `Invalid "aspect" form field: ${describeZodError(parsed.error)}.`, { hint: ASPECT_HINT });
  return parsed.data;
}

/** The optional `face` field: the same JSON object as `face` of POST /v1/videos. */
function faceField(form: MultipartForm): FaceHints | undefined {
  const text = form.fields.face?.trim();
  if (!text) return undefined;
  let value: unknown;
  try {
    value = parseClientJson(text);
  } catch (error) {
    const tooDeep = requestBodyError(error);
    throw tooDeep ?? new AppError('invalid_request', 'The "face" form field is not valid JSON.', { hint: FACE_HINT });
  }
  const parsed = FaceHints.safeParse(value);
  if (!parsed.success) throw new AppError('invalid_request', `Invalid "face" form field: ${describeZodError(parsed.error)}.`, { hint: FACE_HINT });
  return parsed.data;
}

/** The optional `audio_start_seconds` field: seconds into the audio (the service checks it against the audio's length). */
function audioStartField(form: MultipartForm): number | undefined {
  const text = form.fields.audio_start_seconds?.trim();
  if (!text) return undefined;
  const seconds = Number(text);
  if (!Number.isFinite(seconds)) throw new AppError('audio_start_out_of_range', `The "audio_start_seconds" field is "${text}", not a number of seconds.`);
  return seconds;
}

/** A field that must be there and not blank; its value is taken exactly as sent, as /v1 takes it. */
function requiredField(form: MultipartForm, field: string, what: string): string {
  const value = form.fields[field];
  if (!value?.trim()) throw new AppError('invalid_request', `The form needs a "${field}" field (${what}).`);
  return value;
}

const formBody = (schema: typeof CreateWithTemplateForm | typeof CreateWithAudioForm, encoding: Record<string, { contentType: string }>) => ({
  required: true,
  content: { 'multipart/form-data': { schema, encoding } },
});

const imageEncoding = { image: { contentType: 'image/png, image/jpeg, image/webp' } };

export function registerWebVideoPaths(registry: OpenAPIRegistry): void {
  const createErrors = [
    'invalid_request', 'multipart_required', 'unsupported_image_format', 'unknown_image', 'face_not_found', 'no_free_credits', 'unauthorized',
    'payload_too_large', 'rate_limited', 'service_unavailable', 'face_detection_unavailable',
  ] as const;
  const paymentNote = 'Costs one of the month\'s free credits and the video carries a watermark, unless the caller is subscribed (then neither). '
    + 'Answers as soon as the render is queued; follow it in GET /user/videos or on the websocket. The optional `aspect` field picks the '
    + 'output shape: square (720×720, the default), 4:5 (720×900) or 9:16 (720×1280).';
  registry.registerPath({
    method: 'post', path: '/create-with-template', security: idTokenSecurity, tags: ['web-app'], operationId: 'createWebVideoWithTemplate',
    summary: 'Create a video from a template song and a pet photo',
    description: `${paymentNote} The image may be at most 15 MB.`,
    request: { body: formBody(CreateWithTemplateForm, imageEncoding) },
    responses: { 200: jsonResponse('The render is queued.', RenderQueued), ...errorResponses(...createErrors, 'unknown_template') },
  });
  registry.registerPath({
    method: 'post', path: '/create-with-audio', security: idTokenSecurity, tags: ['web-app'], operationId: 'createWebVideoWithAudio',
    summary: 'Create a video from audio and a pet photo',
    description: `${paymentNote} The audio must last 2 to 30 seconds (the video is as long as the audio); the image may be at most 15 MB, the audio 20 MB.`,
    request: { body: formBody(CreateWithAudioForm, { ...imageEncoding, audio: { contentType: AUDIO_CONTENT_TYPES } }) },
    responses: {
      200: jsonResponse('The render is queued.', RenderQueued),
      ...errorResponses(...createErrors, 'unsupported_audio_format', 'audio_duration_out_of_range', 'audio_start_out_of_range', 'unknown_audio_url'),
    },
  });
  registry.registerPath({
    method: 'post', path: '/images', security: idTokenSecurity, tags: ['web-app'], operationId: 'checkWebImage',
    summary: 'Check a pet photo before creating: find the pet\'s face',
    description:
      'Stores the photo for 24 hours and answers where the pet\'s face is (null when none is found), so the page can show the mouth and '
      + 'let the person drag it. Free (counts against the media rate limit). Create with the answered id as `image_id` and the corrected '
      + 'points as `face`; a photo without a found face needs `face` with a mouth.',
    request: { body: { required: true, content: { 'multipart/form-data': { schema: CheckImageForm, encoding: imageEncoding } } } },
    responses: {
      201: jsonResponse('The photo is stored; its face, if found.', ApiImage),
      ...errorResponses('invalid_request', 'multipart_required', 'unsupported_image_format', 'payload_too_large', 'unauthorized', 'rate_limited', 'face_detection_unavailable'),
    },
  });
  registry.registerPath({
    method: 'post', path: '/audio-check', security: idTokenSecurity, tags: ['web-app'], operationId: 'checkWebAudio',
    summary: 'Check audio before creating: is there a singing voice?',
    description:
      'Separates the audio\'s voice from the band as the video\'s preparation will (the stems are kept by the audio\'s hash, so the video made '
      + 'from the same file does not separate it again) and answers whether the part a video would sing (a sound longer than 30 s: its 30 s with '
      + 'the most singing, from audio_start_seconds) holds a singing voice. Send an `audio` file or the `audio_url` of a sound this account made '
      + '(POST /tts, POST /social/extract-audio). Without a voice the video still renders, '
      + 'with the mouth at rest, so the page warns before paying ("No singing voice found"). Free (counts against the media rate limit); '
      + 'audio the create would refuse is refused alike.',
    request: { body: { required: true, content: { 'multipart/form-data': { schema: CheckAudioForm, encoding: { audio: { contentType: AUDIO_CONTENT_TYPES } } } } } },
    responses: {
      200: jsonResponse('What the check found.', AudioCheck),
      ...errorResponses(
        'invalid_request', 'multipart_required', 'unsupported_audio_format', 'audio_duration_out_of_range', 'unknown_audio_url', 'audio_expired', 'payload_too_large',
        'unauthorized', 'rate_limited', 'service_unavailable',
      ),
    },
  });
  registry.registerPath({
    method: 'delete', path: '/delete-video', security: idTokenSecurity, tags: ['web-app'], operationId: 'deleteWebVideo',
    summary: 'Delete a video of the caller',
    description: 'Removes the video, its photo, audio and rendered files, and stops a render in progress. Spent credits are not given back.',
    request: { body: { required: true, content: { 'application/json': { schema: DeleteVideoRequest } } } },
    responses: {
      200: jsonResponse('Deleted.', DeleteVideoResult),
      ...errorResponses('invalid_request', 'malformed_json', 'nesting_too_deep', 'unauthorized', 'not_found', 'delete_failed'),
    },
  });
}
