import { isIP } from 'node:net';
import { classifyHostName } from './address-policy.ts';
import type { AddressPolicy } from './address-policy.ts';
import { withDeadline } from './deadline.ts';
import type { HostResolver, ResolvedAddress } from './host-resolvers.ts';
import { refused, unreachable } from './url-refusal.ts';

/**
 * Whether a user-supplied URL may be contacted, and at which one address: the URL's own checks (scheme,
 * credentials, port, length, literal addresses, host names), then DNS, every answer through the address
 * policy, and one address pinned for the connection (pinned-connection.ts makes the socket go there only).
 */

export const MAX_URL_LENGTH = 2048;

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

export interface HostVetter {
  /** Every check that needs no network. */
  vetUrl(input: string, options?: VetOptions): VettedUrl;
  /** DNS for a vetted URL under the caller's deadline: every address must pass, one is pinned. */
  resolveVetted(vetted: VettedUrl, signal: AbortSignal): Promise<VettedHost>;
  /** vetUrl (unless already done) plus resolveVetted under its own deadline. */
  vetHost(input: string | VettedUrl, options?: VetHostOptions): Promise<VettedHost>;
}

function raceSignal<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

export function createHostVetter(policy: AddressPolicy, resolver: HostResolver): HostVetter {
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

  return { vetUrl, resolveVetted, vetHost };
}
