import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDevIdentityKeys, mintDevIdToken } from '../src/services/dev-identity.ts';
import { deliverWebhook, startFakeStripe, stripeEvent, type FakeStripe } from '../../test/support/fake-stripe.ts';
import type { Json } from '../../test/support/http.ts';
import { expectDocumentedResponses, type RecordedResponse } from '../../test/support/openapi.ts';
import { startTestService, type TestService } from '../../test/support/test-service.ts';
import { petPhoto } from '../../test/support/pet-photo.ts';
import { seedTemplates } from '../../test/support/templates.ts';

const WEBHOOK_SECRET = 'whsec_contract';

/**
 * One pass over every row of the spec's web-app endpoint table (success and error answers), each response
 * validated against the service's own /openapi.json — what an OpenAPI-generated client relies on.
 */
describe('web-app endpoints against the published contract', () => {
  let stripe: FakeStripe;
  let service: TestService;
  let token: string;
  let photo: Buffer;
  const recorded: RecordedResponse[] = [];

  const call = async (operation: string, method: string, path: string, options: { token?: string; body?: unknown; form?: FormData; headers?: Record<string, string> } = {}) => {
    const headers: Record<string, string> = { ...(options.token ? { Authorization: `Bearer ${options.token}` } : {}), ...options.headers };
    let body: string | FormData | undefined;
    if (options.form) body = options.form;
    else if (options.body !== undefined) {
      headers['Content-Type'] ??= 'application/json';
      body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    }
    const response = await fetch(`${service.baseUrl}${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
    const text = await response.text();
    const isJson = response.headers.get('content-type')?.includes('application/json');
    const parsed = isJson && text ? (JSON.parse(text) as Json) : undefined;
    recorded.push({ operation, status: response.status, body: parsed });
    return { status: response.status, body: parsed, headers: response.headers };
  };
  const photoForm = (fields: Record<string, string>) => {
    const form = new FormData();
    form.append('image', new Blob([photo], { type: 'image/png' }), 'pet.png');
    // Pointing at the mouth skips the photo check, which needs a render node (none runs here).
    form.append('face', JSON.stringify({ mouth: { x: 0.5, y: 0.6 } }));
    for (const [name, value] of Object.entries(fields)) form.append(name, value);
    return form;
  };

  beforeAll(async () => {
    stripe = await startFakeStripe();
    service = await startTestService({
      temporal: true,
      env: { STRIPE_SECRET_KEY: 'sk_test_contract', STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET, STRIPE_API_BASE: stripe.apiBase },
    });
    await seedTemplates(service.context);
    token = await mintDevIdToken(await loadDevIdentityKeys(service.env.DATA_DIR!), { baseUrl: service.baseUrl, email: 'contract@example.com' });
    photo = await petPhoto(256);
  }, 120_000);
  afterAll(async () => {
    await service?.stop();
    await stripe?.close();
  });

  it('answers every web-app row as documented', async () => {
    expect((await call('getServiceIndex', 'GET', '/')).status).toBe(200);
    expect((await call('listTemplates', 'GET', '/templates')).status).toBe(200);

    // Account and videos.
    expect((await call('getWebAccount', 'GET', '/user/me')).status).toBe(401);
    const me = await call('getWebAccount', 'GET', '/user/me', { token });
    expect(me.status).toBe(200);
    expect((await call('listWebVideos', 'GET', '/user/videos?pageSize=500', { token })).status).toBe(400);

    // Creates: free credits, then the 400 once they are spent.
    const fromTemplate = await call('createWebVideoWithTemplate', 'POST', '/create-with-template', { token, form: photoForm({ template_id: '1' }) });
    expect(fromTemplate.status).toBe(200);
    expect(fromTemplate.body).toMatchObject({ status: 'pending', has_watermark: true, free_credits_remaining: 1 });
    expect((await call('createWebVideoWithTemplate', 'POST', '/create-with-template', { token, form: photoForm({ template_id: '424242' }) })).status).toBe(400);

    const speech = await call('synthesizeSpeech', 'POST', '/tts', { token, body: { text: 'Happy birthday to you, my furry friend!', voice_id: 'en-us-female' } });
    expect(speech.status).toBe(200);
    expect((await call('synthesizeSpeech', 'POST', '/tts', { token, body: { text: 'x'.repeat(501), voice_id: 'en-us-female' } })).status).toBe(400);
    expect((await call('listVoices', 'GET', '/tts/voices', { token })).status).toBe(200);

    const fromAudio = await call('createWebVideoWithAudio', 'POST', '/create-with-audio', { token, form: photoForm({ audio_url: speech.body.audio_url }) });
    expect(fromAudio.status).toBe(200);
    expect(fromAudio.body.free_credits_remaining).toBe(0);
    const spent = await call('createWebVideoWithTemplate', 'POST', '/create-with-template', { token, form: photoForm({ template_id: '1' }) });
    expect(spent.status).toBe(400);
    expect(spent.body.error.code).toBe('no_free_credits');

    const page = await call('listWebVideos', 'GET', '/user/videos?page=1&pageSize=1', { token });
    expect(page.body).toMatchObject({ total: 2, total_pages: 2, has_more: true });
    expect(page.body.videos[0].id).toBe(fromAudio.body.id);

    expect((await call('extractSocialAudio', 'POST', '/social/extract-audio', { token, body: { url: 'https://example.com/video/1' } })).status).toBe(400);

    // Payments.
    expect((await call('getPricing', 'GET', '/subscription/pricing', { headers: { 'CF-IPCountry': 'KR' } })).body.currency).toBe('KRW');
    expect((await call('createBillingPortalSession', 'POST', '/subscription/create-portal-session', { token })).status).toBe(404);
    expect((await call('createSubscriptionCheckout', 'POST', '/subscription/create-checkout-session', { token, body: { plan_type: 'monthly' } })).status).toBe(400);
    const checkout = await call('createSubscriptionCheckout', 'POST', '/subscription/create-checkout-session', { token, body: { plan_type: 'annual' } });
    expect(checkout.status).toBe(200);
    expect(checkout.body.url).toMatch(/^https:\/\//);
    expect((await call('createWatermarkRemovalCheckout', 'POST', '/subscription/create-one-time-checkout', { token, body: {} })).status).toBe(400);
    expect((await call('createWatermarkRemovalCheckout', 'POST', '/subscription/create-one-time-checkout', { token, body: { video_id: crypto.randomUUID() } })).status).toBe(404);
    expect((await call('createCreditPackCheckout', 'POST', '/credits/create-checkout-session', { token, body: { pack: 'growth' } })).status).toBe(200);
    expect((await call('listCreditPacks', 'GET', '/credits/packs', { token })).status).toBe(200);
    expect((await call('createBillingPortalSession', 'POST', '/subscription/create-portal-session', { token })).status).toBe(200);
    const status = await call('getSubscriptionStatus', 'GET', '/subscription/status', { token });
    expect(status.status).toBe(200);
    const webhook = await deliverWebhook(service.baseUrl, stripeEvent('invoice.payment_failed', { id: 'in_1', object: 'invoice', subscription: 'sub_unknown', customer: 'cus_unknown' }), WEBHOOK_SECRET);
    recorded.push({ operation: 'receiveStripeEvent', status: webhook.status, body: await webhook.json() });
    expect(webhook.status).toBe(200);
    const unsigned = await call('receiveStripeEvent', 'POST', '/webhooks/stripe', { body: '{}', headers: { 'Stripe-Signature': 't=1,v1=00' } });
    expect(unsigned.status).toBe(400);

    // Delete, then the same id again.
    expect((await call('deleteWebVideo', 'DELETE', '/delete-video', { token, body: { video_id: fromTemplate.body.id } })).status).toBe(200);
    expect((await call('deleteWebVideo', 'DELETE', '/delete-video', { token, body: { video_id: fromTemplate.body.id } })).status).toBe(404);

    // Unsubscribe with the token of the welcome email.
    expect((await call('unsubscribeEmail', 'GET', '/email/unsubscribe')).status).toBe(400);
    const welcome = await service.database.db.selectFrom('email_outbox').selectAll().where('kind', '=', 'welcome').executeTakeFirstOrThrow();
    const link = /<([^>]+)>/.exec(welcome.headers['List-Unsubscribe']!)![1]!;
    const unsubscribeToken = new URL(link).searchParams.get('token')!;
    expect((await call('unsubscribeEmail', 'GET', `/email/unsubscribe?token=${unsubscribeToken}`)).status).toBe(200);
    const oneClick = await call('unsubscribeEmailOneClick', 'POST', `/email/unsubscribe?token=${unsubscribeToken}`, {
      body: 'List-Unsubscribe=One-Click',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    expect(oneClick.status).toBe(200);
    expect((await call('unsubscribeEmailOneClick', 'POST', '/email/unsubscribe', { body: { token: 'nope' } })).status).toBe(400);

    const checked = await expectDocumentedResponses(service.baseUrl, recorded);
    expect(checked.size).toBeGreaterThanOrEqual(30);
  });
});
