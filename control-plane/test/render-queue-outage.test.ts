import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TemplateRepository } from '../src/repositories/template.repository.ts';
import { createTestAccount } from '../../test/support/accounts.ts';
import type { Json } from '../../test/support/http.ts';
import { startImageHost } from '../../test/support/image-host.ts';
import { PET_PHOTO_MOUTH, petPhoto } from '../../test/support/pet-photo.ts';
import { freePort } from '../../test/support/processes.ts';
import { startTestService, type TestService } from '../../test/support/test-service.ts';

/**
 * A create while the render queue (Temporal) is away: refused before anything reaches the ledger when Temporal does
 * not answer; when it answers but refuses the start after the charge, the video fails refunded and the message says
 * exactly that, as the ledger shows it.
 */
describe('a create while the render queue cannot be reached', () => {
  let imageHost: Awaited<ReturnType<typeof startImageHost>>;

  beforeAll(async () => {
    imageHost = await startImageHost({ '/pet.png': { body: await petPhoto(512), contentType: 'image/png' } });
  });
  afterAll(async () => {
    await imageHost.close();
  });

  /** A template's row: the create is refused or fails at the queue, before anything reads the song's audio. */
  const fixtureTemplate = (service: TestService) =>
    new TemplateRepository(service.database.db).upsert({ id: 1, name: 'Fixture', description: '', audio_key: 'templates/1/audio.mp3', audio_duration_ms: 5000, preview_image_key: null });
  /** A template video of a photo URL with a mouth hint: no photo check, so nothing but the queue stands in the way. */
  const create = async (service: TestService, key: string) => {
    const response = await fetch(`${service.baseUrl}/v1/videos`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ template_id: '1', image_url: imageHost.url('/pet.png'), face: { mouth: PET_PHOTO_MOUTH } }),
    });
    return { status: response.status, retryAfter: response.headers.get('retry-after'), body: (await response.json()) as Json };
  };
  const ledger = (service: TestService, userId: string) =>
    service.database.db.selectFrom('credit_ledger').select(['delta', 'reason', 'video_id']).where('user_id', '=', userId).orderBy('id').execute();
  const videos = (service: TestService, userId: string) =>
    service.database.db.selectFrom('videos').select(['id', 'status', 'failure_code']).where('user_id', '=', userId).execute();

  it('is refused with 503 before any charge, within seconds, when Temporal does not answer', async () => {
    const closed = await freePort();
    const service = await startTestService({ userUrlFetcher: imageHost.fetcher, env: { ALLOW_HTTP_IMAGE_URLS: 'true', TEMPORAL_ADDRESS: `127.0.0.1:${closed}` } });
    try {
      await fixtureTemplate(service);
      const account = await createTestAccount(service.context, 'outage@example.com', 3);
      const startedAt = Date.now();
      const { status, retryAfter, body } = await create(service, account.readWrite);
      const tookMs = Date.now() - startedAt;
      expect(status, JSON.stringify(body)).toBe(503);
      expect(body.error).toMatchObject({ code: 'service_unavailable', retryable: true });
      expect(body.error.message).toContain('nothing was charged');
      expect(body.error.hint).toMatch(/retry/i);
      expect(Number(retryAfter)).toBeGreaterThan(0);
      expect(tookMs).toBeLessThan(10_000);
      // The ledger shows the grant and nothing else; no video was made.
      expect(await ledger(service, account.id)).toEqual([{ delta: 3, reason: 'grant', video_id: null }]);
      expect(await videos(service, account.id)).toEqual([]);
      expect(await service.context.services.credits.balance(account.id)).toBe(3);
    } finally {
      await service.stop();
    }
  });

  it('says that the credit was charged and refunded when the queue refuses the render after the charge, as the ledger shows', async () => {
    // Temporal answers, but the namespace the workflows would start in does not exist: the start fails after the charge.
    const service = await startTestService({ temporal: true, userUrlFetcher: imageHost.fetcher, env: { ALLOW_HTTP_IMAGE_URLS: 'true', TEMPORAL_NAMESPACE: 'petsing-no-such-namespace' } });
    try {
      await fixtureTemplate(service);
      const account = await createTestAccount(service.context, 'refused-start@example.com', 3);
      const { status, body } = await create(service, account.readWrite);
      expect(status, JSON.stringify(body)).toBe(503);
      const [video] = await videos(service, account.id);
      expect(video).toMatchObject({ status: 'failed', failure_code: 'queue_unavailable' });
      expect(body.error.code).toBe('service_unavailable');
      expect(body.error.message).toContain(video!.id);
      expect(body.error.message).toContain('1 credit was charged and refunded');
      expect(body.error.message).not.toContain('nothing was charged');
      expect(await ledger(service, account.id)).toEqual([
        { delta: 3, reason: 'grant', video_id: null },
        { delta: -1, reason: expect.any(String), video_id: video!.id },
        { delta: 1, reason: 'refund', video_id: video!.id },
      ]);
      expect(await service.context.services.credits.balance(account.id)).toBe(3);
    } finally {
      await service.stop();
    }
  });
});
