import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConfigError, loadControlPlaneConfig } from '../src/config/env.ts';
import { AppError } from '../src/errors/app-error.ts';
import { createLogger } from '../src/logging/logger.ts';
import { probeMedia } from '../src/media/ffmpeg.ts';
import { HttpSpeechProvider } from '../src/media/speech/http-speech.provider.ts';
import { json, type Json } from '../../test/support/http.ts';
import { signInWebUser } from '../../test/support/accounts.ts';
import { startTestService, type TestService } from '../../test/support/test-service.ts';
import { captureLines } from '../../test/support/log-capture.ts';

const run = promisify(execFile);
const API_KEY = 'sk-test-KEY-4f9c2d-never-log-me';

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'petsing-speech-test-'));
});
afterAll(() => rm(scratch, { recursive: true, force: true }));

function isMp3(bytes: Buffer): boolean {
  return bytes.subarray(0, 3).toString('latin1') === 'ID3' || (bytes[0] === 0xff && (bytes[1]! & 0xe0) === 0xe0);
}

async function durationOf(bytes: Buffer): Promise<number> {
  const path = join(scratch, `${createHash('sha256').update(bytes).digest('hex')}.mp3`);
  await writeFile(path, bytes);
  const probed = await probeMedia(path);
  expect(probed.hasAudio).toBe(true);
  return probed.durationSeconds;
}

/** GETs a hosted MP3 and checks it is one. */
async function fetchMp3(url: string): Promise<Buffer> {
  const response = await fetch(url);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('audio/mpeg');
  const bytes = Buffer.from(await response.arrayBuffer());
  expect(isMp3(bytes)).toBe(true);
  return bytes;
}

function tts(service: TestService, token: string | undefined, body: unknown) {
  return fetch(`${service.baseUrl}/tts`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

async function hostedAudioRows(service: TestService, userId: string) {
  return service.context.database.db.selectFrom('hosted_audio').selectAll().where('user_id', '=', userId).execute();
}

describe('speech with the local espeak-ng provider', () => {
  let service: TestService;
  let token: string;
  let userId: string;

  beforeAll(async () => {
    service = await startTestService();
    ({ token, id: userId } = await signInWebUser(service, 'speaker@example.com'));
  });
  afterAll(() => service.stop());

  it('lists at least five voices whose sample clips are made once and then reused', async () => {
    const response = await fetch(`${service.baseUrl}/tts/voices`, { headers: { Authorization: `Bearer ${token}` } });
    expect(response.status).toBe(200);
    const { voices } = (await json(response)) as { voices: { id: string; name: string; language: string; sample_url: string }[] };
    expect(voices.length).toBeGreaterThanOrEqual(5);
    expect(new Set(voices.map((voice) => voice.id)).size).toBe(voices.length);
    expect(new Set(voices.map((voice) => voice.language.split('-')[0])).size).toBeGreaterThanOrEqual(5);
    for (const voice of voices) {
      expect(Object.keys(voice).sort()).toEqual(['id', 'language', 'name', 'sample_url']);
      expect(voice.name.trim()).not.toBe('');
      expect(voice.sample_url).toBe(`${service.baseUrl}/media/voices/${voice.id}.mp3`);
    }

    const puts = vi.spyOn(service.context.objectStore, 'put');
    const sampleWrites = () => puts.mock.calls.map(([key]) => key).filter((key) => key.startsWith('voices/'));
    try {
      // Concurrent first plays of one voice share a single synthesis.
      const [first] = voices;
      const concurrent = await Promise.all([1, 2, 3].map(() => fetchMp3(first!.sample_url)));
      expect(sampleWrites()).toEqual([`voices/espeak/${first!.id}.mp3`]);
      expect(concurrent[1]!.equals(concurrent[0]!) && concurrent[2]!.equals(concurrent[0]!)).toBe(true);

      const samples = new Map<string, Buffer>();
      for (const voice of voices) samples.set(voice.id, await fetchMp3(voice.sample_url));
      // Every voice sounds different, and each clip is a real sentence of speech.
      expect(new Set([...samples.values()].map((bytes) => bytes.toString('base64'))).size).toBe(voices.length);
      for (const bytes of samples.values()) expect(await durationOf(bytes)).toBeGreaterThan(2);
      for (const voice of voices) expect(await service.context.objectStore.exists(`voices/espeak/${voice.id}.mp3`)).toBe(true);
      expect(sampleWrites().sort()).toEqual(voices.map((voice) => `voices/espeak/${voice.id}.mp3`).sort());

      // A second listing and second plays serve the stored clips: nothing is synthesized again.
      const again = await json(fetch(`${service.baseUrl}/tts/voices`, { headers: { Authorization: `Bearer ${token}` } }));
      expect(again.voices).toEqual(voices);
      for (const voice of voices) expect((await fetchMp3(voice.sample_url)).equals(samples.get(voice.id)!)).toBe(true);
      expect(sampleWrites()).toHaveLength(voices.length);
    } finally {
      puts.mockRestore();
    }
  });

  it('answers 404 for the sample of a voice that does not exist', async () => {
    const response = await fetch(`${service.baseUrl}/media/voices/klingon.mp3`);
    expect(response.status).toBe(404);
    expect((await json(response)).error.code).toBe('not_found');
  });

  it('speaks text into a hosted MP3 of 2 to 30 seconds that belongs to the caller', async () => {
    const response = await tts(service, token, { text: '  Hi!  ', voice_id: 'en-us-female' });
    expect(response.status).toBe(200);
    const body = await json(response);
    expect(Object.keys(body).sort()).toEqual(['audio_url', 'duration_seconds', 'voice_id']);
    expect(body.voice_id).toBe('en-us-female');
    expect(body.audio_url).toMatch(new RegExp(`^${service.baseUrl}/media/audio/[0-9a-f-]{36}\\.mp3$`));

    // "Hi!" lasts well under a second: it is padded with silence to the 2 s a video needs.
    const duration = await durationOf(await fetchMp3(body.audio_url));
    expect(duration).toBeGreaterThanOrEqual(2);
    expect(duration).toBeLessThan(3);
    expect(body.duration_seconds).toBeCloseTo(duration, 1);

    const owned = await service.context.services.hostedAudio.findOwnedByUrl(userId, body.audio_url);
    expect(owned).toMatchObject({ user_id: userId, source: 'tts' });
    expect(owned!.duration_ms).toBe(Math.round(body.duration_seconds * 1000));
    const stranger = await service.context.services.users.create({ email: 'stranger@example.com' });
    expect(await service.context.services.hostedAudio.findOwnedByUrl(stranger.id, body.audio_url)).toBeUndefined();
  });

  it('accepts exactly 500 characters and keeps the speech under 30 seconds; refuses 501', async () => {
    const sentence = 'My little cat sings a happy song about fish, sunshine and naps. ';
    const text500 = sentence.repeat(10).slice(0, 500);
    expect(text500.length).toBe(500);

    const accepted = await tts(service, token, { text: `\n ${text500} \n`, voice_id: 'en-gb-male' });
    expect(accepted.status).toBe(200);
    const body = await json(accepted);
    const duration = await durationOf(await fetchMp3(body.audio_url));
    expect(duration).toBeGreaterThan(20);
    expect(duration).toBeLessThanOrEqual(30);

    const before = (await hostedAudioRows(service, userId)).length;
    const refused = await tts(service, token, { text: `${text500}x`, voice_id: 'en-gb-male' });
    expect(refused.status).toBe(400);
    const error = await json(refused);
    expect(error.error.code).toBe('text_too_long');
    expect(error.message).toContain('501');
    expect(await hostedAudioRows(service, userId)).toHaveLength(before);
  });

  it('refuses missing or empty text, an unknown voice and malformed JSON with 400', async () => {
    const before = (await hostedAudioRows(service, userId)).length;
    const cases: [unknown, string][] = [
      [{ voice_id: 'en-us-male' }, 'invalid_request'],
      [{ text: '   ', voice_id: 'en-us-male' }, 'invalid_request'],
      [{ text: 42, voice_id: 'en-us-male' }, 'invalid_request'],
      [{ text: 'Hello' }, 'invalid_request'],
      [{ text: 'Hello', voice_id: 'klingon' }, 'unknown_voice'],
      ['{"text": "Hello", ', 'malformed_json'],
    ];
    for (const [body, code] of cases) {
      const response = await tts(service, token, body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      const error: Json = await json(response);
      expect(error.error.code, JSON.stringify(body)).toBe(code);
      expect(error.error.hint).not.toBe('');
    }
    expect(await hostedAudioRows(service, userId)).toHaveLength(before);
  });

  it('answers 401 without a valid ID token', async () => {
    const apiKey = (await service.context.services.apiKeys.create({ userId, scopes: ['videos:read', 'videos:write'] })).key;
    for (const credential of [undefined, 'not-a-jwt', apiKey]) {
      const speak = await tts(service, credential, { text: 'Hello', voice_id: 'en-us-male' });
      expect(speak.status).toBe(401);
      expect((await json(speak)).error.code).toBe('unauthorized');
      const list = await fetch(`${service.baseUrl}/tts/voices`, credential ? { headers: { Authorization: `Bearer ${credential}` } } : {});
      expect(list.status).toBe(401);
      expect((await json(list)).error.code).toBe('unauthorized');
    }
  });

  it('documents the endpoints in /openapi.json', async () => {
    const document = await json(fetch(`${service.baseUrl}/openapi.json`));
    expect(document.paths['/tts'].post.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/SpeechRequest');
    expect(Object.keys(document.paths['/tts'].post.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '429', '503']));
    expect(document.components.schemas.SpeechRequest.properties.text.maxLength).toBe(500);
    expect(document.components.schemas.VoiceList.required).toEqual(['voices']);
    expect(document.paths['/tts/voices'].get.responses['200'].content['application/json'].schema.$ref).toBe('#/components/schemas/VoiceList');
    expect(document.paths['/media/voices/{file}'].get).toBeDefined();
  });
});

type UpstreamMode = 'ok' | 'long' | 'short' | 'quota' | 'outage' | 'slow';
type UpstreamRequest = { method: string; path: string; authorization: string | undefined; contentType: string | undefined; body: Json; closedEarly: boolean };

/** A local server speaking the OpenAI speech protocol (POST /v1/audio/speech), answering as `mode` says. */
async function startUpstream() {
  const clips = {
    ok: join(scratch, 'upstream-3s.mp3'),
    short: join(scratch, 'upstream-1s.mp3'),
    long: join(scratch, 'upstream-45s.mp3'),
  };
  for (const [path, seconds] of [[clips.ok, 3], [clips.short, 1], [clips.long, 45]] as const) {
    await run('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', `sine=frequency=330:duration=${seconds}`, '-ac', '1', '-c:a', 'libmp3lame', '-b:a', '64k', path]);
  }
  const state = { mode: 'ok' as UpstreamMode, requests: [] as UpstreamRequest[] };
  const read = async (req: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  };
  const server: Server = createServer(async (req, res) => {
    const raw = await read(req);
    const request: UpstreamRequest = {
      method: req.method ?? '',
      path: req.url ?? '',
      authorization: req.headers.authorization,
      contentType: req.headers['content-type'],
      body: JSON.parse(raw),
      closedEarly: false,
    };
    state.requests.push(request);
    res.on('close', () => {
      request.closedEarly = !res.writableFinished;
    });
    switch (state.mode) {
      case 'ok':
      case 'short':
      case 'long': {
        const audio = await readFile(clips[state.mode]);
        res.writeHead(200, { 'Content-Type': 'audio/mpeg', 'Content-Length': audio.length }).end(audio);
        return;
      }
      case 'quota':
        // Real providers echo (part of) the key in some errors; it must not travel further.
        res.writeHead(429, { 'Content-Type': 'application/json', 'Retry-After': '17' })
          .end(JSON.stringify({ error: { message: `You exceeded your current quota (key ${req.headers.authorization}).`, type: 'insufficient_quota' } }));
        return;
      case 'outage':
        res.writeHead(500, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: { message: 'The server had an error.' } }));
        return;
      case 'slow':
        // Never answers: the caller's deadline has to end it.
        return;
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    state,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('speech through an upstream HTTP provider (OpenAI speech protocol)', () => {
  const TIMEOUT_MS = 1500;
  let upstream: Awaited<ReturnType<typeof startUpstream>>;
  let service: TestService;
  let token: string;
  let userId: string;
  const { lines: logLines, sink } = captureLines();

  beforeAll(async () => {
    upstream = await startUpstream();
    service = await startTestService({
      env: { TTS_PROVIDER: 'http', TTS_API_URL: `${upstream.url}/`, TTS_API_KEY: API_KEY, TTS_MODEL: 'tts-test-model', TTS_VOICES: 'alloy, nova', TTS_TIMEOUT_MS: String(TIMEOUT_MS) },
      logger: createLogger('trace', 'petsing', sink),
    });
    ({ token, id: userId } = await signInWebUser(service, 'upstream@example.com'));
  });
  beforeEach(() => {
    upstream.state.mode = 'ok';
    upstream.state.requests.length = 0;
  });
  afterAll(async () => {
    await service.stop();
    await upstream.close();
  });

  it('lists the configured upstream voices', async () => {
    const body = await json(fetch(`${service.baseUrl}/tts/voices`, { headers: { Authorization: `Bearer ${token}` } }));
    expect(body.voices).toEqual([
      { id: 'alloy', name: 'Alloy', language: 'mul', sample_url: `${service.baseUrl}/media/voices/alloy.mp3` },
      { id: 'nova', name: 'Nova', language: 'mul', sample_url: `${service.baseUrl}/media/voices/nova.mp3` },
    ]);
  });

  it('sends model, voice, input and the bearer key, and hosts the MP3 it gets back', async () => {
    const response = await tts(service, token, { text: ' Hello from upstream ', voice_id: 'nova' });
    expect(response.status).toBe(200);
    const body = await json(response);
    expect(body.voice_id).toBe('nova');
    expect(upstream.state.requests).toEqual([
      {
        method: 'POST',
        path: '/v1/audio/speech',
        authorization: `Bearer ${API_KEY}`,
        contentType: 'application/json',
        body: { model: 'tts-test-model', input: 'Hello from upstream', voice: 'nova', response_format: 'mp3' },
        closedEarly: false,
      },
    ]);
    const duration = await durationOf(await fetchMp3(body.audio_url));
    expect(duration).toBeGreaterThan(2.9);
    expect(duration).toBeLessThan(3.2);
    expect(await service.context.services.hostedAudio.findOwnedByUrl(userId, body.audio_url)).toMatchObject({ source: 'tts' });
  });

  it('pads a short answer to 2 seconds and cuts a long one under 30', async () => {
    upstream.state.mode = 'short';
    const short = await json(tts(service, token, { text: 'Hi', voice_id: 'alloy' }));
    const shortDuration = await durationOf(await fetchMp3(short.audio_url));
    expect(shortDuration).toBeGreaterThanOrEqual(2);
    expect(shortDuration).toBeLessThan(2.5);

    upstream.state.mode = 'long';
    const long = await json(tts(service, token, { text: 'A long story', voice_id: 'alloy' }));
    const longDuration = await durationOf(await fetchMp3(long.audio_url));
    expect(longDuration).toBeGreaterThan(29);
    expect(longDuration).toBeLessThanOrEqual(30);
    expect(long.duration_seconds).toBeLessThanOrEqual(30);
  });

  it('maps an exhausted upstream quota to 429 speech_quota_exhausted with its Retry-After', async () => {
    upstream.state.mode = 'quota';
    const before = (await hostedAudioRows(service, userId)).length;
    const response = await tts(service, token, { text: 'Hello', voice_id: 'alloy' });
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('17');
    const text = await response.text();
    expect(JSON.parse(text).error.code).toBe('speech_quota_exhausted');
    expect(text).not.toContain(API_KEY);
    expect(await hostedAudioRows(service, userId)).toHaveLength(before);
  });

  it('maps an upstream 500 to 503 speech_unavailable', async () => {
    upstream.state.mode = 'outage';
    const response = await tts(service, token, { text: 'Hello', voice_id: 'alloy' });
    expect(response.status).toBe(503);
    const text = await response.text();
    expect(JSON.parse(text).error.code).toBe('speech_unavailable');
    expect(text).not.toContain(API_KEY);
  });

  it('gives up on a slow upstream after TTS_TIMEOUT_MS with 503 and closes the request', async () => {
    upstream.state.mode = 'slow';
    const started = Date.now();
    const response = await tts(service, token, { text: 'Hello', voice_id: 'alloy' });
    const elapsed = Date.now() - started;
    expect(response.status).toBe(503);
    expect((await json(response)).error.code).toBe('speech_unavailable');
    expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT_MS - 100);
    expect(elapsed).toBeLessThan(TIMEOUT_MS + 5000);
    await vi.waitFor(() => expect(upstream.state.requests[0]?.closedEarly).toBe(true));
  });

  it('stops the upstream request when the caller hangs up', async () => {
    upstream.state.mode = 'slow';
    const started = Date.now();
    const hangUp = AbortSignal.timeout(200);
    await expect(fetch(`${service.baseUrl}/tts`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
      body: JSON.stringify({ text: 'Hello', voice_id: 'alloy' }),
      signal: hangUp,
    })).rejects.toThrow();
    await vi.waitFor(() => expect(upstream.state.requests[0]?.closedEarly).toBe(true), { timeout: TIMEOUT_MS });
    // Well before the deadline would have ended it.
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS - 500);
  });

  it('refuses a voice the upstream does not offer without calling it', async () => {
    const response = await tts(service, token, { text: 'Hello', voice_id: 'en-us-male' });
    expect(response.status).toBe(400);
    expect((await json(response)).error.code).toBe('unknown_voice');
    expect(upstream.state.requests).toHaveLength(0);
  });

  it('makes an upstream voice sample once, under voices/http/', async () => {
    const first = await fetchMp3(`${service.baseUrl}/media/voices/alloy.mp3`);
    const second = await fetchMp3(`${service.baseUrl}/media/voices/alloy.mp3`);
    expect(second.equals(first)).toBe(true);
    expect(upstream.state.requests).toHaveLength(1);
    expect(upstream.state.requests[0]!.body).toMatchObject({ voice: 'alloy', model: 'tts-test-model' });
    expect(await service.context.objectStore.exists('voices/http/alloy.mp3')).toBe(true);
  });

  it('never writes the API key to the logs', () => {
    expect(logLines.length).toBeGreaterThan(0);
    expect(logLines.join('\n')).not.toContain(API_KEY);
  });
});

describe('HttpSpeechProvider', () => {
  it('answers 503 when the upstream cannot be reached', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));

    const provider = new HttpSpeechProvider({ url: `http://127.0.0.1:${port}`, apiKey: API_KEY, model: 'm', voices: ['alloy'], timeoutMs: 2000 }, createLogger('silent'));
    const failure = await provider.synthesize({ text: 'Hello', voiceId: 'alloy', directory: scratch }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(AppError);
    expect((failure as AppError).code).toBe('speech_unavailable');
    expect((failure as AppError).status).toBe(503);
    expect((failure as AppError).message).not.toContain(API_KEY);
  });

  it('masks the key when the upstream echoes it in an error it logs', async () => {
    const upstream = await startUpstream();
    upstream.state.mode = 'quota';
    const { lines, sink } = captureLines();
    try {
      const provider = new HttpSpeechProvider({ url: upstream.url, apiKey: API_KEY, model: 'm', voices: ['alloy'], timeoutMs: 2000 }, createLogger('trace', 'test', sink));
      const failure = await provider.synthesize({ text: 'Hello', voiceId: 'alloy', directory: scratch }).catch((error: unknown) => error);
      expect((failure as AppError).code).toBe('speech_quota_exhausted');
      expect((failure as AppError).headers).toEqual({ 'Retry-After': '17' });
      expect(lines.join('\n')).toContain('insufficient_quota');
      expect(lines.join('\n')).toContain('[redacted]');
      expect(lines.join('\n')).not.toContain(API_KEY);
    } finally {
      await upstream.close();
    }
  });
});

describe('speech configuration', () => {
  it('defaults to espeak-ng and reads the upstream settings', () => {
    expect(loadControlPlaneConfig({}).env).toMatchObject({ TTS_PROVIDER: 'espeak', ESPEAK_PATH: 'espeak-ng', TTS_TIMEOUT_MS: 30_000 });
    const { env } = loadControlPlaneConfig({ TTS_PROVIDER: 'http', TTS_API_URL: 'https://tts.example.com', TTS_VOICES: ' alloy ,nova,,alloy' });
    expect(env).toMatchObject({ TTS_API_URL: 'https://tts.example.com', TTS_VOICES: ['alloy', 'nova'], TTS_MODEL: 'tts-1' });
  });

  it.each([
    [{ TTS_PROVIDER: 'http' }, 'TTS_API_URL'],
    [{ TTS_PROVIDER: 'cloud' }, 'TTS_PROVIDER'],
    [{ TTS_PROVIDER: 'http', TTS_API_URL: 'ftp://tts.example.com' }, 'TTS_API_URL'],
    [{ TTS_VOICES: 'alloy,../escape' }, 'TTS_VOICES'],
    [{ TTS_TIMEOUT_MS: '0' }, 'TTS_TIMEOUT_MS'],
  ])('refuses %o', (env, variable) => {
    expect(() => loadControlPlaneConfig(env)).toThrow(ConfigError);
    expect(() => loadControlPlaneConfig(env)).toThrow(new RegExp(variable));
  });
});

describe('rate limit of the web app expensive calls', () => {
  let service: TestService;
  afterAll(() => service?.stop());

  it('answers 429 with Retry-After once an account passes RATE_LIMIT_WEB_MEDIA_PER_MINUTE, per account', async () => {
    service = await startTestService({ env: { RATE_LIMIT_WEB_MEDIA_PER_MINUTE: '2' } });
    const first = await signInWebUser(service, 'limited@example.com');
    const second = await signInWebUser(service, 'unlimited@example.com');
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await tts(service, first.token, { text: 'x'.repeat(501), voice_id: 'en-us-male' })).status);
    expect(statuses).toEqual([400, 400, 429]);
    const limited = await tts(service, first.token, { text: 'x'.repeat(501), voice_id: 'en-us-male' });
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(limited.headers.get('ratelimit-policy')).toBe('"media";q=2;w=60');
    expect((await json(limited)).error.code).toBe('rate_limited');
    expect((await tts(service, second.token, { text: 'x'.repeat(501), voice_id: 'en-us-male' })).status).toBe(400);
  });
});
