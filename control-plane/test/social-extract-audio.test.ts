import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import type { IncomingHttpHeaders } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { classifyAddress } from '../src/media/address-policy.ts';
import { createUserUrlFetcher } from '../src/media/safe-fetch.ts';
import { VideoUnavailableError, type ResolvedVideo, type VideoPageResolver } from '../src/media/social/video-page-resolver.ts';
import { loadDevIdentityKeys, mintDevIdToken } from '../src/services/dev-identity.ts';
import { json } from '../../test/support/http.ts';
import { startTestService, type TestService } from '../../test/support/test-service.ts';

const run = promisify(execFile);

/** Made-up CDN names under a public-looking domain; the test fetcher maps them to the local fixture server. */
const CDN = 'v16-webapp.tiktokcdn-fixture.com';
const OTHER_CDN = 'v19.tiktokcdn-fixture.com';
const COOKIE = 'tt_chain_token=fixture-token';

type Request = { host: string; path: string; headers: IncomingHttpHeaders };

/**
 * The platform's CDN: serves generated media over TLS. Like TikTok's, it refuses the song without the
 * page's cookie and Referer, which the resolver reports and the fetcher must pass on.
 */
async function startCdn(files: Record<string, Buffer>) {
  const requests: Request[] = [];
  const server: Server = createServer({ key: files.key!, cert: files.cert! }, (req, res) => {
    const host = (req.headers.host ?? '').split(':')[0]!;
    const path = req.url ?? '';
    requests.push({ host, path, headers: req.headers });
    const send = (body: Buffer) => res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': body.length }).end(body);
    if (path === '/song.mp4') {
      if (req.headers.cookie !== COOKIE || req.headers.referer !== 'https://www.tiktok.com/') res.writeHead(403).end('forbidden');
      else send(files.long!);
    } else if (path === '/open/song.mp4') send(files.long!);
    else if (path === '/silent.mp4') send(files.silent!);
    else if (path === '/short.mp4') send(files.short!);
    else if (path === '/huge.mp4') send(files.huge!);
    else if (path === '/hop') res.writeHead(302, { location: `https://${OTHER_CDN}:${port()}/open/song.mp4` }).end();
    else res.writeHead(404).end('not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = () => (server.address() as AddressInfo).port;
  return {
    url: (path: string, host = CDN) => `https://${host}:${port()}${path}`,
    port: port(),
    requests,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** Stands in for yt-dlp: maps page URLs to media; records every page it was asked about. */
function fakeResolver(pages: Record<string, ResolvedVideo | 'unavailable'>): VideoPageResolver & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    resolve: async (pageUrl) => {
      calls.push(pageUrl);
      const answer = pages[pageUrl];
      if (!answer) throw new Error(`The test resolver knows no page ${pageUrl}`);
      if (answer === 'unavailable') throw new VideoUnavailableError('The video is private.', { detail: 'ERROR: [TikTok] 1: This video is private' });
      return answer;
    },
  };
}

const video = (id: string) => `https://www.tiktok.com/@fixture/video/${id}`;

let scratch = '';
let cdn: Awaited<ReturnType<typeof startCdn>>;
let pages: Record<string, ResolvedVideo | 'unavailable'>;
let resolver: ReturnType<typeof fakeResolver>;
let service: TestService;
let token = '';

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'petsing-social-test-'));
  const at = (name: string) => join(scratch, name);
  const tone = ['-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=44100'];
  const picture = ['-f', 'lavfi', '-i', 'testsrc=size=64x64:rate=5'];
  const encode = ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p'];
  await Promise.all([
    // 40 s: longer than a video, kept whole (a video sings its best 30 s).
    run('ffmpeg', ['-v', 'error', '-y', ...picture, ...tone, '-t', '40', ...encode, '-c:a', 'aac', '-b:a', '64k', at('long.mp4')]),
    run('ffmpeg', ['-v', 'error', '-y', ...picture, '-t', '5', ...encode, at('silent.mp4')]),
    run('ffmpeg', ['-v', 'error', '-y', ...picture, ...tone, '-t', '1', ...encode, '-c:a', 'aac', at('short.mp4')]),
    run('openssl', [
      'req', '-x509', '-nodes', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-keyout', at('key.pem'), '-out', at('cert.pem'),
      '-days', '2', '-subj', `/CN=${CDN}`, '-addext', 'subjectAltName=DNS:*.tiktokcdn-fixture.com',
    ]),
  ]);
  const long = await readFile(at('long.mp4'));
  // An MP4 signature followed by 2 MB of padding: above the 1 MB cap this suite configures.
  const huge = Buffer.concat([long.subarray(0, 64), Buffer.alloc(2 * 1024 * 1024)]);
  const cert = await readFile(at('cert.pem'));
  cdn = await startCdn({ long, huge, silent: await readFile(at('silent.mp4')), short: await readFile(at('short.mp4')), key: await readFile(at('key.pem')), cert });

  pages = {
    [video('1')]: { mediaUrl: cdn.url('/song.mp4'), httpHeaders: { Referer: 'https://www.tiktok.com/', Cookie: COOKIE, 'User-Agent': 'Mozilla/5.0 fixture' }, title: 'Dancing cat', durationSeconds: 40 },
    [video('no-cookie')]: { mediaUrl: cdn.url('/song.mp4') },
    [video('hop')]: { mediaUrl: cdn.url('/hop'), httpHeaders: { Cookie: COOKIE } },
    [video('gone')]: 'unavailable',
    'https://vm.tiktok.com/ZMabc123/': 'unavailable',
    'https://m.tiktok.com/v/1.html': 'unavailable',
    'https://tiktok.com/@fixture/video/1': 'unavailable',
    [video('404')]: { mediaUrl: cdn.url('/deleted.mp4') },
    [video('silent')]: { mediaUrl: cdn.url('/silent.mp4') },
    [video('short')]: { mediaUrl: cdn.url('/short.mp4') },
    [video('short-known')]: { mediaUrl: cdn.url('/short.mp4'), durationSeconds: 1 },
    [video('huge')]: { mediaUrl: cdn.url('/huge.mp4') },
    [video('metadata')]: { mediaUrl: 'https://169.254.169.254/latest/meta-data/iam/' },
  };
  resolver = fakeResolver(pages);
  service = await startTestService({
    videoPageResolver: resolver,
    // Admits exactly the fixture CDN on loopback; every other name fails to resolve (no DNS query leaves the machine).
    userUrlFetcher: createUserUrlFetcher({
      addressPolicy: { checkAddress: (address) => (address === '127.0.0.1' ? null : classifyAddress(address)), extraPorts: [cdn.port] },
      resolver: async (host) => {
        if (host.endsWith('.tiktokcdn-fixture.com')) return [{ address: '127.0.0.1', family: 4 }];
        throw Object.assign(new Error(`queryA ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
      },
      tlsCa: cert,
    }),
    // One account makes every request of this file: the media rate limit is tested in speech.test.ts.
    env: { SOCIAL_MEDIA_MAX_BYTES: String(1024 * 1024), RATE_LIMIT_WEB_MEDIA_PER_MINUTE: '1000' },
  });
  token = await mintDevIdToken(await loadDevIdentityKeys(service.env.DATA_DIR!), { baseUrl: service.baseUrl, email: 'tiktok.fan@example.com' });
});

afterAll(async () => {
  await service?.stop();
  await cdn?.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

beforeEach(() => {
  resolver.calls.length = 0;
  cdn.requests.length = 0;
});

const extract = (body: unknown, options: { token?: string | null; baseUrl?: string } = {}) =>
  fetch(`${options.baseUrl ?? service.baseUrl}/social/extract-audio`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      ...(options.token === null ? {} : { Authorization: `Bearer ${options.token ?? token}` }),
    },
    body: JSON.stringify(body),
  });

async function expectError(response: Response, status: number, code: string) {
  expect(response.status).toBe(status);
  const body = await json(response);
  expect(body.error.code).toBe(code);
  expect(body.message).toBe(body.error.message);
  return body;
}

const soundtrackDirs = async () => (await readdir(tmpdir())).filter((name) => name.startsWith('petsing-soundtrack-'));

async function probe(path: string) {
  const { stdout } = await run('ffprobe', ['-v', 'error', '-show_entries', 'format=duration,format_name:stream=codec_type,codec_name', '-of', 'json', path]);
  return JSON.parse(stdout) as { format: { duration: string; format_name: string }; streams: { codec_type: string; codec_name: string }[] };
}

describe('POST /social/extract-audio', () => {
  it('stores the video\'s sound, longer than a video may last, whole as hosted MP3 for the caller', async () => {
    const tempBefore = await soundtrackDirs();
    const response = await extract({ url: video('1') });
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const body = await json(response);
    expect(body).toEqual({
      audio_url: expect.stringMatching(new RegExp(`^${service.baseUrl}/media/audio/[0-9a-f-]{36}\\.mp3$`)),
      duration_seconds: expect.any(Number),
      source_url: video('1'),
      title: 'Dancing cat',
    });
    expect(body.duration_seconds).toBeGreaterThan(39.9);
    expect(body.duration_seconds).toBeLessThanOrEqual(40.1);
    expect(resolver.calls).toEqual([video('1')]);

    // The CDN got the page's cookie, Referer and User-Agent (it refuses the song without them).
    expect(cdn.requests).toHaveLength(1);
    expect(cdn.requests[0]).toMatchObject({ host: CDN, path: '/song.mp4', headers: { cookie: COOKIE, referer: 'https://www.tiktok.com/', 'user-agent': 'Mozilla/5.0 fixture', 'accept-encoding': 'identity' } });

    // The hosted link serves an MP3 of the 40 s video's whole sound.
    const audio = await fetch(body.audio_url);
    expect(audio.status).toBe(200);
    expect(audio.headers.get('content-type')).toBe('audio/mpeg');
    const mp3 = join(scratch, 'extracted.mp3');
    await writeFile(mp3, Buffer.from(await audio.arrayBuffer()));
    const probed = await probe(mp3);
    expect(probed.format.format_name).toBe('mp3');
    expect(probed.streams.map((stream) => [stream.codec_type, stream.codec_name])).toEqual([['audio', 'mp3']]);
    expect(Number(probed.format.duration)).toBeGreaterThan(39.9);
    expect(Number(probed.format.duration)).toBeLessThan(40.2);

    const me = await json(fetch(`${service.baseUrl}/user/me`, { headers: { Authorization: `Bearer ${token}` } }));
    const id = /([0-9a-f-]{36})\.mp3$/.exec(body.audio_url)![1]!;
    const row = await service.database.db.selectFrom('hosted_audio').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ user_id: me.id, source: 'social', duration_ms: Math.round(body.duration_seconds * 1000) });
    expect(await service.context.services.hostedAudio.findOwnedByUrl(me.id, body.audio_url)).toMatchObject({ id });

    // The downloaded video and the intermediate files are gone.
    expect(await soundtrackDirs()).toEqual(tempBefore);
  });

  it.each([
    ['another site', 'https://evil.example/@fixture/video/1'],
    ['plain http', 'http://www.tiktok.com/@fixture/video/1'],
    ['a look-alike host', 'https://www.tiktok.com.evil.com/@fixture/video/1'],
    ['a host ending like the platform', 'https://eviltiktok.com/@fixture/video/1'],
    ['a subdomain not on the list', 'https://internal.tiktok.com/@fixture/video/1'],
    ['an IPv4 literal', 'https://142.250.74.46/@fixture/video/1'],
    ['an IPv6 literal', 'https://[::1]/@fixture/video/1'],
    ['the metadata address', 'https://169.254.169.254/latest/meta-data/'],
    ['user info', 'https://user:secret@www.tiktok.com/@fixture/video/1'],
    ['a parser-confusion lure', 'https://www.tiktok.com@evil.example/@fixture/video/1'],
    ['another port', 'https://www.tiktok.com:8443/@fixture/video/1'],
    ['a trailing-dot host', 'https://www.tiktok.com./@fixture/video/1'],
    ['a file URL', 'file:///etc/passwd'],
    ['not a URL', 'www.tiktok.com/@fixture/video/1'],
  ])('refuses %s with 400 before any network access', async (_name, url) => {
    const body = await expectError(await extract({ url }), 400, 'unsupported_video_url');
    expect(body.error.hint).toContain('TikTok');
    expect(resolver.calls).toEqual([]);
    expect(cdn.requests).toEqual([]);
  });

  it('passes the platform\'s other hosts, and the default port spelled out, to the resolver (normalized)', async () => {
    // These pages are "unavailable" to the test resolver: the 400 comes after the host check.
    for (const url of ['https://vm.tiktok.com/ZMabc123/', 'https://m.tiktok.com/v/1.html', 'https://TikTok.com:443/@fixture/video/1']) {
      await expectError(await extract({ url }), 400, 'video_unavailable');
    }
    expect(resolver.calls).toEqual(['https://vm.tiktok.com/ZMabc123/', 'https://m.tiktok.com/v/1.html', 'https://tiktok.com/@fixture/video/1']);
  });

  it.each([
    ['no url', {}],
    ['an empty url', { url: '' }],
    ['a url that is not a string', { url: 42 }],
  ])('answers 400 invalid_request for %s', async (_name, body) => {
    const error = await expectError(await extract(body), 400, 'invalid_request');
    expect(error.message).toContain('url');
    expect(resolver.calls).toEqual([]);
  });

  it('answers 400 video_unavailable when the platform says the video is unavailable', async () => {
    const body = await expectError(await extract({ url: video('gone') }), 400, 'video_unavailable');
    expect(body.message).toBe('The video is private.');
    expect(cdn.requests).toEqual([]);
  });

  it.each([
    ['answers 404', '404', /HTTP 404/],
    ['refuses a request without the page\'s cookie', 'no-cookie', /HTTP 403/],
  ])('answers 400 video_unavailable when the CDN %s', async (_name, id, pattern) => {
    const body = await expectError(await extract({ url: video(id) }), 400, 'video_unavailable');
    expect(body.message).toMatch(pattern);
    expect(body.message).not.toContain('forbidden');
  });

  it('does not carry the page\'s cookie across a redirect to another host', async () => {
    expect((await extract({ url: video('hop') })).status).toBe(200);
    expect(cdn.requests.map((request) => [request.host, request.path, request.headers.cookie])).toEqual([
      [CDN, '/hop', COOKIE],
      [OTHER_CDN, '/open/song.mp4', undefined],
    ]);
  });

  it('answers 400 no_soundtrack for a video without sound', async () => {
    await expectError(await extract({ url: video('silent') }), 400, 'no_soundtrack');
  });

  it('answers 400 soundtrack_too_short for sound under 2 s, measured or announced', async () => {
    const body = await expectError(await extract({ url: video('short') }), 400, 'soundtrack_too_short');
    expect(body.message).toMatch(/lasts 1\.\d s; a video needs at least 2 s/);
    expect(cdn.requests).toHaveLength(1);
    cdn.requests.length = 0;
    await expectError(await extract({ url: video('short-known') }), 400, 'soundtrack_too_short');
    expect(cdn.requests).toEqual([]);
  });

  it('answers 400 video_too_large above SOCIAL_MEDIA_MAX_BYTES', async () => {
    const body = await expectError(await extract({ url: video('huge') }), 400, 'video_too_large');
    expect(body.message).toContain('1 MB');
  });

  it('refuses a media URL on a metadata address', async () => {
    await expectError(await extract({ url: video('metadata') }), 400, 'image_url_refused');
    expect(cdn.requests).toEqual([]);
  });

  it('answers 401 without an ID token, before resolving anything', async () => {
    await expectError(await extract({ url: video('1') }, { token: null }), 401, 'unauthorized');
    await expectError(await extract({ url: video('1') }, { token: 'psk_live_not-an-id-token' }), 401, 'unauthorized');
    expect(resolver.calls).toEqual([]);
  });

  it('is documented in /openapi.json', async () => {
    const document = await json(fetch(`${service.baseUrl}/openapi.json`));
    const operation = document.paths['/social/extract-audio'].post;
    expect(operation.operationId).toBe('extractSocialAudio');
    expect(operation.security).toEqual([{ IdToken: [] }]);
    expect(Object.keys(operation.responses).sort()).toEqual(['200', '400', '401', '429', '503']);
    expect(document.components.schemas.ExtractedAudio.required.sort()).toEqual(['audio_url', 'duration_seconds', 'source_url', 'title']);
  });
});

describe('POST /social/extract-audio with the production fetcher', () => {
  let strict: TestService;
  let strictToken = '';

  beforeAll(async () => {
    // No userUrlFetcher: the default, strict address policy (and the system resolver, which these literals never reach).
    strict = await startTestService({
      videoPageResolver: fakeResolver({
        [video('1')]: { mediaUrl: 'https://127.0.0.1/open/song.mp4' },
        [video('2')]: { mediaUrl: 'https://10.0.0.5/song.mp4' },
        [video('3')]: { mediaUrl: 'https://[::ffff:169.254.169.254]/latest/meta-data/' },
      }),
    });
    strictToken = await mintDevIdToken(await loadDevIdentityKeys(strict.env.DATA_DIR!), { baseUrl: strict.baseUrl, email: 'strict@example.com' });
  });
  afterAll(async () => {
    await strict?.stop();
  });

  it.each([
    ['a loopback media URL', '1'],
    ['a private-network media URL', '2'],
    ['a metadata media URL in IPv6 dress', '3'],
  ])('refuses %s with 400 image_url_refused and never connects', async (_name, id) => {
    const body = await expectError(await extract({ url: video(id) }, { token: strictToken, baseUrl: strict.baseUrl }), 400, 'image_url_refused');
    expect(body.message).toContain('private, internal or reserved');
    expect(cdn.requests).toEqual([]);
  });
});
