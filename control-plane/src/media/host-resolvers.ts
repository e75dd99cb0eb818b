import { lookup, Resolver } from 'node:dns/promises';

/** How a user URL's host name becomes addresses; what is done with them is host-vetting.ts's business. */

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
