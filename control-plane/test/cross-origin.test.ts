import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDevIdentityKeys, mintDevIdToken } from '../src/services/dev-identity.ts';
import { startTestService, type TestService } from '../../test/support/test-service.ts';

const preflight = (url: string, origin: string, method = 'POST') =>
  fetch(url, { method: 'OPTIONS', headers: { Origin: origin, 'Access-Control-Request-Method': method, 'Access-Control-Request-Headers': 'authorization, content-type' } });

describe('cross-origin browser access (default: any origin)', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(() => service?.stop());

  it('lets a web app on another origin call web-app endpoints with an ID token and read the rate-limit headers', async () => {
    const answer = await preflight(`${service.baseUrl}/tts`, 'https://app.petsing.example');
    expect(answer.status).toBe(204);
    expect(answer.headers.get('access-control-allow-origin')).toBe('*');
    expect(answer.headers.get('access-control-allow-methods')).toContain('DELETE');
    expect(answer.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('authorization');

    const token = await mintDevIdToken(await loadDevIdentityKeys(service.env.DATA_DIR!), { baseUrl: service.baseUrl, email: 'browser@example.com' });
    const me = await fetch(`${service.baseUrl}/user/me`, { headers: { Origin: 'https://app.petsing.example', Authorization: `Bearer ${token}` } });
    expect(me.status).toBe(200);
    expect(me.headers.get('access-control-allow-origin')).toBe('*');
    const errors = await fetch(`${service.baseUrl}/v1/me`, { headers: { Origin: 'https://app.petsing.example' } });
    expect(errors.status).toBe(401);
    expect(errors.headers.get('access-control-allow-origin')).toBe('*');
    expect(errors.headers.get('access-control-expose-headers')).toContain('RateLimit');
  });

  it('keeps /mcp to its own origins', async () => {
    const refused = await preflight(`${service.baseUrl}/mcp`, 'https://evil.example');
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
    const own = await preflight(`${service.baseUrl}/mcp`, new URL(service.baseUrl).origin);
    expect(own.status).toBe(204);
    expect(own.headers.get('access-control-allow-origin')).toBe(new URL(service.baseUrl).origin);
    const post = await fetch(`${service.baseUrl}/mcp`, { method: 'POST', headers: { Origin: 'https://evil.example', 'Content-Type': 'application/json' }, body: '{}' });
    expect(post.status).toBe(403);
  });
});

describe('cross-origin browser access narrowed by CORS_ALLOWED_ORIGINS', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({ env: { SITE_URL: 'https://petsing.example', CORS_ALLOWED_ORIGINS: 'https://partner.example' } });
  });
  afterAll(() => service?.stop());

  it('answers listed origins (and SITE_URL) only, while OAuth clients stay open to every origin', async () => {
    for (const origin of ['https://petsing.example', 'https://partner.example']) {
      const answer = await preflight(`${service.baseUrl}/create-with-template`, origin);
      expect(answer.headers.get('access-control-allow-origin'), origin).toBe(origin);
      expect(answer.headers.get('vary')).toContain('Origin');
    }
    expect((await preflight(`${service.baseUrl}/create-with-template`, 'https://other.example')).headers.get('access-control-allow-origin')).toBeNull();
    const oauth = await preflight(`${service.baseUrl}/oauth/register`, 'https://other.example');
    expect(oauth.headers.get('access-control-allow-origin')).toBe('*');
    const metadata = await fetch(`${service.baseUrl}/.well-known/oauth-protected-resource/v1`, { headers: { Origin: 'https://other.example' } });
    expect(metadata.headers.get('access-control-allow-origin')).toBe('*');
  });
});
