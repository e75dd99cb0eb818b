import { renderSamplePet } from '@petsing/render-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from './support/processes.ts';
import { startTestService, type TestService } from './support/test-service.ts';

describe('render orchestration', () => {
  let service: TestService;
  let userId: string;
  let image: Buffer;

  const createApiVideo = async () => {
    const created = await service.context.services.videos.create({
      userId,
      origin: 'api',
      charge: { kind: 'api_credit' },
      watermark: false,
      templateId: 1,
      image: { upload: { body: image, contentType: 'image/png', extension: 'png' } },
    });
    if (!created) throw new Error('not enough credits');
    return created.video;
  };
  const videoOf = (id: string) => service.context.services.videos.get(userId, id);
  const waitForStatus = async (id: string, statuses: string[], timeoutMs = 120_000) => {
    await waitFor(`video ${id} to reach ${statuses.join('/')}`, async () => statuses.includes((await videoOf(id))?.status ?? ''), timeoutMs);
    return (await videoOf(id))!;
  };

  beforeAll(async () => {
    service = await startTestService({ temporal: true, controlWorker: true, renderWorker: true });
    await service.context.services.templates.seed(service.context.logger);
    userId = (await service.context.services.users.create({ email: 'render@example.com' })).id;
    await service.context.services.credits.grant(userId, 50);
    image = await renderSamplePet(512);
  }, 180_000);
  afterAll(() => service.stop());

  it('takes an API video from processing to completed with a stored MP4', async () => {
    const video = await createApiVideo();
    expect(video.status).toBe('processing');
    const done = await waitForStatus(video.id, ['completed', 'failed']);
    expect(done.failure_reason).toBeNull();
    expect(done.status).toBe('completed');
    expect(done.progress).toBe(100);
    const output = await service.context.objectStore.get(done.output_key!);
    const chunks: Buffer[] = [];
    for await (const chunk of output.body) chunks.push(chunk as Buffer);
    const mp4 = Buffer.concat(chunks);
    expect(output.contentType).toBe('video/mp4');
    expect(mp4.subarray(4, 8).toString('ascii')).toBe('ftyp');
    expect(await service.context.services.credits.balance(userId)).toBe(49);
  }, 180_000);
});
