import { lookup, Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { LookupFunction } from 'node:net';
import { Client } from 'undici';
import { classifyHostName, devLocalAddressPolicy, strictAddressPolicy } from './address-policy.ts';
import type { AddressPolicy } from './address-policy.ts';
import { SNIFF_BYTES, sniffContentType } from './content-sniffer.ts';
import type { AcceptKind } from './content-sniffer.ts';
import { withDeadline } from './deadline.ts';

/**
 * Downloads URLs that users hand us (image_url of POST /v1/videos, soundtrack media URLs) without letting
 * them point this service at itself, its network or its cloud's metadata endpoint (SSRF).
 *
 * Why undici and not fetch or node:https: undici's Client takes a `connect.lookup`, so the socket connects
 * to the one address we vetted while TLS still sends SNI and verifies the certificate for the original
 * host name; it separates connect, headers and body (stall) timeouts; and its `request` never follows
 * redirects or decompresses on its own, so every hop and every byte passes through this module. Version 6
 * because it is the line Node 22 bundles (security fixes for as long as that LTS lives) and, unlike 7+,
 * it supports every Node this repository declares (>= 20.12).
 */

export { devLocalAddressPolicy, strictAddressPolicy } from './address-policy.ts';
export type { AddressPolicy } from './address-policy.ts';
export type { AcceptKind } from './content-sniffer.ts';

export const IMAGE_URL_MAX_BYTES = 15 * 1024 * 1024;
export const MAX_URL_LENGTH = 2048;

export type UrlErrorCode = 'image_url_refused' | 'image_url_unreachable' | 'image_url_too_large' | 'image_url_unsupported_type';

const urlErrorHints: Record<UrlErrorCode, string> = {
  image_url_refused:
    'Use a public https:// URL on the default port, without user:password@, whose host name resolves only to public internet addresses.',
  image_url_unreachable:
    'Make sure the URL is publicly reachable without authentication, answers quickly with HTTP 200, and redirects at most 3 times.',
  image_url_too_large: 'Send a smaller file; the limits are listed in the documentation.',
  image_url_unsupported_type:
    'Send a JPEG, PNG, WebP or HEIC image (or, for soundtracks, MP4, MOV, WebM, MP3, WAV, AAC or Ogg); the type is read from the file content, not from its name or Content-Type.',
};

/**
 * A user-supplied URL that may not or could not be fetched. `code` is the stable API code; `reason` is a
 * finer internal label for logs and tests. Messages never quote response bodies or resolved addresses.
 */
export class UrlRefusedError extends Error {
  readonly status = 400;
  readonly hint: string;

  constructor(
    readonly code: UrlErrorCode,
    readonly reason: string,
    message: string,
    options: { hint?: string; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'UrlRefusedError';
    this.hint = options.hint ?? urlErrorHints[code];
  }
}

const refused = (reason: string, message: string) => new UrlRefusedError('image_url_refused', reason, message);
const unreachable = (reason: string, message: string, cause?: unknown) =>
  new UrlRefusedError('image_url_unreachable', reason, message, { cause });

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address it has. The signal fires at the caller's deadline. */
export type HostResolver = (hostname: string, signal?: AbortSignal) => Promise<ResolvedAddress[]>;

/**
 * c-ares (dns.Resolver) rather than dns.lookup: lookup runs getaddrinfo on libuv's four-thread pool, so a
 * user pointing us at slow name servers could stall file and crypto work process-wide; c-ares is
 * asynchronous, has its own timeout and can be cancelled.
 */
export const systemResolver: HostResolver = async (hostname, signal) => {
  const resolver = new Resolver({ timeout: 3000, tries: 2 });
  const cancel = () => resolver.cancel();
  signal?.addEventListener('abort', cancel, { once: true });
  try {
    const [v4, v6] = await Promise.allSettled([resolver.resolve4(hostname), resolver.resolve6(hostname)]);
    const addresses: ResolvedAddress[] = [
      ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 as const })) : []),
      ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 as const })) : []),
    ];
    if (addresses.length === 0 && v4.status === 'rejected') throw v4.reason;
    return addresses;
  } finally {
    signal?.removeEventListener('abort', cancel);
  }
};

/**
 * The operating system's lookup (getaddrinfo, which reads /etc/hosts), for DEV_ALLOW_LOCAL_URLS only: names
 * such as localhost are not in DNS. Production keeps systemResolver for the reasons given there.
 */
export const hostsFileResolver: HostResolver = async (hostname) =>
  (await lookup(hostname, { all: true })).map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));

export interface VettedUrl {
  url: URL;
  /** Host name without IPv6 brackets. */
  hostname: string;
  /** Set when the URL names an IP address rather than a host name. */
  literal: ResolvedAddress | null;
}

export interface VettedHost extends VettedUrl {
  /** Every address the host resolved to; all passed the policy. */
  addresses: ResolvedAddress[];
  /** The address the connection will be made to, and only to. */
  pinned: ResolvedAddress;
}

export interface VetOptions {
  /** Development only: also allow http:// on port 80. */
  allowHttp?: boolean;
}

export interface VetHostOptions extends VetOptions {
  /** Deadline for name resolution; default 5 s. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

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

export interface UserUrlFetcherOptions {
  /** Default strictAddressPolicy; only tests pass anything else. */
  addressPolicy?: AddressPolicy;
  /** Default systemResolver. Harmless to replace: every answer still goes through the address policy. */
  resolver?: HostResolver;
  /** Extra trust anchors for TLS (tests with a self-signed fixture); the system roots otherwise. */
  tlsCa?: string | Buffer;
}

export interface PostUserUrlOptions {
  body: string;
  headers: Record<string, string>;
  /** Deadline for the whole exchange, DNS included. */
  timeoutMs: number;
  /** At most this many bytes of the answer are read and kept. */
  maxResponseBytes: number;
}

export interface PostedUrl {
  statusCode: number;
  /** The first maxResponseBytes of the answer, as UTF-8. */
  responseSnippet: string;
}

export interface UserUrlFetcher {
  vetUrl(url: string, options?: VetOptions): VettedUrl;
  vetHost(url: string | VettedUrl, options?: VetHostOptions): Promise<VettedHost>;
  fetch(url: string, options: FetchUserUrlOptions): Promise<FetchedUrl>;
  /**
   * POSTs to a user URL (webhook deliveries) under the same rules as fetch, names resolved and vetted now;
   * redirects are not followed (a 3xx is an answer like any other).
   */
  post(url: string, options: PostUserUrlOptions): Promise<PostedUrl>;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** Set by the fetcher alone: they decide which host answers and that every body byte arrives uncompressed and counted. */
const FETCHER_OWNED_HEADERS = new Set([
  'host', 'accept-encoding', 'range', 'connection', 'keep-alive', 'proxy-connection', 'proxy-authorization',
  'te', 'trailer', 'transfer-encoding', 'upgrade', 'content-length', 'expect',
]);

const acceptHeader: Record<AcceptKind, string> = {
  image: 'image/jpeg, image/png, image/webp, image/heic, image/heif;q=0.9, */*;q=0.1',
  media: 'video/*, audio/*;q=0.9, */*;q=0.1',
};

function raceSignal<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * A lookup that answers with the vetted address whatever the name, so nothing between our check and the
 * connect (a second DNS answer, a rebinding name server) can change where the socket goes.
 */
function pinnedLookup(expectedHostname: string, pinned: ResolvedAddress): LookupFunction {
  return (hostname, options, callback) => {
    if (hostname.toLowerCase() !== expectedHostname) {
      callback(Object.assign(new Error('Lookup for a host that was not vetted.'), { code: 'ENOTFOUND' }), '', 0);
      return;
    }
    if (options.all) callback(null, [{ address: pinned.address, family: pinned.family }]);
    else callback(null, pinned.address, pinned.family);
  };
}

function describeNetworkError(error: unknown): { reason: string; detail: string } {
  const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : '';
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return { reason: 'connect_timeout', detail: 'the connection timed out' };
  if (TIMEOUT_CODES.has(code)) return { reason: 'stalled', detail: 'the server stopped sending data' };
  if (/CERT|SELF_SIGNED|TLS|SSL|UNABLE_TO_VERIFY|HOSTNAME_MISMATCH/.test(code)) {
    return { reason: 'tls', detail: 'its TLS certificate could not be verified' };
  }
  return { reason: 'network', detail: 'the connection failed' };
}

export function createUserUrlFetcher(fetcherOptions: UserUrlFetcherOptions = {}): UserUrlFetcher {
  const policy = fetcherOptions.addressPolicy ?? strictAddressPolicy;
  const resolver = fetcherOptions.resolver ?? systemResolver;
  const tlsCa = fetcherOptions.tlsCa;

  function checkAddress(address: string): void {
    const refusal = policy.checkAddress(address);
    if (refusal !== null) {
      throw refused(`address_${refusal}`, 'The URL points to a private, internal or reserved network address.');
    }
  }

  function vetUrl(input: string, options: VetOptions = {}): VettedUrl {
    if (typeof input !== 'string' || input.length > MAX_URL_LENGTH) {
      throw refused('too_long', `The URL must be a string of at most ${MAX_URL_LENGTH} characters.`);
    }
    let url: URL;
    try {
      url = new URL(input);
    } catch {
      throw refused('malformed', 'The URL could not be parsed.');
    }
    if (url.href.length > MAX_URL_LENGTH) {
      throw refused('too_long', `The URL must be a string of at most ${MAX_URL_LENGTH} characters.`);
    }
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && (options.allowHttp === true || policy.allowHttp === true))) {
      throw refused('scheme', 'Only https:// URLs are accepted.');
    }
    // Credentials would go to whoever the host is, and "good.com@evil" is a classic parser-confusion lure.
    if (url.username !== '' || url.password !== '') {
      throw refused('userinfo', 'URLs with a user name or password (user@host) are refused.');
    }
    const defaultPort = url.protocol === 'https:' ? 443 : 80;
    const port = url.port === '' ? defaultPort : Number(url.port);
    if (port !== defaultPort && policy.anyPort !== true && !policy.extraPorts.includes(port)) {
      throw refused('port', `Only the default port (${defaultPort}) is accepted.`);
    }

    // The WHATWG parser has already turned decimal, octal, hex and shortened IPv4 forms into dotted
    // quads and compressed IPv6, so the checks below see each address in exactly one spelling, the same
    // one the connection will use.
    const { hostname } = url;
    if (hostname.startsWith('[')) {
      const address = hostname.slice(1, -1);
      checkAddress(address);
      return { url, hostname: address, literal: { address, family: 6 } };
    }
    if (isIP(hostname) === 4) {
      checkAddress(hostname);
      return { url, hostname, literal: { address: hostname, family: 4 } };
    }
    const nameRefusal = (policy.checkHostName ?? classifyHostName)(hostname);
    if (nameRefusal !== null) {
      throw refused(`host_${nameRefusal}`, 'The URL names a local, internal or metadata host.');
    }
    return { url, hostname, literal: null };
  }

  async function resolveVetted(vetted: VettedUrl, signal: AbortSignal): Promise<VettedHost> {
    if (vetted.literal) return { ...vetted, addresses: [vetted.literal], pinned: vetted.literal };
    let answers: ResolvedAddress[];
    try {
      answers = await raceSignal(resolver(vetted.hostname, signal), signal);
    } catch (error) {
      if (signal.aborted) throw unreachable('timeout', 'Resolving the URL host name took too long.', error);
      throw unreachable('dns', 'The URL host name could not be resolved.', error);
    }
    if (answers.length === 0) throw unreachable('dns_no_address', 'The URL host name has no addresses.');
    const addresses: ResolvedAddress[] = [];
    for (const answer of answers) {
      const family = isIP(answer.address);
      if (family !== 4 && family !== 6) throw unreachable('dns_bad_answer', 'The URL host name resolved to something that is not an address.');
      // One refused address refuses the host: a name that also points inward is hostile, and the caller
      // cannot tell which of the addresses a later connection would pick.
      checkAddress(answer.address);
      addresses.push({ address: answer.address, family });
    }
    const pinned = addresses.find((candidate) => candidate.family === 4) ?? addresses[0];
    if (!pinned) throw unreachable('dns_no_address', 'The URL host name has no addresses.');
    return { ...vetted, addresses, pinned };
  }

  async function vetHost(input: string | VettedUrl, options: VetHostOptions = {}): Promise<VettedHost> {
    const vetted = typeof input === 'string' ? vetUrl(input, options) : input;
    return resolveVetted(vetted, withDeadline(options.signal, options.timeoutMs ?? 5000).signal);
  }

  async function fetchUserUrl(input: string, options: FetchUserUrlOptions): Promise<FetchedUrl> {
    const timeoutMs = options.timeoutMs ?? 30_000;
    const connectTimeoutMs = Math.min(options.connectTimeoutMs ?? 5000, timeoutMs);
    const stallTimeoutMs = Math.min(options.stallTimeoutMs ?? 10_000, timeoutMs);
    const maxRedirects = options.maxRedirects ?? 3;
    const deadline = withDeadline(options.signal, timeoutMs);
    const signal = deadline.signal;

    let target = vetUrl(input, options);
    const origin = target.url.origin;
    try {
      for (let redirects = 0; ; redirects += 1) {
        const host = await resolveVetted(target, signal);
        const extraHeaders = host.url.origin === origin ? options.headers : undefined;
        const hop = await requestOnce(host, options, { signal, connectTimeoutMs, stallTimeoutMs, extraHeaders });
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
        target = vetUrl(next.href, options);
      }
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason;
      if (error instanceof UrlRefusedError) throw error;
      if (deadline.timedOut()) throw unreachable('timeout', `The download did not finish within ${timeoutMs / 1000} s.`, error);
      const { reason, detail } = describeNetworkError(error);
      throw unreachable(reason, `The URL could not be downloaded: ${detail}.`, error);
    }
  }

  type Hop = { kind: 'redirect'; location: string } | { kind: 'done'; result: FetchedUrl };

  async function requestOnce(
    host: VettedHost,
    options: FetchUserUrlOptions,
    limits: { signal: AbortSignal; connectTimeoutMs: number; stallTimeoutMs: number; extraHeaders: Record<string, string> | undefined },
  ): Promise<Hop> {
    const requestHeaders: Record<string, string> = { accept: acceptHeader[options.accept], 'user-agent': 'petsing-url-fetcher/1' };
    for (const [name, value] of Object.entries(limits.extraHeaders ?? {})) {
      if (!FETCHER_OWNED_HEADERS.has(name.toLowerCase())) requestHeaders[name.toLowerCase()] = value;
    }
    requestHeaders['accept-encoding'] = 'identity';
    // One client per hop: no pooled socket can be reused for another host or address.
    const client = new Client(host.url.origin, {
      connect: {
        lookup: pinnedLookup(host.hostname, host.pinned),
        timeout: limits.connectTimeoutMs,
        ...(tlsCa === undefined ? {} : { ca: tlsCa }),
      },
      headersTimeout: limits.stallTimeoutMs,
      bodyTimeout: limits.stallTimeoutMs,
    });
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

  async function postUserUrl(input: string, options: PostUserUrlOptions): Promise<PostedUrl> {
    const deadline = withDeadline(undefined, options.timeoutMs);
    const host = await resolveVetted(vetUrl(input), deadline.signal);
    const client = new Client(host.url.origin, {
      connect: { lookup: pinnedLookup(host.hostname, host.pinned), timeout: options.timeoutMs, ...(tlsCa === undefined ? {} : { ca: tlsCa }) },
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });
    try {
      const { statusCode, body } = await client.request({
        method: 'POST',
        path: `${host.url.pathname}${host.url.search}`,
        headers: { ...options.headers, 'accept-encoding': 'identity' },
        body: options.body,
        signal: deadline.signal,
      });
      const chunks: Buffer[] = [];
      let received = 0;
      for await (const chunk of body as AsyncIterable<Buffer>) {
        chunks.push(chunk.subarray(0, options.maxResponseBytes - received));
        received += Math.min(chunk.length, options.maxResponseBytes - received);
        if (received >= options.maxResponseBytes) break;
      }
      discard(body);
      return { statusCode, responseSnippet: Buffer.concat(chunks).toString('utf8') };
    } catch (error) {
      if (error instanceof UrlRefusedError) throw error;
      if (deadline.timedOut()) throw unreachable('timeout', `The URL did not answer within ${options.timeoutMs / 1000} s.`, error);
      const { reason, detail } = describeNetworkError(error);
      throw unreachable(reason, `The URL could not be reached: ${detail}.`, error);
    } finally {
      await client.destroy().catch(() => undefined);
    }
  }

  return { vetUrl, vetHost, fetch: fetchUserUrl, post: postUserUrl };
}

/** Drops a body we will not read. undici reports the destroy as an 'error' event, which must not go unheard. */
function discard(body: NodeJS.ReadableStream & { destroy(): void }): void {
  body.on('error', () => undefined);
  body.destroy();
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

/** The fetcher of every user URL the service follows: strict, or the development policy with DEV_ALLOW_LOCAL_URLS. */
export function createConfiguredUserUrlFetcher(devAllowLocalUrls: boolean): UserUrlFetcher {
  return createUserUrlFetcher(devAllowLocalUrls ? { addressPolicy: devLocalAddressPolicy, resolver: hostsFileResolver } : {});
}

const defaultFetcher = createUserUrlFetcher();

/** Every check that needs no network: scheme, credentials, port, length, literal addresses, host names. */
export const vetUserUrl = (url: string, options?: VetOptions): VettedUrl => defaultFetcher.vetUrl(url, options);

/** vetUserUrl plus DNS: every address the host resolves to must be public. */
export const vetUserUrlHost = (url: string, options?: VetHostOptions): Promise<VettedHost> => defaultFetcher.vetHost(url, options);

/** Downloads a user-supplied URL under the strict policy; see createUserUrlFetcher for the pieces. */
export const fetchUserUrl = (url: string, options: FetchUserUrlOptions): Promise<FetchedUrl> => defaultFetcher.fetch(url, options);
