import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDevIdentityKeys, mintDevIdToken } from '../src/services/dev-identity.ts';
import { freeCreditMonth } from '../src/services/user.service.ts';
import { deliverWebhook, startFakeStripe, stripeEvent, type FakeStripe } from '../../test/support/fake-stripe.ts';
import { json } from '../../test/support/http.ts';
import { waitFor } from '../../test/support/processes.ts';
import { startTestService, type TestService } from '../../test/support/test-service.ts';
import { toneWav } from '../../test/support/audio.ts';
import { petPhoto } from '../../test/support/pet-photo.ts';

const WEBHOOK_SECRET = 'whsec_test_petsing_rerender';

describe('watermark removal end to end (real workers render the paid re-render)', () => {
  let stripe: FakeStripe;
  let service: TestService;

  beforeAll(async () => {
    stripe = await startFakeStripe();
    service = await startTestService({
      temporal: true,
      controlWorker: true,
      renderWorker: true,
      env: { RENDER_OUTPUT_SIZE: '192', STRIPE_SECRET_KEY: 'sk_test_petsing_rerender', STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET, STRIPE_API_BASE: stripe.apiBase },
    });
  }, 180_000);
  afterAll(async () => {
    await service?.stop();
    await stripe?.close();
  });

  it('a paid removal re-renders the video without its watermark, replacing the watermarked output', async () => {
    const { context } = service;
    const token = await mintDevIdToken(await loadDevIdentityKeys(service.env.DATA_DIR!), { baseUrl: service.baseUrl, email: 'e2e-buyer@example.com' });
    const auth = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
    const { id: userId } = await json(fetch(`${service.baseUrl}/user/me`, { headers: auth }));
    const created = await context.services.videos.create({
      userId,
      origin: 'web',
      charge: { kind: 'free_credit', month: freeCreditMonth(new Date()) },
      watermark: true,
      image: { upload: { body: await petPhoto(256), contentType: 'image/png', extension: 'png' } },
      audio: { upload: { body: toneWav(3), contentType: 'audio/wav', extension: 'wav' } },
    });
    const videoId = created!.video.id;
    const row = () => service.database.db.selectFrom('videos').selectAll().where('id', '=', videoId).executeTakeFirstOrThrow();
    await waitFor('the watermarked render', async () => ['completed', 'failed'].includes((await row()).status), 150_000);
    const watermarked = await row();
    expect(watermarked).toMatchObject({ status: 'completed', has_watermark: true });

    const checkout = await json(fetch(`${service.baseUrl}/subscription/create-one-time-checkout`, { method: 'POST', headers: auth, body: JSON.stringify({ video_id: videoId }) }));
    expect(checkout.url).toMatch(/^https:\/\/checkout\.stripe\.test\//);
    const delivered = await deliverWebhook(service.baseUrl, stripeEvent('checkout.session.completed', stripe.completeSession(checkout.session_id)), WEBHOOK_SECRET);
    expect(delivered.status).toBe(200);

    await waitFor('the re-render without watermark', async () => (await row()).has_watermark === false, 150_000);
    const clean = await row();
    expect(clean).toMatchObject({ status: 'completed', has_watermark: false, failure_code: null });
    expect(clean.output_key).not.toBe(watermarked.output_key);
    expect(await context.objectStore.exists(clean.output_key!)).toBe(true);
    expect(await context.objectStore.exists(watermarked.output_key!)).toBe(false);
    const page = await json(fetch(`${service.baseUrl}/user/videos`, { headers: auth }));
    expect(page.videos.find((video: { id: string }) => video.id === videoId)).toMatchObject({ status: 'completed', has_watermark: false });

    // Nothing is left to buy for this video.
    const again = await fetch(`${service.baseUrl}/subscription/create-one-time-checkout`, { method: 'POST', headers: auth, body: JSON.stringify({ video_id: videoId }) });
    expect(again.status).toBe(400);
    expect((await json(again)).error.code).toBe('video_not_watermarked');
  }, 320_000);
});
