import { Router } from 'express';
import type { AppContext } from '../../runtime/app-context.ts';
import { whileConnected } from '../client-hang-up.ts';
import { rateLimit } from '../middleware/rate-limit.ts';
import { requireWebUser, webUserOf } from '../middleware/web-auth.ts';
import { errorResponses, jsonResponse, type OpenAPIRegistry } from '../openapi.ts';
import { ExtractAudioRequest, ExtractedAudio, type ExtractedAudioBody } from '../schemas/social.schemas.ts';
import { parseBody } from '../validation.ts';
import { idTokenSecurity } from './web-app.routes.ts';

/** POST /social/extract-audio: the soundtrack of a public TikTok video, stored as hosted MP3. */
export function socialRoutes(context: AppContext): Router {
  const router = Router();
  const signedIn = requireWebUser(context.services.identity);

  router.post('/social/extract-audio', signedIn, rateLimit(context.services.rateLimiter, 'media'), async (req, res) => {
    const { url } = parseBody(ExtractAudioRequest, req);
    const soundtrack = await whileConnected(res, (signal) => context.services.soundtracks.extract(webUserOf(res).id, url, signal));
    res.set('Cache-Control', 'no-store');
    res.json({
      audio_url: soundtrack.audio.url,
      duration_seconds: soundtrack.audio.durationSeconds,
      source_url: soundtrack.sourceUrl,
      title: soundtrack.title,
    } satisfies ExtractedAudioBody);
  });

  return router;
}

export function registerSocialPaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'post', path: '/social/extract-audio', security: idTokenSecurity, tags: ['web-app'], operationId: 'extractSocialAudio',
    summary: "Extract a TikTok video's soundtrack",
    description: 'Only links on TikTok\'s own hosts are accepted (checked before anything is fetched). The sound is kept up to '
      + '180 seconds (a video sings its 30 s with the most singing, or from the create\'s audio_start_seconds), stored as MP3 and answered as a hosted link usable for POST /create-with-audio. Takes a few seconds.',
    request: { body: { required: true, content: { 'application/json': { schema: ExtractAudioRequest } } } },
    responses: {
      200: jsonResponse('The stored soundtrack.', ExtractedAudio),
      ...errorResponses('invalid_request', 'unsupported_video_url', 'video_unavailable', 'no_soundtrack', 'soundtrack_too_short', 'video_too_large', 'image_url_refused', 'unauthorized', 'rate_limited', 'service_unavailable'),
    },
  });
}
