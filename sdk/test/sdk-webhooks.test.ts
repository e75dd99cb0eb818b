import { petPhoto } from '../../test/support/pet-photo.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyAddress } from '../../control-plane/src/media/address-policy.ts';
import { systemResolver } from '../../control-plane/src/media/host-resolvers.ts';
import { createUserUrlFetcher } from '../../control-plane/src/media/safe-fetch.ts';
import { createTestAccount } from '../../test/support/accounts.ts';
import { waitFor } from '../../test/support/processes.ts';
import { startTestService, type TestService } from '../../test/support/test-service.ts';
import { startWebhookReceiver } from '../../test/support/webhook-receiver.ts';
import { Petsing, verifyWebhook, WebhookVerificationError } from '../src/index.ts';
import { seedTemplates } from '../../test/support/templates.ts';

// A public-looking name the fixture's resolver answers with the local receiver (which also serves the photo).
const RECEIVER_HOST = 'hooks.petsing-fixtures.com';

type Event = { type: string; data: { id?: string; status?: string } };

/** The SDK's webhook calls and verifyWebhook against deliveries the real service signs and sends (real workers, Temporal, Postgres). */
describe('@petsing/sdk with webhooks', () => {
  let service: TestService;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  const hook = (path: string) => `http://${RECEIVER_HOST}:${receiver.port}${path}`;

  beforeAll(async () => {
    receiver = await startWebhookReceiver(await petPhoto(256));
    const fetcher = createUserUrlFetcher({
      addressPolicy: { checkAddress: (address) => (address === '127.0.0.1' ? null : classifyAddress(address)), extraPorts: [receiver.port], allowHttp: true },
      resolver: async (host, signal) => (host === RECEIVER_HOST ? [{ address: '127.0.0.1', family: 4 }] : systemResolver(host, signal)),
    });
    service = await startTestService({
      temporal: true,
      controlWorker: true,
      renderWorker: true,
      userUrlFetcher: fetcher,
      env: { ALLOW_HTTP_IMAGE_URLS: 'true', RENDER_OUTPUT_SIZE: '192' },
    });
    await seedTemplates(service.context);
  }, 180_000);
  afterAll(async () => {
    await service?.stop();
    await receiver?.close();
  });

  it('registers an endpoint and verifies what it receives: a test event, video.completed, both signatures after a rotation', async () => {
    const account = await createTestAccount(service.context, 'sdk-hooks@example.com', 1);
    const petsing = new Petsing({ apiKey: account.readWrite, baseUrl: service.baseUrl });
    const endpoint = await petsing.createWebhook({ url: hook('/hooks/sdk'), events: ['video.completed'] });
    expect(endpoint.secret).toMatch(/^whsec_/);
    expect((await petsing.listWebhooks()).map((listed) => listed.id)).toEqual([endpoint.id]);
    const received = () => receiver.receptions.filter((reception) => reception.path === '/hooks/sdk');

    await petsing.testWebhook(endpoint.id);
    const test = received().at(-1)!;
    expect(verifyWebhook<Event>(test.body, test.headers, endpoint.secret)).toMatchObject({ type: 'webhook.test' });
    const { secret: otherSecret } = await petsing.createWebhook({ url: hook('/hooks/other') });
    expect(() => verifyWebhook(test.body, test.headers, otherSecret)).toThrow(WebhookVerificationError);

    const created = await petsing.createVideo({ template_id: '1', image_url: hook('/pet.png') });
    await petsing.waitForVideo(created.id, { timeoutMs: 240_000 });
    await waitFor('video.completed at the endpoint', async () => received().some((reception) => JSON.parse(reception.body).type === 'video.completed'), 60_000);
    const completed = received().find((reception) => JSON.parse(reception.body).type === 'video.completed')!;
    expect(verifyWebhook<Event>(completed.body, completed.headers, endpoint.secret)).toMatchObject({ type: 'video.completed', data: { id: created.id, status: 'completed' } });

    const rotated = await petsing.rotateWebhookSecret(endpoint.id);
    expect(rotated.secret).not.toBe(endpoint.secret);
    await petsing.testWebhook(endpoint.id);
    const afterRotation = received().at(-1)!;
    expect(afterRotation.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    for (const secret of [rotated.secret, endpoint.secret]) expect(verifyWebhook<Event>(afterRotation.body, afterRotation.headers, secret)).toMatchObject({ type: 'webhook.test' });

    const deliveries = await petsing.listWebhookDeliveries(endpoint.id);
    expect(deliveries.length).toBeGreaterThanOrEqual(3);
    await petsing.deleteWebhook(endpoint.id);
    await expect(petsing.getWebhook(endpoint.id)).rejects.toMatchObject({ status: 404 });
  }, 300_000);
});
