import { Router } from 'express';
import { z } from 'zod';
import type { AppContext } from '../../runtime/app-context.ts';
import { errorResponses, type OpenAPIRegistry } from '../openapi.ts';
import { parseParams } from '../validation.ts';
import { sendObject } from '../send-object.ts';

// No regex flags: the pattern is published in /openapi.json, where clients compile it as plain ECMA-262.
const params = z.object({ file: z.string().regex(/^[0-9a-fA-F-]{36}\.mp3$/) });

/** GET /media/audio/{id}.mp3: hosted speech and soundtracks (see HostedAudioService). */
export function hostedAudioRoutes(context: AppContext): Router {
  const router = Router();
  router.get('/media/audio/:file', async (req, res) => {
    const { file } = parseParams(params, req);
    const object = await context.services.hostedAudio.open(file.slice(0, -'.mp3'.length));
    await sendObject(res, object, { 'Content-Type': 'audio/mpeg', 'Cache-Control': 'private, max-age=86400' });
  });
  return router;
}

export function registerHostedAudioPaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'get', path: '/media/audio/{file}', security: [], tags: ['web-app'], operationId: 'getHostedAudio',
    summary: 'Hosted speech or soundtrack (MP3)',
    description: 'The `audio_url` answered by POST /tts and POST /social/extract-audio. The random id is the only credential; '
      + 'pass the URL as `audio_url` to POST /create-with-audio.',
    request: { params },
    responses: { 200: { description: 'The MP3 file.', content: { 'audio/mpeg': { schema: z.string().meta({ format: 'binary' }) } } }, ...errorResponses('invalid_request', 'not_found') },
  });
}
