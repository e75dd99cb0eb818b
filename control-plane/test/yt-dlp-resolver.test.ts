import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VideoResolveTimeoutError, VideoUnavailableError } from '../src/media/social/video-page-resolver.ts';
import { YtDlpResolver } from '../src/media/social/yt-dlp.resolver.ts';

const page = (id: string) => `https://www.tiktok.com/@fixture/video/${id}`;
const UA = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36';

/** Canned `--dump-single-json` answers, shaped like yt-dlp's for TikTok (trimmed to the fields that matter). */
const answers: Record<string, unknown> = {
  // A single selected format: requested_downloads holds it, the top level repeats it.
  direct: {
    id: '7300000000000000001',
    title: 'Dancing cat',
    duration: 41.2,
    extractor: 'TikTok',
    url: 'https://v16-webapp-prime.tiktok.com/video/tos/top-level.mp4',
    http_headers: { 'User-Agent': UA, Referer: 'https://www.tiktok.com/' },
    requested_downloads: [
      {
        format_id: 'download',
        url: 'https://v16-webapp-prime.tiktok.com/video/tos/selected.mp4?mime_type=video_mp4',
        protocol: 'https',
        acodec: 'aac',
        vcodec: 'h264',
        http_headers: {
          'User-Agent': UA,
          Accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
          Referer: 'https://www.tiktok.com/',
          'X-Injected': 'a\r\nHost: evil.example',
          'Bad Name': 'x',
          Cookie: 'stale=1',
          'X-Number': 5,
        },
        cookies: 'tt_chain_token=abc123; Domain=.tiktok.com; Path=/; Secure; Expires=1900000000; ttwid=1%7Cxyz; Domain=.tiktok.com; Path=/; HttpOnly',
      },
    ],
  },
  // A merged selection: the audio-only part is the one to download.
  merged: {
    title: 'Merged',
    requested_formats: [
      { url: 'https://v16.tiktokcdn.com/video-only.mp4', protocol: 'https', acodec: 'none', vcodec: 'h264' },
      { url: 'https://v16.tiktokcdn.com/audio-only.m4a', protocol: 'https', acodec: 'aac', vcodec: 'none', http_headers: { Referer: 'https://www.tiktok.com/' } },
    ],
    requested_downloads: [{ format_id: 'video+audio', requested_formats: [] }],
  },
  topLevel: { url: 'https://v19.tiktokcdn-us.com/only-top-level.mp4', http_headers: { 'User-Agent': UA } },
  hls: { title: 'Stream', url: 'https://v16.tiktokcdn.com/playlist.m3u8', protocol: 'm3u8_native' },
  playlist: { _type: 'playlist', title: 'Profile', entries: [] },
  live: { live_status: 'is_live', url: 'https://pull.tiktokcdn.com/live.flv', protocol: 'https' },
  noUrl: { title: 'No formats', formats: [] },
};

let scratch = '';
let fakeYtDlp = '';

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'petsing-fake-yt-dlp-'));
  for (const [name, answer] of Object.entries(answers)) await writeFile(join(scratch, `${name}.json`), JSON.stringify(answer));
  await writeFile(join(scratch, 'garbage.json'), '{"url": ');
  fakeYtDlp = join(scratch, 'yt-dlp');
  // Stands in for yt-dlp: records its arguments one per line, then answers by the last path segment.
  await writeFile(
    fakeYtDlp,
    `#!/bin/sh
dir="$(dirname "$0")"
for arg in "$@"; do printf '%s\\n' "$arg"; done > "$dir/args"
for last in "$@"; do :; done
case "$last" in
  */unavailable) echo "ERROR: [TikTok] 7300000000000000009: Video unavailable" >&2; echo null; exit 1 ;;
  */private) echo "[TikTok] Extracting URL" >&2; echo "ERROR: [TikTok] 7300000000000000008: This video is private" >&2; exit 1 ;;
  */not-a-video) echo "ERROR: Unsupported URL: https://www.tiktok.com/@fixture" >&2; exit 1 ;;
  */slow) exec sleep 30 ;;
  *) cat "$dir/\${last##*/}.json" 2>/dev/null || cat "$dir/direct.json" ;;
esac
`,
  );
  await chmod(fakeYtDlp, 0o755);
});

afterAll(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

const resolver = (timeoutMs = 10_000) => new YtDlpResolver({ binary: fakeYtDlp, timeoutMs });

async function rejection(promise: Promise<unknown>): Promise<Error> {
  const outcome = await promise.then(() => undefined, (error: unknown) => error as Error);
  if (!outcome) throw new Error('expected a rejection');
  return outcome;
}

describe('yt-dlp resolver', () => {
  it('runs yt-dlp with a fixed argument array and the URL after --', async () => {
    await resolver().resolve(page('direct'));
    const args = (await readFile(join(scratch, 'args'), 'utf8')).split('\n').slice(0, -1);
    expect(args).toEqual([
      '--ignore-config', '--dump-single-json', '--no-playlist', '--no-warnings', '--skip-download', '-f', 'bestaudio/best', '--', page('direct'),
    ]);
  });

  it('passes a URL full of shell syntax as one inert argument', async () => {
    const marker = join(scratch, 'pwned');
    const hostile = `https://www.tiktok.com/@fixture/video/1?a=$(touch ${marker})&b=\`touch ${marker}\`;touch ${marker}`;
    await resolver().resolve(hostile);
    const args = (await readFile(join(scratch, 'args'), 'utf8')).split('\n').slice(0, -1);
    expect(args.at(-1)).toBe(hostile);
    await expect(stat(marker)).rejects.toThrow(/ENOENT/);
  });

  it('answers the selected download with its headers, cookies, title and duration', async () => {
    const resolved = await resolver().resolve(page('direct'));
    expect(resolved).toEqual({
      mediaUrl: 'https://v16-webapp-prime.tiktok.com/video/tos/selected.mp4?mime_type=video_mp4',
      httpHeaders: {
        'User-Agent': UA,
        Accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
        Referer: 'https://www.tiktok.com/',
        // Only name=value pairs; Domain/Path/Secure/Expires/HttpOnly are attributes. A Cookie header of
        // its own, a value with CR/LF, a bad name and a non-string value are all dropped.
        Cookie: 'tt_chain_token=abc123; ttwid=1%7Cxyz',
      },
      title: 'Dancing cat',
      durationSeconds: 41.2,
    });
  });

  it('picks the part with audio from a merged selection', async () => {
    const resolved = await resolver().resolve(page('merged'));
    expect(resolved.mediaUrl).toBe('https://v16.tiktokcdn.com/audio-only.m4a');
    expect(resolved.httpHeaders).toEqual({ Referer: 'https://www.tiktok.com/' });
    expect(resolved.durationSeconds).toBeUndefined();
  });

  it('falls back to the top-level URL', async () => {
    const resolved = await resolver().resolve(page('topLevel'));
    expect(resolved).toEqual({ mediaUrl: 'https://v19.tiktokcdn-us.com/only-top-level.mp4', httpHeaders: { 'User-Agent': UA } });
  });

  it.each([
    ['unavailable', 'The video is unavailable: it may have been removed, made private or restricted to some regions.', 'ERROR: [TikTok] 7300000000000000009: Video unavailable'],
    ['private', 'The video is private.', 'ERROR: [TikTok] 7300000000000000008: This video is private'],
    ['not-a-video', 'The URL does not point to a single video.', 'ERROR: Unsupported URL: https://www.tiktok.com/@fixture'],
  ])('maps a failing yt-dlp (%s) to VideoUnavailableError', async (scenario, message, detail) => {
    const error = await rejection(resolver().resolve(page(scenario)));
    expect(error).toBeInstanceOf(VideoUnavailableError);
    expect(error.message).toBe(message);
    expect((error as VideoUnavailableError).detail).toBe(detail);
  });

  it.each([
    ['hls', 'streamed only'],
    ['playlist', 'single video'],
    ['live', 'Live streams'],
    ['noUrl', 'no downloadable file'],
  ])('refuses what is no single downloadable file (%s)', async (scenario, fragment) => {
    const error = await rejection(resolver().resolve(page(scenario)));
    expect(error).toBeInstanceOf(VideoUnavailableError);
    expect(error.message).toContain(fragment);
  });

  it('treats output it cannot parse as its own failure, not the video\'s', async () => {
    const error = await rejection(resolver().resolve(page('garbage')));
    expect(error).not.toBeInstanceOf(VideoUnavailableError);
    expect(error.message).toContain('JSON');
  });

  it('stops yt-dlp at the deadline', async () => {
    const started = Date.now();
    const error = await rejection(resolver(500).resolve(page('slow')));
    expect(error).toBeInstanceOf(VideoResolveTimeoutError);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('stops yt-dlp when the caller aborts', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('client went away')), 200);
    const error = await rejection(resolver().resolve(page('slow'), controller.signal));
    expect(error.message).toBe('client went away');
  });

  it('reports a missing binary as a configuration failure', async () => {
    const error = await rejection(new YtDlpResolver({ binary: join(scratch, 'no-such-yt-dlp'), timeoutMs: 5000 }).resolve(page('direct')));
    expect(error).not.toBeInstanceOf(VideoUnavailableError);
    expect(error.message).toContain('Could not run yt-dlp');
  });
});
