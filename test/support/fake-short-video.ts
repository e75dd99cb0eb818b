import { execFile } from 'node:child_process';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The short video the platform's CDN stand-in serves: a tone with a still picture. */
export const SHORT_VIDEO = { title: 'Fixture: a cat sings', seconds: 6 };

/**
 * yt-dlp and a short-video platform's CDN, played by the test for POST /social/extract-audio: an executable that
 * answers `yt-dlp --dump-single-json` for any page with one MP4 (H.264 + AAC) on a local HTTP server, which serves
 * it. Point YTDLP_PATH at `ytDlpPath`; the service fetches the media from loopback only with DEV_ALLOW_LOCAL_URLS.
 * `pages()` lists the page URLs yt-dlp was asked about.
 */
export async function startFakeShortVideo(dir: string) {
  const video = join(dir, 'short-video.mp4');
  await run('ffmpeg', [
    '-nostdin', '-v', 'error', '-y',
    '-f', 'lavfi', '-i', `sine=frequency=330:duration=${SHORT_VIDEO.seconds}`,
    '-f', 'lavfi', '-i', `color=c=orange:s=64x64:d=${SHORT_VIDEO.seconds}`,
    '-shortest', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-c:a', 'aac', video,
  ]);
  const body = await readFile(video);
  const server = createServer((req, res) => {
    if (req.url !== '/media/short-video.mp4') return void res.writeHead(404).end('not found');
    res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': body.length }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const mediaUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/media/short-video.mp4`;
  const calls = join(dir, 'yt-dlp-pages.txt');
  const answer = JSON.stringify({ title: SHORT_VIDEO.title, duration: SHORT_VIDEO.seconds, url: mediaUrl, protocol: 'http', acodec: 'aac', http_headers: { Referer: 'https://www.tiktok.com/' } });
  const ytDlpPath = join(dir, 'yt-dlp');
  // The page URL is the last argument (after `--`); it is recorded, never fetched.
  await writeFile(ytDlpPath, `#!/bin/sh\nfor page; do :; done\nprintf '%s\\n' "$page" >> '${calls}'\nprintf '%s' '${answer}'\n`);
  await chmod(ytDlpPath, 0o755);
  return {
    ytDlpPath,
    pages: async () => (await readFile(calls, 'utf8').catch(() => '')).split('\n').filter(Boolean),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
