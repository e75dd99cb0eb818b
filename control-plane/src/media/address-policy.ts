import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Which hosts and addresses a user-supplied URL may make this service contact.
 *
 * ipaddr.js does the range arithmetic: it carries the IANA special-purpose registries (private, CGNAT,
 * benchmarking, documentation, AS112, AMT, NAT64, 6to4, Teredo, ORCHID...) and parses every address form,
 * which is exactly the part that goes wrong when hand-rolled. The decisions on top of it are ours:
 * IPv4 is allowed unless it is special, IPv6 only inside global unicast (2000::/3) and, even there, never
 * in a range that embeds or tunnels an IPv4 address, because the embedded address may be private.
 */

/** Why an address or host is refused; null means it may be contacted. */
export type Refusal = string | null;

/** Instance-metadata endpoints. Most sit in ranges refused anyway; listed so the reason says so, and
 * because some are public addresses (Azure's wire server) that no range check would catch. */
const METADATA_ADDRESSES = new Set([
  '169.254.169.254', // AWS, GCP, Azure, OCI, DigitalOcean IMDS
  '169.254.169.253', // AWS VPC resolver
  '169.254.170.2', // AWS ECS task metadata
  '100.100.100.200', // Alibaba Cloud
  '168.63.129.16', // Azure wire server (a public address)
  'fd00:ec2::254', // AWS IMDS over IPv6
  'fd00:ec2::253', // AWS VPC resolver over IPv6
]);

const METADATA_NAMES = new Set(['metadata', 'metadata.google.internal', 'metadata.goog', 'instance-data', 'instance-data.ec2.internal']);

/** Special-use names (RFC 6761, 6762, 8375, 9476) and suffixes that only ever name something internal. */
const REFUSED_SUFFIXES = ['localhost', 'local', 'internal', 'localdomain', 'home.arpa', 'arpa', 'invalid', 'test', 'onion', 'alt'];

const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3');

/** IPv6 forms that carry an IPv4 address the connection may end up at (RFC 4291, 6052, 8215, 6145, 3056, 4380). */
const EMBEDDED_V4_RANGES: readonly string[] = ['ipv4Mapped', 'rfc6145', 'rfc6052', '6to4', 'teredo'];
const IPV4_COMPATIBLE = ipaddr.IPv6.parseCIDR('::/96');

/** Refusal reason for one IP address as a resolver or URL literal gives it, or null when it is public. */
export function classifyAddress(address: string): Refusal {
  // net.isIP accepts only canonical dotted-quad and RFC 4291 text; ipaddr.js alone would also accept
  // legacy forms such as "0x7f.1", which a resolver never returns and we must not reinterpret.
  const family = isIP(address);
  if (family === 0) return 'not_an_ip_address';
  if (METADATA_ADDRESSES.has(address.toLowerCase())) return 'cloud_metadata';

  if (family === 4) {
    const range = ipaddr.IPv4.parse(address).range();
    return range === 'unicast' ? null : range;
  }

  if (address.includes('%')) return 'scoped_ipv6';
  const v6 = ipaddr.IPv6.parse(address);
  if (METADATA_ADDRESSES.has(v6.toNormalizedString()) || METADATA_ADDRESSES.has(v6.toRFC5952String())) return 'cloud_metadata';
  const range = v6.range();
  if (EMBEDDED_V4_RANGES.includes(range)) return `ipv4_embedded_${range}`;
  if (range !== 'unicast') return range;
  // ::a.b.c.d (deprecated IPv4-compatible form); ipaddr.js calls it unicast.
  if (v6.match(IPV4_COMPATIBLE)) return 'ipv4_embedded_compatible';
  // Everything outside 2000::/3 is unallocated or special; ipaddr.js names only some of it.
  if (!v6.match(GLOBAL_UNICAST_V6)) return 'not_global_unicast';
  return null;
}

/**
 * Refusal reason for a DNS host name (already lower-cased and punycoded by the WHATWG URL parser), or null.
 * Every policy applies it except the development one (DEV_ALLOW_LOCAL_URLS), which still refuses metadata names.
 */
export function classifyHostName(hostname: string): Refusal {
  const name = hostname.replace(/\.+$/, '');
  if (name === '') return 'empty_host';
  if (METADATA_NAMES.has(name)) return 'cloud_metadata';
  for (const suffix of REFUSED_SUFFIXES) {
    if (name === suffix || name.endsWith(`.${suffix}`)) return 'internal_host_name';
  }
  // A single label is completed by the resolver's search domains, i.e. it names an internal host.
  if (!name.includes('.')) return 'single_label_host';
  return null;
}

/**
 * The address rules a fetcher applies. Production uses strictAddressPolicy; a test fixture can wrap it to
 * admit its own loopback server, which is why the policy is an object passed to a factory and not a flag.
 */
export interface AddressPolicy {
  /** Refusal reason for a resolved or literal address, or null when it may be contacted. */
  checkAddress(address: string): Refusal;
  /** Ports allowed beyond 443 (and 80 when plain http is enabled). Empty in production. */
  readonly extraPorts: readonly number[];
  /** Refusal reason for a host name; classifyHostName unless set. */
  checkHostName?(hostname: string): Refusal;
  /** Every port is allowed, not only the default one and extraPorts. */
  readonly anyPort?: boolean;
  /** Plain http:// is allowed on every call, as if each passed allowHttp. */
  readonly allowHttp?: boolean;
}

export const strictAddressPolicy: AddressPolicy = Object.freeze({
  checkAddress: classifyAddress,
  extraPorts: Object.freeze([]),
});

/** What the development policy still refuses: a cloud's metadata endpoint, and what is no address or name at all. */
const stillRefused = (refusal: Refusal): Refusal => (refusal === 'cloud_metadata' || refusal === 'not_an_ip_address' || refusal === 'empty_host' ? refusal : null);

/**
 * DEV_ALLOW_LOCAL_URLS: a developer's user URLs may point at their own machine or network (http, any port,
 * loopback and private addresses, names such as localhost). Cloud metadata endpoints stay refused, because
 * a development box is often a cloud VM whose credentials they would hand out.
 */
export const devLocalAddressPolicy: AddressPolicy = Object.freeze({
  checkAddress: (address: string) => stillRefused(classifyAddress(address)),
  checkHostName: (hostname: string) => stillRefused(classifyHostName(hostname)),
  extraPorts: Object.freeze([]),
  anyPort: true,
  allowHttp: true,
});
