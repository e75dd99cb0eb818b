import { Router } from 'express';
import { z } from 'zod';
import type { AppContext } from '../../runtime/app-context.ts';
import { voiceRepresentation } from '../../presenters/api.presenter.ts';
import { whileConnected } from '../client-hang-up.ts';
import { rateLimit } from '../middleware/rate-limit.ts';
import { requireWebUser, webUserOf } from '../middleware/web-auth.ts';
import { errorResponses, jsonResponse, type OpenAPIRegistry } from '../openapi.ts';
import { SpeechRequest, SpeechResult, VoiceList } from '../schemas/speech.schemas.ts';
import { parseBody, parseParams } from '../validation.ts';
import { sendObject } from '../send-object.ts';
import { idTokenSecurity } from './web-app.routes.ts';

const sampleParams = z.object({ file: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}\.mp3$/) });

/** POST /tts, GET /tts/voices and the voices' public sample clips (GET /media/voices/{voice}.mp3). */
export function speechRoutes(context: AppContext): Router {
  const router = Router();
  const signedIn = requireWebUser(context.services.identity);
  const { speech } = context.services;

  router.post('/tts', signedIn, rateLimit(context.services.rateLimiter, 'media'), async (req, res) => {
    const { text, voice_id } = parseBody(SpeechRequest, req);
    const audio = await whileConnected(res, (signal) => speech.synthesize(webUserOf(res).id, { text, voiceId: voice_id }, signal));
    res.set('Cache-Control', 'no-store');
    res.json({ audio_url: audio.url, duration_seconds: audio.durationSeconds, voice_id } satisfies z.infer<typeof SpeechResult>);
  });

  router.get('/tts/voices', signedIn, (_req, res) => {
    res.set('Cache-Control', 'private, max-age=3600');
    res.json({ voices: speech.voices().map(voiceRepresentation) } satisfies z.infer<typeof VoiceList>);
  });

  router.get('/media/voices/:file', async (req, res) => {
    const { file } = parseParams(sampleParams, req);
    const object = await speech.voiceSample(file.slice(0, -'.mp3'.length));
    await sendObject(res, object, { 'Content-Type': 'audio/mpeg', 'Cache-Control': 'public, max-age=86400' });
  });

  return router;
}

export function registerSpeechPaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'post', path: '/tts', security: idTokenSecurity, tags: ['web-app'], operationId: 'synthesizeSpeech', summary: 'Speak text in a voice',
    description: 'Synthesizes the text and hosts it as an MP3 of 2 to 30 seconds that belongs to the caller; '
      + 'pass `audio_url` to POST /create-with-audio. A 429 carries Retry-After when the speech provider named a time.',
    request: { body: { required: true, content: { 'application/json': { schema: SpeechRequest } } } },
    responses: {
      200: jsonResponse('The hosted speech.', SpeechResult),
      ...errorResponses('invalid_request', 'malformed_json', 'nesting_too_deep', 'text_too_long', 'unknown_voice', 'unauthorized', 'speech_quota_exhausted', 'rate_limited', 'speech_unavailable'),
    },
  });
  registry.registerPath({
    method: 'get', path: '/tts/voices', security: idTokenSecurity, tags: ['web-app'], operationId: 'listVoices', summary: 'Voices for POST /tts',
    responses: { 200: jsonResponse('Every voice POST /tts accepts, each with a hosted sample clip.', VoiceList), ...errorResponses('unauthorized') },
  });
  registry.registerPath({
    method: 'get', path: '/media/voices/{file}', security: [], tags: ['web-app'], operationId: 'getVoiceSample', summary: "A voice's sample clip (MP3)",
    description: 'The `sample_url` of a voice in GET /tts/voices; made on the first request, then served from storage.',
    request: { params: sampleParams },
    responses: {
      200: { description: 'The MP3 file.', content: { 'audio/mpeg': { schema: z.string().meta({ format: 'binary' }) } } },
      ...errorResponses('invalid_request', 'not_found', 'speech_quota_exhausted', 'speech_unavailable'),
    },
  });
}
