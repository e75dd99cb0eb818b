import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyAddress } from '../src/media/address-policy.ts';
import { probeMedia } from '../src/media/ffmpeg.ts';
import { systemResolver } from '../src/media/host-resolvers.ts';
import { createUserUrlFetcher } from '../src/media/safe-fetch.ts';
import { VideoUnavailableError, type VideoPageResolver } from '../src/media/social/video-page-resolver.ts';
import { awayFromWindowEdge, createTestAccount } from '../../test/support/accounts.ts';
import type { Json } from '../../test/support/http.ts';
import { FIXTURE_HOST, startImageHost } from '../../test/support/image-host.ts';
import { expectDocumentedResponses, type RecordedResponse } from '../../test/support/openapi.ts';
import { waitFor } from '../../test/support/processes.ts';
import { startTestService, type TestService } from '../../test/support/test-service.ts';
import { petPhoto } from '../../test/support/pet-photo.ts';
import { seedTemplates } from '../../test/support/templates.ts';

const run = promisify(execFile);

/** The platform's video pages this suite knows; the resolver stands in for yt-dlp as in social-extract-audio.test.ts. */
const SONG_PAGE = 'https://www.tiktok.com/@fixture/video/7301234567890123456';
const PRIVATE_PAGE = 'https://www.tiktok.com/@fixture/video/7301234567890000000';

/**
 * Every audio source of /v1 end to end, through the real HTTP API with Temporal and both workers: an
 * uploaded file, speech (espeak-ng) and a short video's soundtrack (a stand-in resolver and a local
 * media host), each stored by POST /v1/audio and sung by POST /v1/videos with audio_id; and the errors a
 * client can act on (retryable, retry_after_seconds, the 402's balance and cost).
 */
describe('/v1 audio', () => {
  let service: TestService;
  let host: Awaited<ReturnType<typeof startImageHost>>;
  let scratch: string;
  let owner: Awaited<ReturnType<typeof createTestAccount>>;
  const files: Record<string, Buffer> = {};
  const recorded: RecordedResponse[] = [];

  const send = async (operation: string, method: string, path: string, key: string | undefined, body?: unknown, headers: Record<string, string> = {}) => {
    const isForm = body instanceof FormData;
    const response = await fetch(`${service.baseUrl}${path}`, {
      method,
      headers: { ...(key ? { Authorization: `Bearer ${key}` } : {}), ...(body && !isForm ? { 'Content-Type': 'application/json' } : {}), ...headers },
      ...(body ? { body: isForm ? body : JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    const parsed = text ? JSON.parse(text) : undefined;
    recorded.push({ operation, status: response.status, body: parsed });
    return { response, status: response.status, body: parsed as Json };
  };
  const upload = (key: string, name: string, type = 'audio/mpeg') => {
    const form = new FormData();
    form.append('audio', new Blob([files[name]!], { type }), name);
    return send('createApiAudio', 'POST', '/v1/audio', key, form);
  };
  const createVideo = (key: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    send('createApiVideo', 'POST', '/v1/videos', key, { image_url: host.url('/pet.png'), ...body }, headers);
  const finished = async (key: string, id: string) => {
    let video: Json;
    await waitFor(`video ${id} to finish`, async () => {
      video = (await send('getApiVideo', 'GET', `/v1/videos/${id}`, key)).body;
      return ['completed', 'failed'].includes(video.status);
    }, 240_000);
    return video;
  };
  /** The length of a finished video's MP4, measured by ffprobe. */
  const videoSeconds = async (url: string) => {
    const path = join(scratch, `${crypto.randomUUID()}.mp4`);
    await writeFile(path, Buffer.from(await (await fetch(url)).arrayBuffer()));
    return (await probeMedia(path)).durationSeconds;
  };

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'petsing-v1-audio-'));
    const at = (name: string) => join(scratch, name);
    const tone = (seconds: number) => ['-f', 'lavfi', '-i', `sine=frequency=330:sample_rate=44100:duration=${seconds}`];
    await Promise.all([
      run('ffmpeg', ['-v', 'error', '-y', ...tone(3.5), '-c:a', 'libmp3lame', '-b:a', '96k', at('tone.mp3')]),
      run('ffmpeg', ['-v', 'error', '-y', ...tone(1), at('short.wav')]),
      run('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc=size=64x64:rate=5', ...tone(4), '-t', '4', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', at('clip.mp4')]),
    ]);
    for (const name of ['tone.mp3', 'short.wav', 'clip.mp4']) files[name] = await readFile(at(name));

    host = await startImageHost({
      '/pet.png': { body: await petPhoto(512), contentType: 'image/png' },
      '/clip.mp4': { body: files['clip.mp4']!, contentType: 'video/mp4' },
    });
    const port = Number(new URL(host.url('/')).port);
    const resolver: VideoPageResolver = {
      resolve: async (page) => {
        if (page === SONG_PAGE) return { mediaUrl: host.url('/clip.mp4'), title: 'Fixture song', durationSeconds: 4 };
        throw new VideoUnavailableError('The video is private.', { detail: 'ERROR: [TikTok] private' });
      },
    };
    service = await startTestService({
      temporal: true,
      controlWorker: true,
      renderWorker: true,
      // The photo and the platform's media come from the local host under a public-looking name, over http.
      userUrlFetcher: createUserUrlFetcher({
        addressPolicy: { checkAddress: (address) => (address === '127.0.0.1' ? null : classifyAddress(address)), extraPorts: [port], allowHttp: true },
        resolver: async (name, signal) => (name === FIXTURE_HOST ? [{ address: '127.0.0.1', family: 4 }] : systemResolver(name, signal)),
      }),
      videoPageResolver: resolver,
      env: { ALLOW_HTTP_IMAGE_URLS: 'true', RENDER_OUTPUT_SIZE: '192', RATE_LIMIT_WRITES_PER_MINUTE: '60' },
    });
    await seedTemplates(service.context);
    owner = await createTestAccount(service.context, 'audio-owner@example.com', 10);
  }, 240_000);
  afterAll(async () => {
    await service?.stop();
    await host?.close();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  it('an uploaded file and speech each become audio_id, and each video lasts exactly as long as its audio', async () => {
    const uploaded = await upload(owner.readWrite, 'tone.mp3');
    expect(uploaded.status, JSON.stringify(uploaded.body)).toBe(201);
    expect(uploaded.body).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), duration_seconds: expect.any(Number), expires_at: expect.any(String) });
    expect(uploaded.body.duration_seconds).toBeCloseTo(3.5, 1);
    const expiresIn = Date.parse(uploaded.body.expires_at) - Date.now();
    expect(expiresIn).toBeGreaterThan(23.9 * 3600_000);
    expect(expiresIn).toBeLessThanOrEqual(24 * 3600_000);

    const voices = await send('listApiVoices', 'GET', '/v1/voices', owner.readOnly);
    expect(voices.status).toBe(200);
    expect(voices.body.object).toBe('list');
    const voice = voices.body.data[0];
    expect(voice).toEqual({ id: expect.any(String), name: expect.any(String), language: expect.any(String), sample_url: `${service.baseUrl}/media/voices/${voice.id}.mp3` });
    const sample = await fetch(voice.sample_url);
    expect(sample.headers.get('content-type')).toBe('audio/mpeg');
    expect((await sample.arrayBuffer()).byteLength).toBeGreaterThan(1000);

    const spoken = await send('createApiAudio', 'POST', '/v1/audio', owner.readWrite, { text: 'Happy birthday, Max! You are the best dog in the whole world.', voice_id: voice.id });
    expect(spoken.status, JSON.stringify(spoken.body)).toBe(201);
    expect(spoken.body.duration_seconds).toBeGreaterThanOrEqual(2);

    const fromUpload = await createVideo(owner.readWrite, { audio_id: uploaded.body.id });
    expect(fromUpload.status, JSON.stringify(fromUpload.body)).toBe(202);
    expect(fromUpload.body).toEqual({
      id: expect.any(String), status: 'processing', audio_id: uploaded.body.id, aspect: 'square', credits_remaining: 9, poll_url: `${service.baseUrl}/v1/videos/${fromUpload.body.id}`,
    });
    const fromSpeech = await createVideo(owner.readWrite, { audio_id: spoken.body.id, aspect: '9:16' });
    expect(fromSpeech.status, JSON.stringify(fromSpeech.body)).toBe(202);

    const [uploadVideo, speechVideo] = await Promise.all([finished(owner.readOnly, fromUpload.body.id), finished(owner.readOnly, fromSpeech.body.id)]);
    expect(uploadVideo).toMatchObject({ status: 'completed', template_id: null, audio_id: uploaded.body.id, has_watermark: false, error: null });
    expect(speechVideo).toMatchObject({ status: 'completed', template_id: null, audio_id: spoken.body.id, aspect: '9:16' });
    expect(Math.abs((await videoSeconds(uploadVideo.video_url)) - uploaded.body.duration_seconds)).toBeLessThan(0.25);
    expect(Math.abs((await videoSeconds(speechVideo.video_url)) - spoken.body.duration_seconds)).toBeLessThan(0.25);
    // Each says how it sang: the speech is a voice alone (no band to rest for), sung whole from its start.
    expect(speechVideo.sync).toEqual({
      vocals_found: true, mouth_voice_r: expect.any(Number), instrumental_rest_share: null, audio_start_seconds: 0, audio_duration_seconds: expect.closeTo(spoken.body.duration_seconds, 0),
    });
    expect(uploadVideo.sync).toMatchObject({ audio_start_seconds: 0, audio_duration_seconds: expect.closeTo(3.5, 0) });
    // The uploaded file was separated into vocals and the rest (once); the speech, a voice alone, was not.
    expect(service.context.services.vocalStems.separations).toBe(1);

    // A template video says which song it sings and no audio.
    const listed = (await send('listApiVideos', 'GET', '/v1/videos', owner.readOnly)).body.data;
    expect(listed.map((video: Json) => video.audio_id)).toEqual([spoken.body.id, uploaded.body.id]);
  }, 420_000);

  it('takes the soundtrack of a short-video link through the platform rules', async () => {
    const account = await createTestAccount(service.context, 'audio-link@example.com', 1);
    const linked = await send('createApiAudio', 'POST', '/v1/audio', account.readWrite, { video_url: SONG_PAGE });
    expect(linked.status, JSON.stringify(linked.body)).toBe(201);
    expect(linked.body.duration_seconds).toBeGreaterThan(3.8);
    expect(linked.body.duration_seconds).toBeLessThan(4.3);
    expect(host.requests).toContain('/clip.mp4');
    const created = await createVideo(account.readWrite, { audio_id: linked.body.id });
    expect(created.status).toBe(202);
    expect((await send('getApiVideo', 'GET', `/v1/videos/${created.body.id}`, account.readOnly)).body).toMatchObject({ audio_id: linked.body.id, template_id: null });

    const refusals: [unknown, number, string][] = [
      [{ video_url: 'https://www.youtube.com/watch?v=abc' }, 400, 'unsupported_video_url'],
      [{ video_url: PRIVATE_PAGE }, 400, 'video_unavailable'],
      [{ video_url: SONG_PAGE, text: 'hello there', voice_id: 'x' }, 400, 'invalid_request'],
      [{}, 400, 'invalid_request'],
      [{ text: 'hello there' }, 400, 'invalid_request'],
      [{ text: 'hello there', voice_id: 'no-such-voice' }, 400, 'unknown_voice'],
      [{ text: 'a'.repeat(501), voice_id: 'no-such-voice' }, 400, 'text_too_long'],
    ];
    for (const [body, status, code] of refusals) {
      const refused = await send('createApiAudio', 'POST', '/v1/audio', account.readWrite, body);
      expect(refused.status, JSON.stringify(body)).toBe(status);
      expect(refused.body.error).toMatchObject({ code, retryable: false, hint: expect.any(String) });
    }
  }, 120_000);

  it('refuses audio files outside the web rules, and writes without videos:write', async () => {
    const short = await upload(owner.readWrite, 'short.wav', 'audio/wav');
    expect(short.status).toBe(400);
    expect(short.body.error).toMatchObject({ code: 'audio_duration_out_of_range', retryable: false });
    const form = new FormData();
    form.append('audio', new Blob([Buffer.from('not audio at all, just text')], { type: 'audio/mpeg' }), 'fake.mp3');
    const notAudio = await send('createApiAudio', 'POST', '/v1/audio', owner.readWrite, form);
    expect(notAudio.body.error).toMatchObject({ code: 'unsupported_audio_format', status: 400, retryable: false });
    const empty = await send('createApiAudio', 'POST', '/v1/audio', owner.readWrite, new FormData());
    expect(empty.status).toBe(400);
    const readOnly = await upload(owner.readOnly, 'tone.mp3');
    expect(readOnly.status).toBe(403);
    expect(readOnly.body.error).toMatchObject({ code: 'forbidden', retryable: false });
  });

  it('takes exactly one of template_id and audio_id, the caller\'s own, unexpired, charging nothing on refusal', async () => {
    const stranger = await createTestAccount(service.context, 'audio-stranger@example.com', 1);
    const mine = (await upload(owner.readWrite, 'tone.mp3')).body.id as string;
    const theirs = (await upload(stranger.readWrite, 'tone.mp3')).body.id as string;
    const expired = (await upload(owner.readWrite, 'tone.mp3')).body.id as string;
    await service.context.database.db.updateTable('hosted_audio').set({ expires_at: new Date(Date.now() - 1000) }).where('id', '=', expired).execute();

    const before = await service.context.services.credits.balance(owner.id);
    const cases: [Record<string, unknown>, number, string][] = [
      [{ template_id: '1', audio_id: mine }, 400, 'template_or_audio_required'],
      [{}, 400, 'template_or_audio_required'],
      [{ audio_id: theirs }, 404, 'unknown_audio'],
      [{ audio_id: crypto.randomUUID() }, 404, 'unknown_audio'],
      [{ audio_id: 'not-a-uuid' }, 400, 'invalid_request'],
      [{ audio_id: expired }, 410, 'audio_expired'],
      // The start must leave the 2 s a video needs of the 3.5 s audio, and only audio has one.
      [{ audio_id: mine, audio_start_seconds: -1 }, 400, 'audio_start_out_of_range'],
      [{ audio_id: mine, audio_start_seconds: 1.6 }, 400, 'audio_start_out_of_range'],
      [{ audio_id: mine, audio_start_seconds: 60 }, 400, 'audio_start_out_of_range'],
      [{ template_id: '1', audio_start_seconds: 0 }, 400, 'audio_start_out_of_range'],
      [{ audio_id: mine, audio_start_seconds: 'soon' }, 400, 'invalid_request'],
    ];
    for (const [body, status, code] of cases) {
      const refused = await createVideo(owner.readWrite, body);
      expect(refused.status, JSON.stringify(body)).toBe(status);
      expect(refused.body.error, JSON.stringify(body)).toMatchObject({ code, status, retryable: false, hint: expect.any(String), documentation_url: `${service.baseUrl}/docs/errors#${code}` });
    }
    expect(await service.context.services.credits.balance(owner.id)).toBe(before);
    // The stranger's audio is theirs to use.
    expect((await createVideo(stranger.readWrite, { audio_id: theirs })).status).toBe(202);
  });

  it('sings the audio from the caller\'s audio_start_seconds, and says which window it sang', async () => {
    const account = await createTestAccount(service.context, 'audio-start@example.com', 1);
    const audioId = (await upload(account.readWrite, 'tone.mp3')).body.id as string;
    const created = await createVideo(account.readWrite, { audio_id: audioId, audio_start_seconds: 1.25 });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const video = await finished(account.readOnly, created.body.id);
    expect(video.status, JSON.stringify(video.error)).toBe('completed');
    expect(video.sync).toMatchObject({ audio_start_seconds: 1.25, audio_duration_seconds: expect.closeTo(2.25, 1) });
    expect(Math.abs((await videoSeconds(video.video_url)) - 2.25)).toBeLessThan(0.25);
  }, 240_000);

  it('sweeps expired audio, row, object and link, while a video made from it keeps its own copy', async () => {
    const account = await createTestAccount(service.context, 'audio-sweep@example.com', 1);
    const uploaded = (await upload(account.readWrite, 'tone.mp3')).body as { id: string; expires_at: string };
    const row = () => service.context.database.db.selectFrom('hosted_audio').selectAll().where('id', '=', uploaded.id).executeTakeFirst();
    const key = (await row())!.object_key;
    const created = await createVideo(account.readWrite, { audio_id: uploaded.id });
    expect(created.status).toBe(202);
    const videoAudioKey = (await service.context.database.db.selectFrom('videos').select('audio_key').where('id', '=', created.body.id).executeTakeFirstOrThrow()).audio_key!;
    const link = `${service.baseUrl}/media/audio/${uploaded.id}.mp3`;
    expect((await fetch(link)).status).toBe(200);

    const expiresAt = new Date(uploaded.expires_at).getTime();
    await service.context.services.hostedAudio.sweepExpired(new Date(expiresAt - 60_000));
    expect(await row()).toBeDefined();
    expect(await service.context.services.hostedAudio.sweepExpired(new Date(expiresAt + 1000))).toBeGreaterThanOrEqual(1);
    expect(await row()).toBeUndefined();
    expect(await service.context.objectStore.exists(key)).toBe(false);
    expect((await fetch(link)).status).toBe(404);
    expect(await service.context.objectStore.exists(videoAudioKey)).toBe(true);
  });

  it('replays an audio create for the same Idempotency-Key without a second charge', async () => {
    const account = await createTestAccount(service.context, 'audio-idem@example.com', 2);
    const audioId = (await upload(account.readWrite, 'tone.mp3')).body.id;
    const headers = { 'Idempotency-Key': 'audio-order-7' };
    const first = await createVideo(account.readWrite, { audio_id: audioId }, headers);
    const again = await createVideo(account.readWrite, { audio_id: audioId }, headers);
    expect(first.status).toBe(202);
    expect(again.body).toEqual(first.body);
    expect(again.response.headers.get('idempotent-replayed')).toBe('true');
    expect(await service.context.services.credits.balance(account.id)).toBe(1);
    const otherAudio = (await upload(account.readWrite, 'tone.mp3')).body.id;
    expect((await createVideo(account.readWrite, { audio_id: otherAudio }, headers)).body.error.code).toBe('idempotency_key_reused');
  });

  it('tells what a refused create would cost, and whether and when to retry', async () => {
    const broke = await createTestAccount(service.context, 'audio-broke@example.com', 0);
    const audioId = (await upload(broke.readWrite, 'tone.mp3')).body.id;
    const poor = await createVideo(broke.readWrite, { audio_id: audioId });
    expect(poor.status).toBe(402);
    expect(poor.body.error).toEqual({
      code: 'insufficient_credits', status: 402, message: expect.stringContaining('balance is 0'), hint: expect.any(String),
      documentation_url: `${service.baseUrl}/docs/errors#insufficient_credits`, retryable: false, credit_balance: 0, credits_required: 1,
    });

    const missing = await send('getApiVideo', 'GET', `/v1/videos/${crypto.randomUUID()}`, broke.readOnly);
    expect(missing.body.error).toMatchObject({ code: 'not_found', retryable: false });
    expect(missing.body.error).not.toHaveProperty('retry_after_seconds');
    const anonymous = await send('getApiAccount', 'GET', '/v1/me', undefined);
    expect(anonymous.body.error).toMatchObject({ code: 'unauthorized', retryable: false });

    await awayFromWindowEdge();
    const responses = await Promise.all(Array.from({ length: 61 }, () => send('getApiCredits', 'GET', '/v1/credits', broke.readOnly)));
    const limited = responses.find((response) => response.status === 429)!;
    expect(limited).toBeDefined();
    expect(limited.body.error).toMatchObject({ code: 'rate_limited', retryable: true, retry_after_seconds: Number(limited.response.headers.get('retry-after')) });
    expect(limited.body.error.retry_after_seconds).toBeGreaterThan(0);
  });

  it('documents every answer in /openapi.json, the /docs/errors list included', async () => {
    const checked = await expectDocumentedResponses(service.baseUrl, recorded);
    for (const pair of ['createApiAudio 201', 'createApiAudio 400', 'createApiAudio 403', 'listApiVoices 200', 'createApiVideo 402', 'createApiVideo 404', 'createApiVideo 410', 'getApiCredits 429']) {
      expect(checked, pair).toContain(pair);
    }
    const document: Json = await (await fetch(`${service.baseUrl}/openapi.json`)).json();
    expect(Object.keys(document.components.schemas.ErrorDetail.properties)).toEqual(
      expect.arrayContaining(['retryable', 'retry_after_seconds', 'credit_balance', 'credits_required']),
    );
    const errors = await (await fetch(`${service.baseUrl}/docs/errors`)).text();
    expect(errors).toContain('<dt id="audio_expired"><code>audio_expired</code> (HTTP 410, retrying does not help)</dt>');
    expect(errors).toContain('<dt id="rate_limited"><code>rate_limited</code> (HTTP 429, retrying helps)</dt>');
  });
});
