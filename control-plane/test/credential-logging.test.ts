import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logging/logger.ts';
import { captureLines } from '../../test/support/log-capture.ts';
import { startTestService, type TestService } from '../../test/support/test-service.ts';

/** Every request below carries a secret somewhere; none may appear in any log line. */
describe('logs', () => {
  let service: TestService;
  const { lines, sink } = captureLines();

  beforeAll(async () => {
    service = await startTestService({ env: { LOG_LEVEL: 'trace' }, overrides: { logger: createLogger('trace', 'petsing', sink) } });
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
});
