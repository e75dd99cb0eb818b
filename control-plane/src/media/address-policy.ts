import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Which hosts and addresses a user-supplied URL may make this service contact.
 *
 * ipaddr.js does the range arithmetic: it carries the IANA special-purpose registries (private, CGNAT,
 * benchmarking, documentation, AS112, AMT, NAT64, 6to4, Teredo, ORCHID...) and parses every address form,
 * which is exactly the part that goes wrong when hand-rolled. The decisions on top of it are ours:
 * IPv4 is allowed unless it is special, IPv6 only inside global unicast (2000::/3) and, even there, never
 * in a range that embeds or tunnels an IPv4 address, because the embedded address may be private. An
 * embedded IPv4 address is normalised out of its IPv6 form before anything else is decided, so every policy
 * (the development one too) sees a metadata address as one, whichever way it is spelt.
 */

/** Why an address or host is refused; null means it may be contacted. */
export type Refusal = string | null;

/** Instance-metadata endpoints. Most sit in ranges refused anyway; listed so the reason says so, and
 * because some are public addresses (Azure's wire server) that no range check would catch. */
const METADATA_ADDRESSES = new Set([
  '169.254.169.254', // AWS, GCP, Azure, OCI, DigitalOcean IMDS
  '169.254.169.253', // AWS VPC resolver
  '169.254.170.2', // AWS ECS task metadata
  '169.254.170.23', // AWS EKS Pod Identity Agent (credentials)
  '192.0.0.192', // Oracle Cloud (legacy)
  '100.100.100.200', // Alibaba Cloud
  '168.63.129.16', // Azure wire server (a public address)
  'fd00:ec2::254', // AWS IMDS over IPv6
  'fd00:ec2::253', // AWS VPC resolver over IPv6
  'fd00:ec2::23', // AWS EKS Pod Identity Agent over IPv6
]);

const METADATA_NAMES = new Set(['metadata', 'metadata.google.internal', 'metadata.goog', 'instance-data', 'instance-data.ec2.internal']);

/** Special-use names (RFC 6761, 6762, 8375, 9476) and suffixes that only ever name something internal. */
const REFUSED_SUFFIXES = ['localhost', 'local', 'internal', 'localdomain', 'home.arpa', 'arpa', 'invalid', 'test', 'onion', 'alt'];

const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3');

/**
 * Where an IPv6 form carries an IPv4 address the connection may end up at (RFC 4291 mapped and compatible, RFC
 * 6145, RFC 6052/8215 NAT64, RFC 3056 6to4, RFC 4380 Teredo): the byte offsets of each candidate. A NAT64 prefix
 * of RFC 8215's local-use range may be any of RFC 6052's lengths from /48, each of which puts the address
 * elsewhere (skipping the u octet, byte 8), so every one of them is a candidate.
 */
const LAST_32_BITS = [12, 13, 14, 15];
const NAT64_LOCAL_USE = ipaddr.IPv6.parseCIDR('64:ff9b:1::/48');
const EMBEDDED_V4_BYTES: Readonly<Record<string, readonly (readonly number[])[]>> = {
  ipv4Mapped: [LAST_32_BITS],
  rfc6145: [LAST_32_BITS],
  rfc6052: [LAST_32_BITS],
  '6to4': [[2, 3, 4, 5]],
  // The server's address as it is; the client's, inverted (obfuscated), in the last 32 bits is added below.
  teredo: [[4, 5, 6, 7]],
};
const NAT64_LOCAL_USE_BYTES = [[6, 7, 9, 10], [7, 9, 10, 11], [9, 10, 11, 12], LAST_32_BITS];
const IPV4_COMPATIBLE = ipaddr.IPv6.parseCIDR('::/96');

/** The IPv4 addresses an IPv6 address embeds, as dotted quads, and the name of its form; none for a plain one. */
function embeddedIPv4(v6: ipaddr.IPv6): { form: string; addresses: string[] } | undefined {
  const bytes = v6.toByteArray();
  const quad = (offsets: readonly number[], mask = 0) => offsets.map((offset) => (bytes[offset]! ^ mask) & 0xff).join('.');
  const range = v6.range();
  let form: string;
  let offsets: readonly (readonly number[])[];
  if (range === 'rfc6052' && v6.match(NAT64_LOCAL_USE)) [form, offsets] = [range, NAT64_LOCAL_USE_BYTES];
  else if (EMBEDDED_V4_BYTES[range]) [form, offsets] = [range, EMBEDDED_V4_BYTES[range]];
  // ::a.b.c.d (deprecated IPv4-compatible form); ipaddr.js calls it unicast. :: and ::1 are not that form.
  else if (range === 'unicast' && v6.match(IPV4_COMPATIBLE)) [form, offsets] = ['compatible', [LAST_32_BITS]];
  else return undefined;
  const addresses = offsets.map((candidate) => quad(candidate));
  if (form === 'teredo') addresses.push(quad(LAST_32_BITS, 0xff));
  return { form, addresses };
}

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
  // An embedded IPv4 address is taken out first and classified as what it is, so no spelling of a metadata
  // address (::ffff:169.254.169.254, ::ffff:a9fe:a9fe, 64:ff9b::a9fe:a9fe, 2002:a9fe:a9fe::...) passes for
  // IPv6. The form itself stays refused whatever it embeds: the embedded address may be private.
  const embedded = embeddedIPv4(v6);
  if (embedded) {
    if (embedded.addresses.some((v4) => METADATA_ADDRESSES.has(v4))) return 'cloud_metadata';
    return `ipv4_embedded_${embedded.form}`;
  }
  const range = v6.range();
  if (range !== 'unicast') return range;
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
