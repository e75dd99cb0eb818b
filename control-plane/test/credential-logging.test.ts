import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logging/logger.ts';
import { captureLines } from '../../test/support/log-capture.ts';
import { startTestService, type TestService } from '../../test/support/test-service.ts';

/** Every request below carries a secret somewhere; none may appear in any log line. */
describe('logs', () => {
  let service: TestService;
  const { lines, sink } = captureLines();

  beforeAll(async () => {
    service = await startTestService({ env: { LOG_LEVEL: 'trace' }, logger: createLogger('trace', 'petsing', sink) });
  });
  afterAll(() => service.stop());

  it('never contain API keys, bearer tokens or secrets from query strings', async () => {
    const user = await service.context.services.users.create({ email: 'secret@example.com' });
    const { key } = await service.context.services.apiKeys.create({ userId: user.id, scopes: ['videos:read'] });
    const headers = { Authorization: `Bearer ${key}`, Cookie: 'session=cookie-secret-value' };
    await fetch(`${service.baseUrl}/v1/me`, { headers });
    await fetch(`${service.baseUrl}/v1/me`, { headers: { Authorization: 'Bearer psk_live_wrong-key-value' } });
    await fetch(`${service.baseUrl}/email/unsubscribe?token=unsubscribe-secret-value`);
    await fetch(`${service.baseUrl}/oauth/authorize?code=code-secret-value&state=state-secret-value`);
    await fetch(`${service.baseUrl}/files/videos/x/video.mp4?expires=1&signature=signature-secret-value`);

    const log = lines.join('');
    expect(log).toContain('/v1/me');
    for (const secret of [key, 'psk_live_wrong-key-value', 'cookie-secret-value', 'unsubscribe-secret-value', 'code-secret-value', 'state-secret-value', 'signature-secret-value']) {
      expect(log).not.toContain(secret);
    }
  });

  it('never contain the id of a hosted-audio link, the link\'s only access control', async () => {
    const user = await service.context.services.users.create({ email: 'hosted-audio@example.com' });
    const mp3 = join(service.env.DATA_DIR!, 'speech.mp3');
    await writeFile(mp3, Buffer.from('ID3 not really an mp3'));
    const hosted = await service.context.services.hostedAudio.store(user.id, 'tts', mp3, 2);
    const path = new URL(hosted.url).pathname;
    const served = await fetch(`${service.baseUrl}${path}`);
    expect(served.status).toBe(200);
    // The router matches paths case-insensitively; a query string changes nothing.
    expect((await fetch(`${service.baseUrl}/MEDIA/Audio/${hosted.id}.mp3?download=1`)).status).toBe(200);
    // One that does not exist is as secret to whoever may yet be handed it.
    const unknown = '0b6c2c5e-1111-4222-8333-944445555666';
    expect((await fetch(`${service.baseUrl}/media/audio/${unknown}.mp3`)).status).toBe(404);

    const log = lines.join('');
    expect(log).toContain('/media/audio/redacted');
    for (const secret of [hosted.id, unknown]) expect(log.toLowerCase()).not.toContain(secret);
  });

  it('hold one line per request, with its id (X-Request-Id), method, path and status', async () => {
    const answered = await fetch(`${service.baseUrl}/v1/templates`, { headers: { 'X-Request-Id': 'trace-log-line-1' } });
    expect(answered.status).toBe(401);
    const entries = () => lines.map((line) => JSON.parse(line) as { msg: string; level: number; req?: { id: string; method: string; url: string }; res?: { statusCode: number }; responseTime?: number });
    const first = entries().filter((entry) => entry.req?.id === 'trace-log-line-1');
    expect(first).toHaveLength(1);
    expect(first[0]).toMatchObject({ msg: 'request completed', level: 40, req: { method: 'GET', url: '/v1/templates' }, res: { statusCode: 401 } });
    expect(first[0]!.responseTime).toBeGreaterThanOrEqual(0);
  });
});
