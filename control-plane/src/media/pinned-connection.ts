import type { LookupFunction } from 'node:net';
import { Client } from 'undici';
import type { ResolvedAddress } from './host-resolvers.ts';
import type { VettedHost } from './host-vetting.ts';

/**
 * The connection to a vetted host: an undici Client whose `connect.lookup` answers with the pinned address,
 * so the socket goes to the one address we vetted while TLS still sends SNI and verifies the certificate
 * for the original host name; plus what the download and the POST both need around it.
 */

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

interface PinnedClientOptions {
  /** TCP connect plus TLS handshake. */
  connectTimeoutMs: number;
  /** Longest wait for response headers, and between two body chunks. */
  stallTimeoutMs: number;
  /** Extra trust anchors for TLS; the system roots otherwise. */
  tlsCa: string | Buffer | undefined;
}

/** One client per request: no pooled socket can be reused for another host or address. Destroy it when done. */
export function openPinnedClient(host: VettedHost, options: PinnedClientOptions): Client {
  return new Client(host.url.origin, {
    connect: {
      lookup: pinnedLookup(host.hostname, host.pinned),
      timeout: options.connectTimeoutMs,
      ...(options.tlsCa === undefined ? {} : { ca: options.tlsCa }),
    },
    headersTimeout: options.stallTimeoutMs,
    bodyTimeout: options.stallTimeoutMs,
  });
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** A reason label and a user-facing phrase for a failure of the connection itself; never the address or a body. */
export function describeNetworkError(error: unknown): { reason: string; detail: string } {
  const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : '';
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return { reason: 'connect_timeout', detail: 'the connection timed out' };
  if (TIMEOUT_CODES.has(code)) return { reason: 'stalled', detail: 'the server stopped sending data' };
  if (/CERT|SELF_SIGNED|TLS|SSL|UNABLE_TO_VERIFY|HOSTNAME_MISMATCH/.test(code)) {
    return { reason: 'tls', detail: 'its TLS certificate could not be verified' };
  }
  return { reason: 'network', detail: 'the connection failed' };
}

/** Drops a body we will not read. undici reports the destroy as an 'error' event, which must not go unheard. */
export function discard(body: NodeJS.ReadableStream & { destroy(): void }): void {
  body.on('error', () => undefined);
  body.destroy();
}
