import { SNIFF_BYTES, sniffContentType } from './content-sniffer.ts';
import type { AcceptKind } from './content-sniffer.ts';
import { withDeadline } from './deadline.ts';
import type { HostVetter, VetOptions, VettedHost } from './host-vetting.ts';
import { describeNetworkError, discard, openPinnedClient } from './pinned-connection.ts';
import { refused, unreachable, UrlRefusedError } from './url-refusal.ts';

/**
 * The GET of a user URL: every redirect hop vetted and pinned anew, deadlines for the whole download, the
 * connect and each stall, a byte limit checked per chunk, and the type proven from the leading bytes.
 */

export interface FetchUserUrlOptions extends VetOptions {
  maxBytes: number;
  accept: AcceptKind;
  /** Deadline for the whole download, redirects and DNS included; default 30 s. */
  timeoutMs?: number;
  /** Deadline for TCP connect plus TLS handshake, per hop; default 5 s. */
  connectTimeoutMs?: number;
  /** Longest wait for response headers or between two body chunks; default 10 s. */
  stallTimeoutMs?: number;
  /** Default 3. */
  maxRedirects?: number;
  /**
   * Extra request headers, e.g. the User-Agent, Referer and cookies a page resolver says the media host
   * expects. Sent only to the origin of the URL asked for: a redirect to another origin drops them, as
   * browsers drop credentials. Headers the fetcher owns (Host, Accept-Encoding, Range, hop-by-hop) are ignored.
   */
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

export interface FetchedUrl {
  body: Buffer;
  /** Proven by the leading bytes, never copied from Content-Type. */
  contentType: string;
  /** The URL that answered, after redirects. */
  finalUrl: string;
  /** The vetted address the final response came from, for logs. */
  address: string;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** Set by the fetcher alone: they decide which host answers and that every body byte arrives uncompressed and counted. */
const FETCHER_OWNED_HEADERS = new Set([
  'host', 'accept-encoding', 'range', 'connection', 'keep-alive', 'proxy-connection', 'proxy-authorization',
  'te', 'trailer', 'transfer-encoding', 'upgrade', 'content-length', 'expect',
]);

const acceptHeader: Record<AcceptKind, string> = {
  image: 'image/jpeg, image/png, image/webp, image/heic, image/heif;q=0.9, */*;q=0.1',
  media: 'video/*, audio/*;q=0.9, */*;q=0.1',
};

type Hop = { kind: 'redirect'; location: string } | { kind: 'done'; result: FetchedUrl };

/** The download function of a fetcher, over its vetter and TLS trust anchors. */
export function createUrlDownloader(
  vetter: HostVetter,
  tlsCa: string | Buffer | undefined,
): (input: string, options: FetchUserUrlOptions) => Promise<FetchedUrl> {
  return async function fetchUserUrl(input, options) {
    const timeoutMs = options.timeoutMs ?? 30_000;
    const connectTimeoutMs = Math.min(options.connectTimeoutMs ?? 5000, timeoutMs);
    const stallTimeoutMs = Math.min(options.stallTimeoutMs ?? 10_000, timeoutMs);
    const maxRedirects = options.maxRedirects ?? 3;
    const deadline = withDeadline(options.signal, timeoutMs);
    const signal = deadline.signal;

    let target = vetter.vetUrl(input, options);
    const origin = target.url.origin;
    try {
      for (let redirects = 0; ; redirects += 1) {
        const host = await vetter.resolveVetted(target, signal);
        const extraHeaders = host.url.origin === origin ? options.headers : undefined;
        const hop = await requestOnce(host, options, { signal, connectTimeoutMs, stallTimeoutMs, extraHeaders, tlsCa });
        if (hop.kind === 'done') return hop.result;

        if (redirects >= maxRedirects) throw unreachable('too_many_redirects', `The URL redirected more than ${maxRedirects} times.`);
        let next: URL;
        try {
          next = new URL(hop.location, host.url);
        } catch {
          throw unreachable('bad_redirect', 'The URL redirected to an address that could not be parsed.');
        }
        if (host.url.protocol === 'https:' && next.protocol !== 'https:') {
          throw refused('scheme_downgrade', 'The URL redirected away from https.');
        }
        target = vetter.vetUrl(next.href, options);
      }
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason;
      if (error instanceof UrlRefusedError) throw error;
      if (deadline.timedOut()) throw unreachable('timeout', `The download did not finish within ${timeoutMs / 1000} s.`, error);
      const { reason, detail } = describeNetworkError(error);
      throw unreachable(reason, `The URL could not be downloaded: ${detail}.`, error);
    }
  };
}

async function requestOnce(
  host: VettedHost,
  options: FetchUserUrlOptions,
  limits: {
    signal: AbortSignal;
    connectTimeoutMs: number;
    stallTimeoutMs: number;
    extraHeaders: Record<string, string> | undefined;
    tlsCa: string | Buffer | undefined;
  },
): Promise<Hop> {
  const requestHeaders: Record<string, string> = { accept: acceptHeader[options.accept], 'user-agent': 'petsing-url-fetcher/1' };
  for (const [name, value] of Object.entries(limits.extraHeaders ?? {})) {
    if (!FETCHER_OWNED_HEADERS.has(name.toLowerCase())) requestHeaders[name.toLowerCase()] = value;
  }
  requestHeaders['accept-encoding'] = 'identity';
  const client = openPinnedClient(host, limits);
  try {
    const response = await client.request({
      method: 'GET',
      path: `${host.url.pathname}${host.url.search}`,
      headers: requestHeaders,
      signal: limits.signal,
    });
    const { statusCode, headers, body } = response;

    if (REDIRECT_STATUSES.has(statusCode)) {
      discard(body);
      const location = headers.location;
      if (typeof location !== 'string' || location === '') {
        throw unreachable('bad_redirect', `The URL answered HTTP ${statusCode} without a Location.`);
      }
      return { kind: 'redirect', location };
    }
    if (statusCode !== 200 && statusCode !== 203) {
      discard(body);
      throw unreachable('http_status', `The URL answered HTTP ${statusCode}; HTTP 200 is required.`);
    }

    const declared = headers['content-length'];
    if (typeof declared === 'string' && /^\d+$/.test(declared) && Number(declared) > options.maxBytes) {
      discard(body);
      throw tooLarge(options.maxBytes);
    }

    const chunks: Buffer[] = [];
    let received = 0;
    let contentType: string | null = null;
    for await (const chunk of body as AsyncIterable<Buffer>) {
      received += chunk.length;
      // Checked per chunk, before keeping it: Content-Length may be absent or a lie.
      if (received > options.maxBytes) throw tooLarge(options.maxBytes);
      chunks.push(chunk);
      if (contentType === null && received >= SNIFF_BYTES) {
        // Decide as soon as the signature is in, so a large HTML page is not downloaded to be refused.
        contentType = sniffContentType(Buffer.concat(chunks), options.accept) ?? unsupported(options.accept);
      }
    }
    const bytes = Buffer.concat(chunks);
    contentType ??= sniffContentType(bytes, options.accept) ?? unsupported(options.accept);
    return { kind: 'done', result: { body: bytes, contentType, finalUrl: host.url.href, address: host.pinned.address } };
  } finally {
    await client.destroy().catch(() => undefined);
  }
}

function tooLarge(maxBytes: number): UrlRefusedError {
  const limit = maxBytes >= 1024 * 1024 ? `${(maxBytes / (1024 * 1024)).toFixed(maxBytes % (1024 * 1024) === 0 ? 0 : 1)} MB` : `${maxBytes} bytes`;
  return new UrlRefusedError('image_url_too_large', 'too_large', `The file at the URL is larger than ${limit}.`, {
    hint: `Send a file of at most ${limit}.`,
  });
}

function unsupported(accept: AcceptKind): never {
  throw new UrlRefusedError(
    'image_url_unsupported_type',
    'unsupported_type',
    accept === 'image'
      ? 'The file at the URL is not a JPEG, PNG, WebP or HEIC image.'
      : 'The file at the URL is not an MP4, MOV, WebM, Matroska, MP3, WAV, AAC or Ogg file.',
  );
}
