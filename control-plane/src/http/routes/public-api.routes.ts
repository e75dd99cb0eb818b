import { Router } from 'express';
import { z } from 'zod';
import { CURRENT_API_VERSION, versionHeaders } from '../../services/api-versions.ts';
import { CREDITS_PER_VIDEO } from '../../domain/pricing.ts';
import { apiPresenter, audioRepresentation, imageRepresentation } from '../../presenters/api.presenter.ts';
import { IdempotencyService } from '../../services/idempotency.service.ts';
import type { AppContext } from '../../runtime/app-context.ts';
import { AUDIO_CONTENT_TYPES, withUploadedAudio } from '../audio-upload.ts';
import { whileConnected } from '../client-hang-up.ts';
import { credentialOf, identifyApiCredential, requireApiCredential, requireScope } from '../middleware/api-auth.ts';
import { rateLimit } from '../middleware/rate-limit.ts';
import { credentialSecurity, errorResponses, jsonResponse, type OpenAPIRegistry } from '../openapi.ts';
import { uuidParam } from '../path-params.ts';
import { withUploadedPhoto } from '../photo-upload.ts';
import { ApiImage, CheckImageForm, CheckImageUrlRequest, FACE_HINT } from '../schemas/image.schemas.ts';
import { ASPECT_HINT } from '../schemas/video-aspect.schemas.ts';
import {
  ApiAccount,
  ApiAudio,
  ApiCredits,
  ApiVoiceList,
  CreateApiAudioForm,
  CreateApiAudioRequest,
  ApiTemplateList,
  ApiVideo,
  ApiVideoList,
  CreateApiVideoRequest,
  CreatedApiVideo,
  VideoIdPath,
  VideoListQuery,
} from '../schemas/public-api.schemas.ts';
import { parseBody, parseQuery } from '../validation.ts';
import { HEARTBEAT_SECONDS, MAX_WAIT_SECONDS, preferredWaitSeconds, streamVideoEvents } from '../video-waiting.ts';
import { webhookRoutes } from './webhook.routes.ts';

export function publicApiRoutes(context: AppContext): Router {
  const { baseUrl } = context.config;
  const { videos, videoWatch, images, hostedAudio, credentials, rateLimiter, idempotency, templates, credits, speech, audioRequests, videoLinks } = context.services;
  const router = Router();
  const version = context.apiVersions.find((entry) => entry.version === CURRENT_API_VERSION);
  if (!version) throw new Error(`API version ${CURRENT_API_VERSION} is missing from the version registry`);

  router.use((_req, res, next) => {
    res.set(versionHeaders(baseUrl, version));
    next();
  });
  router.use(identifyApiCredential((token) => credentials.verify(token, 'api')));
  router.use(rateLimit(rateLimiter));
  // {BASE_URL}'s metadata: the API is the service's default resource (OAuthService, DEFAULT_AUDIENCE).
  router.use(requireApiCredential(`${baseUrl}/.well-known/oauth-protected-resource`, credentials.audienceHint('api')));

  const present = apiPresenter({ baseUrl, links: videoLinks });

  router.get('/templates', requireScope('videos:read'), async (_req, res) => {
    res.json(present.templateList(await templates.list()));
  });

  router.get('/me', requireScope('videos:read'), async (_req, res) => {
    const credential = credentialOf(res);
    res.json(present.account(credential, await credits.balance(credential.userId)));
  });

  router.get('/credits', requireScope('videos:read'), async (_req, res) => {
    res.json(present.credits(await credits.statement(credentialOf(res).userId)));
  });

  router.get('/videos', requireScope('videos:read'), async (req, res) => {
    const { limit } = parseQuery(VideoListQuery, req);
    res.json(await present.videoList(await videos.list(credentialOf(res).userId, { limit })));
  });

  router.post('/videos', requireScope('videos:write'), async (req, res) => {
    const { userId } = credentialOf(res);
    const request = parseBody(CreateApiVideoRequest, req, { face: FACE_HINT, aspect: ASPECT_HINT });
    // A replayed Idempotency-Key answers what the first request answered, so the presented body is what is kept.
    const create = async () => ({ status: 202, body: present.createdVideo(await videos.createApiVideo(userId, request, 'api')) });
    const key = req.get('Idempotency-Key');
    const result = key ? await idempotency.run(userId, key, IdempotencyService.fingerprint(request), create) : { ...(await create()), replayed: false };
    if (result.replayed) res.set('Idempotent-Replayed', 'true');
    res.status(result.status).location((result.body as { poll_url: string }).poll_url).json(result.body);
  });

  router.post('/images', requireScope('videos:write'), async (req, res) => {
    const { userId } = credentialOf(res);
    const image = req.is('multipart/form-data')
      ? await withUploadedPhoto(req, (photo) => images.checkUpload(userId, photo))
      : await images.checkUrl(userId, parseBody(CheckImageUrlRequest, req).image_url);
    res.status(201).json(imageRepresentation(image));
  });

  router.post('/audio', requireScope('videos:write'), async (req, res) => {
    const { userId } = credentialOf(res);
    const audio = req.is('multipart/form-data')
      ? audioRepresentation(await withUploadedAudio(req, (file) => hostedAudio.storeUpload(userId, file)))
      : audioRepresentation(await whileConnected(res, (signal) => audioRequests.create(userId, parseBody(CreateApiAudioRequest, req), signal)));
    res.status(201).json(audio);
  });

  router.get('/voices', requireScope('videos:read'), (_req, res) => {
    res.json(present.voiceList(speech.voices()));
  });

  router.get('/videos/:id', requireScope('videos:read'), async (req, res) => {
    const { userId } = credentialOf(res);
    let video = await videos.getOwned(userId, uuidParam(req, 'id', 'Video'));
    const wait = preferredWaitSeconds(req);
    res.vary('Prefer');
    if (wait !== undefined) {
      res.set('Preference-Applied', `wait=${wait}`);
      const id = video.id;
      video = (await whileConnected(res, (signal) => videoWatch.waitForTerminal(userId, id, wait * 1000, signal))) ?? (await videos.getOwned(userId, id));
    }
    res.json(await present.video(video));
  });

  router.get('/videos/:id/events', requireScope('videos:read'), async (req, res) => {
    const video = await videos.getOwned(credentialOf(res).userId, uuidParam(req, 'id', 'Video'));
    await streamVideoEvents(req, res, { video, watch: videoWatch, represent: present.video, logger: context.logger });
  });

  router.post('/videos/:id/cancel', requireScope('videos:write'), async (req, res) => {
    res.json(await present.video(await videos.cancel(credentialOf(res).userId, uuidParam(req, 'id', 'Video'))));
  });

  router.use(webhookRoutes(context));

  router.delete('/videos/:id', requireScope('videos:write'), async (req, res) => {
    const { userId } = credentialOf(res);
    await videos.delete(userId, uuidParam(req, 'id', 'Video'));
    res.status(204).end();
  });

  return router;
}

const readSecurity = credentialSecurity('videos:read');
const writeSecurity = credentialSecurity('videos:write');
const rateLimitHeaders = z.object({
  RateLimit: z.string().meta({ description: 'Remaining quota and seconds until the window resets (IETF httpapi RateLimit).' }),
  'RateLimit-Policy': z.string().meta({ description: 'The quota policy (IETF httpapi RateLimit-Policy).' }),
});

export function registerPublicApiPaths(registry: OpenAPIRegistry): void {
  const common = ['unauthorized', 'rate_limited'] as const;
  registry.registerPath({
    method: 'get', path: '/v1/templates', operationId: 'listApiTemplates', tags: ['public-api'], summary: 'List song templates',
    security: readSecurity,
    responses: { 200: jsonResponse('The templates.', ApiTemplateList, rateLimitHeaders), ...errorResponses(...common, 'forbidden') },
  });
  registry.registerPath({
    method: 'get', path: '/v1/me', operationId: 'getApiAccount', tags: ['public-api'], summary: 'The calling account',
    security: readSecurity,
    responses: { 200: jsonResponse('The account behind the credential.', ApiAccount, rateLimitHeaders), ...errorResponses(...common, 'forbidden') },
  });
  registry.registerPath({
    method: 'get', path: '/v1/credits', operationId: 'getApiCredits', tags: ['public-api'], summary: 'Credit balance and recent ledger entries',
    security: readSecurity,
    responses: { 200: jsonResponse('Balance and the most recent ledger entries, newest first.', ApiCredits, rateLimitHeaders), ...errorResponses(...common, 'forbidden') },
  });
  registry.registerPath({
    method: 'get', path: '/v1/videos', operationId: 'listApiVideos', tags: ['public-api'], summary: 'List videos, newest first',
    description: 'Covers videos made through the API and through the web app alike.',
    security: readSecurity,
    request: { query: VideoListQuery },
    responses: { 200: jsonResponse('The videos.', ApiVideoList, rateLimitHeaders), ...errorResponses('invalid_request', ...common, 'forbidden') },
  });
  registry.registerPath({
    method: 'post', path: '/v1/videos', operationId: 'createApiVideo', tags: ['public-api'], summary: `Create a video (costs ${CREDITS_PER_VIDEO} credit)`,
    description:
      'Sings the template song (`template_id`) or the caller\'s audio from POST /v1/audio (`audio_id`; the video lasts as long as it): '
      + 'exactly one of the two (400 template_or_audio_required otherwise). Another account\'s audio_id answers 404 unknown_audio like any '
      + 'unknown id; audio older than 24 hours answers 410 audio_expired. '
      + 'Optional `aspect` picks the output shape: square (720×720, the default), 4:5 (720×900) or 9:16 (720×1280); a small photo gives a '
      + 'smaller video of the same shape. Send an Idempotency-Key header to retry safely: the same key and body return the first answer '
      + 'without a second charge.',
    security: writeSecurity,
    request: {
      headers: z.object({ 'Idempotency-Key': z.string().max(255).optional() }),
      body: { required: true, content: { 'application/json': { schema: CreateApiVideoRequest } } },
    },
    responses: {
      202: jsonResponse('Queued; poll poll_url until status is completed.', CreatedApiVideo, rateLimitHeaders),
      ...errorResponses(
        'invalid_request', 'unknown_template', 'template_or_audio_required', 'unknown_audio', 'audio_expired', 'audio_duration_out_of_range',
        'image_url_refused', 'unknown_image', 'face_not_found', 'unauthorized', 'insufficient_credits', 'forbidden',
        'idempotency_key_in_use', 'idempotency_key_reused', 'rate_limited', 'service_unavailable', 'webhook_url_refused', 'webhook_secret_required',
      ),
    },
  });
  registry.registerPath({
    method: 'post', path: '/v1/images', operationId: 'checkApiImage', tags: ['public-api'], summary: 'Check a photo before paying: find the pet\'s face',
    description:
      'Stores the photo for 24 hours and answers where the pet\'s face is (null when no pet face is found). Free. Send the photo as '
      + 'multipart/form-data (`image`) or as JSON `{"image_url"}` (vetted like image_url of POST /v1/videos). Then create with `image_id`, '
      + 'plus `face` to correct the points; a photo without a found face needs `face.mouth`. 503 face_detection_unavailable (with Retry-After) '
      + 'when no render node answers in time.',
    security: writeSecurity,
    request: {
      body: {
        required: true,
        content: {
          'application/json': { schema: CheckImageUrlRequest },
          'multipart/form-data': { schema: CheckImageForm, encoding: { image: { contentType: 'image/png, image/jpeg, image/webp' } } },
        },
      },
    },
    responses: {
      201: jsonResponse('The photo is stored; its face, if found.', ApiImage, rateLimitHeaders),
      ...errorResponses(
        'invalid_request', 'malformed_json', 'nesting_too_deep', 'image_url_refused', 'image_url_unreachable', 'image_url_too_large', 'image_url_unsupported_type',
        'unsupported_image_format', 'payload_too_large', 'unauthorized', 'forbidden', 'rate_limited', 'face_detection_unavailable',
      ),
    },
  });
  registry.registerPath({
    method: 'post', path: '/v1/audio', operationId: 'createApiAudio', tags: ['public-api'], summary: 'Store audio for a video: a file, speech or a short video\'s soundtrack',
    description:
      'Free (counts against the write rate limit). Send an audio file as multipart/form-data (`audio`: MP3, WAV, MP4/AAC or WebM, '
      + '2 to 30 seconds, up to 20 MB), or JSON: speech `{"text", "voice_id"}` (a voice of GET /v1/voices, at most 500 characters) or a '
      + 'short-video link `{"video_url"}` (a public TikTok video; its sound is kept up to 180 seconds, and a video sings its 30 s with the most singing unless audio_start_seconds says where). The same rules and errors as '
      + 'the web app\'s POST /create-with-audio, POST /tts and POST /social/extract-audio. Create with the answered id as `audio_id` of '
      + 'POST /v1/videos within 24 hours; the video lasts as long as the audio. speech_quota_exhausted (429), '
      + 'speech_unavailable and service_unavailable (503) are retryable.',
    security: writeSecurity,
    request: {
      body: {
        required: true,
        content: {
          'application/json': { schema: CreateApiAudioRequest },
          'multipart/form-data': { schema: CreateApiAudioForm, encoding: { audio: { contentType: AUDIO_CONTENT_TYPES } } },
        },
      },
    },
    responses: {
      201: jsonResponse('The audio is stored for 24 hours.', ApiAudio, rateLimitHeaders),
      ...errorResponses(
        'invalid_request', 'malformed_json', 'nesting_too_deep', 'unsupported_audio_format', 'audio_duration_out_of_range', 'payload_too_large', 'text_too_long', 'unknown_voice',
        'unsupported_video_url', 'video_unavailable', 'no_soundtrack', 'soundtrack_too_short', 'video_too_large', 'image_url_refused',
        'unauthorized', 'forbidden', 'rate_limited', 'speech_quota_exhausted', 'speech_unavailable', 'service_unavailable',
      ),
    },
  });
  registry.registerPath({
    method: 'get', path: '/v1/voices', operationId: 'listApiVoices', tags: ['public-api'], summary: 'Voices for speech (POST /v1/audio)',
    security: readSecurity,
    responses: { 200: jsonResponse('Every voice POST /v1/audio accepts, each with a hosted sample clip.', ApiVoiceList, rateLimitHeaders), ...errorResponses(...common, 'forbidden') },
  });
  registry.registerPath({
    method: 'get', path: '/v1/videos/{id}', operationId: 'getApiVideo', tags: ['public-api'], summary: 'Get a video (poll this, or wait on it)',
    description:
      `With \`Prefer: wait=N\` (RFC 7240, N seconds, at most ${MAX_WAIT_SECONDS}; larger values are capped) the answer waits until the `
      + 'video is completed or failed, or N seconds pass, whichever comes first, and then answers the video as it is then (still `processing` '
      + 'when the time ran out: ask again). Preference-Applied names the wait used. One request counts as one read against the rate limit.',
    security: readSecurity,
    request: {
      params: VideoIdPath,
      headers: z.object({ Prefer: z.string().optional().meta({ description: `wait=N: answer once the video is terminal, or after N seconds (1-${MAX_WAIT_SECONDS}).`, example: 'wait=30' }) }),
    },
    responses: {
      200: jsonResponse('The video.', ApiVideo, rateLimitHeaders.extend({
        'Preference-Applied': z.string().optional().meta({ description: `wait=N, the wait honoured (capped at ${MAX_WAIT_SECONDS}), when Prefer: wait was sent.` }),
      })),
      ...errorResponses(...common, 'forbidden', 'not_found'),
    },
  });
  registry.registerPath({
    method: 'get', path: '/v1/videos/{id}/events', operationId: 'streamApiVideoEvents', tags: ['public-api'], summary: 'Follow a video: Server-Sent Events',
    description:
      'A text/event-stream of the video\'s status and progress: an event `video.status` whose data is the ApiVideo, at once for the '
      + 'current state and then at every change, with increasing ids (pending 1; processing 2 while preparing, 3 while queued, 4 + progress while rendering; completed or failed 102); '
      + `the stream ends after the completed or failed event. Comment lines (\`: heartbeat\`) every ${HEARTBEAT_SECONDS} seconds keep proxies from closing it. `
      + 'A reconnect with Last-Event-ID gets the current state at once when it is newer, then only newer events; 204 when the video ended '
      + 'at or before that id (an EventSource stops reconnecting on 204). One stream counts as one read against the rate limit.',
    security: readSecurity,
    request: {
      params: VideoIdPath,
      headers: z.object({ 'Last-Event-ID': z.string().optional().meta({ description: 'The id of the last event received, to resume after it.' }) }),
    },
    responses: {
      200: {
        description: 'The event stream.',
        headers: rateLimitHeaders,
        content: {
          'text/event-stream': {
            schema: z.string().meta({
              description: 'Events `id: <n>`, `event: video.status`, `data: <ApiVideo as JSON>`, separated by blank lines; `: heartbeat` comments.',
              example: 'retry: 3000\n\nid: 42\nevent: video.status\ndata: {"id":"…","status":"processing","progress":40,…}\n\n',
            }),
          },
        },
      },
      204: { description: 'The video ended at or before Last-Event-ID: nothing newer will come.' },
      ...errorResponses(...common, 'forbidden', 'not_found'),
    },
  });
  registry.registerPath({
    method: 'post', path: '/v1/videos/{id}/cancel', operationId: 'cancelApiVideo', tags: ['public-api'], summary: 'Cancel a video (refunded)',
    description:
      'Stops the render: the video ends `failed` with error code `canceled`, and its credit is refunded (whatever the render had done: '
      + 'a canceled video never delivers an output). Canceling a video that failed (a canceled one too) answers it as it is, without a '
      + 'second refund; a completed video cannot be canceled (409 video_already_completed).',
    security: writeSecurity,
    request: { params: VideoIdPath },
    responses: {
      200: jsonResponse('The video, failed with error code canceled (or as it was, if it had failed already).', ApiVideo, rateLimitHeaders),
      ...errorResponses(...common, 'forbidden', 'not_found', 'video_already_completed'),
    },
  });
  registry.registerPath({
    method: 'delete', path: '/v1/videos/{id}', operationId: 'deleteApiVideo', tags: ['public-api'], summary: 'Delete a video (no refund)',
    security: writeSecurity,
    request: { params: VideoIdPath },
    responses: { 204: { description: 'Deleted, permanently; the credit is not refunded.' }, ...errorResponses(...common, 'forbidden', 'not_found') },
  });
}
