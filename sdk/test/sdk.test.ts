import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeMedia } from '../../control-plane/src/media/ffmpeg.ts';
import { createTestAccount } from '../../test/support/accounts.ts';
import { startRenderingService, type startImageHost } from '../../test/support/image-host.ts';
import { serviceProcessEnv, waitFor } from '../../test/support/processes.ts';
import { startTestService, type TestService } from '../../test/support/test-service.ts';
import { Petsing, PetsingError, VideoFailedError, WaitTimeoutError, type ApiVideo, type CreateVideoRequest, type PetsingOptions } from '../src/index.ts';
import { PET_PHOTO_MOUTH } from '../../test/support/pet-photo.ts';
import { seedTemplates } from '../../test/support/templates.ts';

const run = promisify(execFile);
const CAT_PHOTO = join(import.meta.dirname, '..', '..', '..', 'shared', 'pets', 'cat-01.jpg');
const EXAMPLE = join(import.meta.dirname, '..', 'examples', 'make-video.ts');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

type Sent = { method: string; path: string; idempotencyKey: string | null; prefer: string | null; status: number; preferenceApplied: string | null; at: number };

/**
 * A fetch that records what the SDK sent and was answered; `alter` may replace an answer or throw instead,
 * `prepare` change the request on its way (what the service sees, not what is recorded).
 */
function recordingFetch(alter?: (request: Request, response: Response) => Promise<Response> | Response, prepare = (request: Request) => request) {
  const sent: Sent[] = [];
  const send: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    const at = Date.now();
    let response = await fetch(prepare(request.clone()));
    sent.push({
      method: request.method,
      path: new URL(request.url).pathname,
      idempotencyKey: request.headers.get('idempotency-key'),
      prefer: request.headers.get('prefer'),
      status: response.status,
      preferenceApplied: response.headers.get('preference-applied'),
      at,
    });
    if (alter) response = await alter(request, response);
    return response;
  };
  return { sent, fetch: send };
}

describe('@petsing/sdk against the running service (real API, Temporal and workers)', () => {
  let service: TestService;
  let imageHost: Awaited<ReturnType<typeof startImageHost>>;
  let scratch: string;
  const client = (apiKey: string, options: Partial<PetsingOptions> = {}) => new Petsing({ apiKey, baseUrl: service.baseUrl, ...options });
  const fromUrl = (path = '/pet.png'): CreateVideoRequest => ({ template_id: '1', image_url: imageHost.url(path) });

  beforeAll(async () => {
    ({ service, imageHost } = await startRenderingService());
    await seedTemplates(service.context);
    scratch = await mkdtemp(join(tmpdir(), 'petsing-sdk-'));
  }, 180_000);
  afterAll(async () => {
    await service?.stop();
    await imageHost?.close();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  it('creates a video with a fresh Idempotency-Key and waits for it, each read held by the service (Prefer: wait); unknown statuses are not terminal', async () => {
    const account = await createTestAccount(service.context, 'sdk-create@example.com', 3);
    // The first read answers a status this SDK does not know: it must keep waiting.
    let renamed: ApiVideo | undefined;
    const { sent, fetch } = recordingFetch(async (request, response) => {
      if (request.method !== 'GET' || renamed || !/\/v1\/videos\/[^/]+$/.test(request.url)) return response;
      renamed = { ...((await response.json()) as ApiVideo), status: 'queued_on_the_moon' };
      const headers = new Headers(response.headers);
      headers.delete('content-length');
      return Response.json(renamed, { status: response.status, headers });
    });
    const petsing = client(account.readWrite, { fetch });

    const created = await petsing.createVideo(fromUrl());
    expect(created).toMatchObject({ status: 'processing', template_id: '1', credits_remaining: 2 });
    const updates: string[] = [];
    const video = await petsing.waitForVideo(created.id, { timeoutMs: 240_000, onUpdate: (update) => updates.push(update.status) });

    expect(video).toMatchObject({ id: created.id, status: 'completed', has_watermark: false, error: null });
    expect(video.video_url).toEqual(expect.any(String));
    expect(updates[0]).toBe('queued_on_the_moon');
    const creates = sent.filter((request) => request.method === 'POST');
    expect(creates).toHaveLength(1);
    expect(creates[0]!.idempotencyKey).toMatch(UUID);
    const reads = sent.filter((request) => request.method === 'GET');
    for (const read of reads) {
      expect(read.prefer).toMatch(/^wait=([1-9]|[1-5]\d|60)$/);
      expect(read.preferenceApplied).toBe(read.prefer);
    }
    // The first read (renamed) and the one that saw it complete: no polling in between.
    expect(reads.length).toBeLessThanOrEqual(3);
    expect(await petsing.credits()).toMatchObject({ balance: 2 });
  }, 300_000);

  it('falls back to reading every 10 s, the documented interval, where the service ignores Prefer: wait', async () => {
    const account = await createTestAccount(service.context, 'sdk-poll@example.com', 1);
    const withoutPrefer = (request: Request) => {
      const headers = new Headers(request.headers);
      headers.delete('prefer');
      return new Request(request, { headers });
    };
    const { sent, fetch } = recordingFetch(undefined, withoutPrefer);
    const petsing = client(account.readWrite, { fetch });
    const created = await petsing.createVideo(fromUrl());
    expect(await petsing.waitForVideo(created.id, { timeoutMs: 240_000 })).toMatchObject({ status: 'completed' });
    const reads = sent.filter((request) => request.method === 'GET');
    expect(reads.length).toBeGreaterThanOrEqual(2);
    for (const read of reads) expect(read.preferenceApplied).toBeNull();
    for (let i = 1; i < reads.length; i++) expect(reads[i]!.at - reads[i - 1]!.at).toBeGreaterThanOrEqual(9_900);
  }, 300_000);

  it('rejects waitForVideo with VideoFailedError carrying the video\'s code, WaitTimeoutError after timeoutMs and the signal\'s reason', async () => {
    const account = await createTestAccount(service.context, 'sdk-fail@example.com', 1);
    const petsing = client(account.readWrite, { pollIntervalMs: 500 });
    // With a mouth hint the URL is only vetted at create (no photo check before the charge): the render fails on it.
    const broken = await petsing.createVideo({ ...fromUrl('/missing.png'), face: { mouth: PET_PHOTO_MOUTH } });
    const failure = await petsing.waitForVideo(broken.id, { timeoutMs: 60_000 }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(VideoFailedError);
    expect(failure).toMatchObject({ code: 'image_url_unreachable', video: { id: broken.id, status: 'failed' } });
    expect((await petsing.credits()).balance).toBe(1);

    // A render that never ends, as far as this client can tell: every read answers `processing`.
    const { fetch } = recordingFetch(async (_request, response) => {
      const headers = new Headers(response.headers);
      headers.delete('content-length');
      return Response.json({ ...((await response.json()) as ApiVideo), status: 'processing' }, { status: response.status, headers });
    });
    const started = Date.now();
    const timedOut = await client(account.readOnly, { fetch, pollIntervalMs: 500 }).waitForVideo(broken.id, { timeoutMs: 1_500 }).catch((error: unknown) => error);
    expect(timedOut).toBeInstanceOf(WaitTimeoutError);
    expect(timedOut).toMatchObject({ videoId: broken.id, video: { status: 'processing' } });
    expect(Date.now() - started).toBeLessThan(5_000);

    const aborted = new AbortController();
    aborted.abort(new Error('user gave up'));
    await expect(petsing.waitForVideo(broken.id, { signal: aborted.signal })).rejects.toThrow('user gave up');
  }, 120_000);

  it('cancels a video: it ends failed with code canceled, waitForVideo says so, and the credit comes back', async () => {
    const account = await createTestAccount(service.context, 'sdk-cancel@example.com', 1);
    const petsing = client(account.readWrite);
    const created = await petsing.createVideo(fromUrl());
    expect(created.credits_remaining).toBe(0);
    const canceled = await petsing.cancelVideo(created.id);
    expect(canceled).toMatchObject({ id: created.id, status: 'failed', error: { code: 'canceled' } });
    await expect(petsing.waitForVideo(created.id, { timeoutMs: 30_000 })).rejects.toMatchObject({ name: 'VideoFailedError', code: 'canceled' });
    await waitFor('the refund', async () => (await petsing.credits()).balance === 1, 30_000);
    expect((await petsing.credits()).recent.map((entry) => entry.reason)).toEqual(['refund', 'video_create', 'grant']);
  }, 90_000);

  it('follows a video over Server-Sent Events to completion, resuming a dropped stream with Last-Event-ID', async () => {
    const account = await createTestAccount(service.context, 'sdk-events@example.com', 1);
    const lastEventIds: (string | null)[] = [];
    const { fetch } = recordingFetch((request, response) => {
      if (!request.url.endsWith('/events')) return response;
      lastEventIds.push(request.headers.get('last-event-id'));
      if (lastEventIds.length > 1 || !response.body) return response;
      // The first stream drops right after its first event.
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let seen = '';
      const dropping = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const { done, value } = await reader.read();
          if (done) return controller.close();
          controller.enqueue(value);
          seen += decoder.decode(value, { stream: true });
          if (/^data: /m.test(seen) && seen.endsWith('\n\n')) {
            await reader.cancel();
            controller.close();
          }
        },
      });
      return new Response(dropping, { status: response.status, headers: response.headers });
    });
    const petsing = client(account.readWrite, { fetch });
    const created = await petsing.createVideo(fromUrl());

    const events = [];
    for await (const event of petsing.videoEvents(created.id)) events.push(event);
    expect(events[0]!.video).toMatchObject({ id: created.id, status: 'processing' });
    expect(events.at(-1)).toMatchObject({ eventId: 102, video: { id: created.id, status: 'completed', video_url: expect.any(String) } });
    const ids = events.map((event) => event.eventId);
    expect(ids).toEqual([...new Set(ids)].sort((a, b) => a - b));
    expect(lastEventIds.length).toBeGreaterThanOrEqual(2);
    expect(lastEventIds[0]).toBeNull();
    expect(lastEventIds[1]).toBe(String(events[0]!.eventId));

    const after = [];
    for await (const event of petsing.videoEvents(created.id, { lastEventId: 102 })) after.push(event);
    expect(after).toEqual([]);
    await expect(petsing.videoEvents(crypto.randomUUID()).next()).rejects.toMatchObject({ name: 'PetsingError', status: 404, code: 'not_found' });
  }, 120_000);

  it('retries a create whose answer was lost with the same Idempotency-Key: one video, one charge', async () => {
    const account = await createTestAccount(service.context, 'sdk-idem@example.com', 3);
    let lost = false;
    const { sent, fetch } = recordingFetch((request, response) => {
      // The service made the video; the connection drops before the answer arrives.
      if (request.method === 'POST' && !lost) {
        lost = true;
        throw new TypeError('fetch failed');
      }
      return response;
    });
    const petsing = client(account.readWrite, { fetch, retry: { baseDelayMs: 50 } });

    const created = await petsing.createVideo(fromUrl());
    const posts = sent.filter((request) => request.method === 'POST');
    expect(posts.map((post) => post.status)).toEqual([202, 202]);
    expect(posts[1]!.idempotencyKey).toBe(posts[0]!.idempotencyKey);
    expect(created.credits_remaining).toBe(2);
    expect((await petsing.listVideos()).map((video) => video.id)).toEqual([created.id]);

    const first = await petsing.createVideo(fromUrl(), { idempotencyKey: 'order-7' });
    const again = await petsing.createVideo(fromUrl(), { idempotencyKey: 'order-7' });
    expect(again.id).toBe(first.id);
    expect((await petsing.credits()).balance).toBe(1);
    const reused = await petsing.createVideo({ template_id: '2', image_url: imageHost.url('/pet.png') }, { idempotencyKey: 'order-7' }).catch((error: unknown) => error);
    expect(reused).toMatchObject({ status: 422, code: 'idempotency_key_reused', retryable: false });

    // Deleting stops the renders; the deleted video is then 404.
    for (const id of [created.id, first.id]) await petsing.deleteVideo(id);
    await expect(petsing.getVideo(created.id)).rejects.toMatchObject({ status: 404, code: 'not_found' });
    expect((await petsing.credits()).balance).toBe(1);
  }, 120_000);

  it('throws PetsingError with status, code, hint, retryable and request id, without retrying what retrying cannot fix', async () => {
    const broke = await createTestAccount(service.context, 'sdk-broke@example.com', 0);
    const { sent, fetch } = recordingFetch();
    const petsing = client(broke.readWrite, { fetch });
    const expectError = async (call: Promise<unknown>, status: number, code: string) => {
      const before = sent.length;
      const error = await call.then(() => undefined, (thrown: unknown) => thrown);
      expect(error).toBeInstanceOf(PetsingError);
      const problem = error as PetsingError;
      expect(problem).toMatchObject({ status, code, retryable: false, retryAfterSeconds: undefined });
      expect(problem.hint).toEqual(expect.any(String));
      expect(problem.message).toEqual(expect.any(String));
      expect(problem.requestId).toEqual(expect.any(String));
      expect(sent.length - before).toBe(1);
      return problem;
    };

    const poor = await expectError(petsing.createVideo(fromUrl()), 402, 'insufficient_credits');
    expect(poor.detail).toMatchObject({ credit_balance: 0, credits_required: 1 });
    await expectError(petsing.getVideo(crypto.randomUUID()), 404, 'not_found');
    await expectError(petsing.createVideo({ template_id: '999', image_url: imageHost.url('/pet.png') }), 400, 'unknown_template');
    await expectError(petsing.createVideo({ template_id: '1', image_url: 'not a url' }), 400, 'invalid_request');
    await expectError(petsing.createVideo({ image_url: imageHost.url('/pet.png') } as CreateVideoRequest), 400, 'template_or_audio_required');
    await expectError(client(broke.readOnly, { fetch }).createVideo(fromUrl()), 403, 'forbidden');
    await expectError(client('psk_live_not_a_key', { fetch }).me(), 401, 'unauthorized');
  });

  it('uploads a photo and audio, and makes a video singing the audio', async () => {
    const account = await createTestAccount(service.context, 'sdk-audio@example.com', 2);
    const petsing = client(account.readWrite);
    const tone = join(scratch, 'tone.mp3');
    await run('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'sine=frequency=330:sample_rate=44100:duration=3', '-c:a', 'libmp3lame', tone]);

    const image = await petsing.uploadImage(CAT_PHOTO);
    expect(image.face).not.toBeNull();
    const audio = await petsing.uploadAudio(tone);
    expect(audio.duration_seconds).toBeCloseTo(3, 0);
    expect((await petsing.listVoices()).length).toBeGreaterThan(0);
    expect((await petsing.listTemplates()).map((template) => template.id)).toContain('1');
    expect(await petsing.me()).toMatchObject({ user_id: account.id, credit_balance: 2, credits_per_video: 1 });

    const created = await petsing.createVideo({ image_id: image.id, audio_id: audio.id, aspect: '4:5' });
    expect(created).toMatchObject({ audio_id: audio.id, aspect: '4:5', credits_remaining: 1 });
    const video = await petsing.waitForVideo(created.id, { timeoutMs: 240_000 });
    expect(video).toMatchObject({ status: 'completed', audio_id: audio.id, template_id: null });
    const mp4 = join(scratch, 'audio.mp4');
    await writeFile(mp4, Buffer.from(await (await fetch(video.video_url!)).arrayBuffer()));
    expect((await probeMedia(mp4)).durationSeconds).toBeCloseTo(3, 0);
  }, 300_000);

  it('runs the example script end to end: upload, create, wait, download an MP4', async () => {
    const account = await createTestAccount(service.context, 'sdk-example@example.com', 1);
    const out = join(scratch, 'example.mp4');
    const { stdout } = await run(process.execPath, ['--import', 'tsx', EXAMPLE, CAT_PHOTO, '--template', '2', '--aspect', '9:16', '--out', out], {
      env: serviceProcessEnv({ PETSING_API_KEY: account.readWrite, PETSING_BASE_URL: service.baseUrl }),
      timeout: 280_000,
    });
    expect(stdout).toContain('face found');
    expect(stdout).toContain(`Saved ${out}`);
    const probe = await probeMedia(out);
    expect(probe).toMatchObject({ hasVideo: true, hasAudio: true });
    expect(probe.durationSeconds).toBeGreaterThan(1);
    expect((await client(account.readOnly).credits()).balance).toBe(0);
  }, 300_000);
});

describe('@petsing/sdk and rate limits', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({ env: { RATE_LIMIT_READS_PER_MINUTE: '2' } });
  }, 120_000);
  afterAll(async () => {
    await service?.stop();
  });

  it('honours Retry-After on 429: gives up at once with retries off, waits it out and succeeds with them on', async () => {
    const account = await createTestAccount(service.context, 'sdk-rate@example.com', 0);
    const { sent, fetch } = recordingFetch();
    const patient = new Petsing({ apiKey: account.readOnly, baseUrl: service.baseUrl, fetch });
    const impatient = new Petsing({ apiKey: account.readOnly, baseUrl: service.baseUrl, retry: { maxRetries: 0 } });
    await patient.me();
    await patient.me();
    // Two reads a minute, in fixed windows: a window may turn between these calls, so read until refused.
    let limited: unknown;
    for (let tries = 0; tries < 3 && !(limited instanceof PetsingError); tries++) limited = await impatient.me().catch((error: unknown) => error);
    expect(limited).toBeInstanceOf(PetsingError);
    expect(limited).toMatchObject({ status: 429, code: 'rate_limited', retryable: true });
    const retryAfter = (limited as PetsingError).retryAfterSeconds!;
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);

    const started = Date.now();
    expect(await patient.me()).toMatchObject({ user_id: account.id });
    const waited = Date.now() - started;
    expect(sent.map((request) => request.status)).toEqual([200, 200, 429, 200]);
    // It waited what the service asked (less the moment since the impatient call), and not much longer.
    expect(waited).toBeGreaterThanOrEqual((retryAfter - 1) * 1000);
    expect(waited).toBeLessThan((retryAfter + 3) * 1000);
    expect(sent[3]!.at - sent[2]!.at).toBeGreaterThanOrEqual((retryAfter - 1) * 1000);
  }, 90_000);
});
