import { devLocalAddressPolicy, strictAddressPolicy } from './address-policy.ts';
import type { AddressPolicy } from './address-policy.ts';
import { hostsFileResolver, systemResolver } from './host-resolvers.ts';
import type { HostResolver } from './host-resolvers.ts';
import { createHostVetter } from './host-vetting.ts';
import type { VetHostOptions, VetOptions, VettedHost, VettedUrl } from './host-vetting.ts';
import { createUrlDownloader } from './url-download.ts';
import type { FetchedUrl, FetchUserUrlOptions } from './url-download.ts';
import { createUrlPoster } from './url-post.ts';
import type { PostedUrl, PostUserUrlOptions } from './url-post.ts';

/**
 * Downloads URLs that users hand us (image_url of POST /v1/videos, soundtrack media URLs) without letting
 * them point this service at itself, its network or its cloud's metadata endpoint (SSRF).
 *
 * The pieces, one idea each: address-policy.ts (which addresses and names may be contacted),
 * host-resolvers.ts (names to addresses), host-vetting.ts (a URL's checks, DNS, the pinned address),
 * pinned-connection.ts (a socket to that address only), url-download.ts (GET with redirects and limits),
 * url-post.ts (the webhook POST), url-refusal.ts (the one error they all throw). This module assembles them.
 *
 * Why undici and not fetch or node:https: undici's Client takes a `connect.lookup`, so the socket connects
 * to the one address we vetted while TLS still sends SNI and verifies the certificate for the original
 * host name; it separates connect, headers and body (stall) timeouts; and its `request` never follows
 * redirects or decompresses on its own, so every hop and every byte passes through these modules. Version 6
 * because it is the line Node 22 bundles (security fixes for as long as that LTS lives) and, unlike 7+,
 * it supports every Node this repository declares (>= 20.12).
 */

export interface UserUrlFetcherOptions {
  /** Default strictAddressPolicy; only tests pass anything else. */
  addressPolicy?: AddressPolicy;
  /** Default systemResolver. Harmless to replace: every answer still goes through the address policy. */
  resolver?: HostResolver;
  /** Extra trust anchors for TLS (tests with a self-signed fixture); the system roots otherwise. */
  tlsCa?: string | Buffer;
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

export function createUserUrlFetcher(fetcherOptions: UserUrlFetcherOptions = {}): UserUrlFetcher {
  const vetter = createHostVetter(fetcherOptions.addressPolicy ?? strictAddressPolicy, fetcherOptions.resolver ?? systemResolver);
  return {
    vetUrl: vetter.vetUrl,
    vetHost: vetter.vetHost,
    fetch: createUrlDownloader(vetter, fetcherOptions.tlsCa),
    post: createUrlPoster(vetter, fetcherOptions.tlsCa),
  };
}

/** The fetcher of every user URL the service follows: strict, or the development policy with DEV_ALLOW_LOCAL_URLS. */
export function createConfiguredUserUrlFetcher(devAllowLocalUrls: boolean): UserUrlFetcher {
  return createUserUrlFetcher(devAllowLocalUrls ? { addressPolicy: devLocalAddressPolicy, resolver: hostsFileResolver } : {});
}

const defaultFetcher = createUserUrlFetcher();

/** Every check that needs no network: scheme, credentials, port, length, literal addresses, host names. */
export const vetUserUrl = (url: string, options?: VetOptions): VettedUrl => defaultFetcher.vetUrl(url, options);

/** Downloads a user-supplied URL under the strict policy; see createUserUrlFetcher for the pieces. */
export const fetchUserUrl = (url: string, options: FetchUserUrlOptions): Promise<FetchedUrl> => defaultFetcher.fetch(url, options);
