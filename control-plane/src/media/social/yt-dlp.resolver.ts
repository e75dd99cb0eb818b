import { runProcess, type ProcessResult } from '@petsing/platform/tools';
import { z } from 'zod';
import { VideoResolveTimeoutError, VideoUnavailableError, type ResolvedVideo, type VideoPageResolver } from './video-page-resolver.ts';
import { withDeadline } from '../deadline.ts';

export interface YtDlpResolverOptions {
  /** The yt-dlp executable: a path, or a name looked up on PATH. */
  binary: string;
  timeoutMs: number;
}

/** A TikTok page's JSON is tens of kilobytes; the cap only stops a runaway process. */
const MAX_JSON_BYTES = 16 * 1024 * 1024;

const format = z.object({
  url: z.string().nullish(),
  protocol: z.string().nullish(),
  acodec: z.string().nullish(),
  http_headers: z.record(z.string(), z.unknown()).nullish(),
  cookies: z.string().nullish(),
});
type Format = z.infer<typeof format>;

const info = format.extend({
  _type: z.string().nullish(),
  title: z.string().nullish(),
  duration: z.number().nullish(),
  live_status: z.string().nullish(),
  requested_downloads: z.array(format).nullish(),
  requested_formats: z.array(format).nullish(),
});

/** RFC 9110 field names, and values without control characters (a CR/LF would split the request). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
const COOKIE_ATTRIBUTES = new Set(['domain', 'path', 'expires', 'max-age', 'secure', 'httponly', 'samesite', 'version', 'comment', 'port', 'discard']);

/**
 * Resolves pages with yt-dlp, which tracks the platforms' page formats and signatures far better than we
 * could. Runs it as a child process with an argument array (no shell), with `--` before the URL so no URL
 * is read as an option, and `--ignore-config` so no configuration file on the host can add options (such as
 * --exec) behind our back. Only metadata is fetched; the media itself is downloaded by our SSRF-safe fetcher.
 */
export class YtDlpResolver implements VideoPageResolver {
  constructor(private readonly options: YtDlpResolverOptions) {}

  async resolve(pageUrl: string, signal?: AbortSignal): Promise<ResolvedVideo> {
    const deadline = withDeadline(signal, this.options.timeoutMs);
    const args = ['--ignore-config', '--dump-single-json', '--no-playlist', '--no-warnings', '--skip-download', '-f', 'bestaudio/best', '--', pageUrl];
    let result: ProcessResult;
    try {
      result = await runProcess(this.options.binary, args, { signal: deadline.signal, maxStdoutBytes: MAX_JSON_BYTES });
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (deadline.timedOut()) throw new VideoResolveTimeoutError(this.options.timeoutMs);
      throw new Error(`Could not run yt-dlp (${this.options.binary}): ${(error as Error).message}`, { cause: error });
    }
    if (result.code !== 0) throw unavailableFrom(result.stderr);
    return parseYtDlpJson(result.stdout.toString('utf8'));
  }
}

/** yt-dlp's last `ERROR:` line says why; users get a plain sentence, logs get the line itself. */
function unavailableFrom(stderr: string): VideoUnavailableError {
  const detail = stderr.trim().split('\n').filter((line) => line.startsWith('ERROR:')).at(-1) ?? stderr.trim().split('\n').at(-1) ?? '';
  let message = 'The video is unavailable: it may have been removed, made private or restricted to some regions.';
  if (/private/i.test(detail)) message = 'The video is private.';
  else if (/unsupported url/i.test(detail)) message = 'The URL does not point to a single video.';
  return new VideoUnavailableError(message, { detail });
}

/** The media URL (and how to request it) from `yt-dlp --dump-single-json`. */
function parseYtDlpJson(output: string): ResolvedVideo {
  let parsed: z.infer<typeof info>;
  try {
    parsed = info.parse(JSON.parse(output));
  } catch (error) {
    throw new Error('yt-dlp printed JSON this service does not understand.', { cause: error });
  }
  if (parsed._type === 'playlist' || parsed._type === 'multi_video') throw new VideoUnavailableError('The URL does not point to a single video.');
  if (parsed.live_status === 'is_live' || parsed.live_status === 'is_upcoming') throw new VideoUnavailableError('Live streams have no soundtrack to extract.');

  // requested_downloads holds the format -f selected; requested_formats the parts of a merged selection
  // (video+audio), of which the one with audio matters; the top level repeats a single selection.
  const candidates = [...(parsed.requested_downloads ?? []), ...(parsed.requested_formats ?? []), parsed].filter(isDirectDownload);
  const chosen = candidates.find((candidate) => candidate.acodec !== 'none') ?? candidates[0];
  if (!chosen?.url) throw new VideoUnavailableError('The video has no downloadable file (it may be streamed only).');

  const httpHeaders = headersOf(chosen.http_headers ?? parsed.http_headers ?? {});
  const cookie = cookieHeader(chosen.cookies ?? parsed.cookies);
  if (cookie) httpHeaders.Cookie = cookie;
  return {
    mediaUrl: chosen.url,
    httpHeaders,
    ...(parsed.title ? { title: parsed.title } : {}),
    ...(parsed.duration && parsed.duration > 0 ? { durationSeconds: parsed.duration } : {}),
  };
}

/** A single file over HTTP(S); HLS/DASH manifests are not media the fetcher can take. */
function isDirectDownload(candidate: Format): boolean {
  if (!candidate.url || !/^https?:\/\//i.test(candidate.url)) return false;
  return !candidate.protocol || candidate.protocol === 'http' || candidate.protocol === 'https';
}

function headersOf(raw: Record<string, unknown>): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (typeof value === 'string' && HEADER_NAME.test(name) && HEADER_VALUE.test(value) && name.toLowerCase() !== 'cookie') headers[name] = value;
  }
  return headers;
}

/**
 * yt-dlp reports the cookies the media host needs (TikTok's CDN refuses requests without the page's
 * tt_chain_token) as Set-Cookie-like text, `name=value; Domain=...; Path=/; Secure; name2=...`, already
 * limited to the media URL; the Cookie header wants only the name=value pairs.
 */
function cookieHeader(cookies: string | null | undefined): string | undefined {
  if (!cookies) return undefined;
  const pairs = cookies
    .split(/;\s*/)
    .filter((part) => part.includes('=') && !COOKIE_ATTRIBUTES.has(part.slice(0, part.indexOf('=')).trim().toLowerCase()))
    .map((part) => part.trim());
  const header = pairs.join('; ');
  return header !== '' && HEADER_VALUE.test(header) ? header : undefined;
}
