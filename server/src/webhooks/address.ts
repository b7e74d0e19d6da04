import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Where a webhook may go (api.md §9): public unicast addresses only, as ipaddr.js classifies
 * them (its `unicast` is what is left after every special-purpose range: private, loopback,
 * link-local, carrier-grade NAT, unique-local `fc00::/7`, site-local `fec0::/10`, multicast,
 * documentation, benchmarking, Teredo, ORCHID, …). A library keeps that list current; a list of
 * our own went stale (it let `::127.0.0.1`, `::ffff:0:10.0.0.1` and `2002:7f00:1::` through).
 *
 * IPv6 forms that carry an IPv4 address reach that IPv4 host (the kernel, a NAT64 gateway or a
 * 6to4 relay translates), so the embedded address is what is judged: IPv4-mapped `::ffff:0:0/96`,
 * SIIT `::ffff:0:0:0/96`, IPv4-compatible `::/96`, NAT64's well-known `64:ff9b::/96` and 6to4
 * `2002::/16`. A public embedded address passes (NAT64 is how IPv6-only hosts reach IPv4); a
 * NAT64 local-use prefix (`64:ff9b:1::/48`) is a private network's own and is refused.
 */
const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR('64:ff9b::/96');

function ipv4Of(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 255, low >> 8, low & 255]);
}

/** The IPv4 address an IPv6 address stands for, in the forms that embed one; otherwise undefined. */
function embeddedIpv4(address: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const [p0, p1, p2, p3, p4, p5, p6, p7] = address.parts as [number, number, number, number, number, number, number, number];
  switch (address.range()) {
    case 'ipv4Mapped':
    case 'rfc6145':
      return ipv4Of(p6, p7);
    case 'rfc6052':
      return address.match(NAT64_WELL_KNOWN) ? ipv4Of(p6, p7) : undefined;
    case '6to4':
      return ipv4Of(p1, p2);
    case 'unicast':
      // IPv4-compatible (deprecated, RFC 4291 §2.5.5.1): 96 zero bits, then the IPv4 address.
      return p0 === 0 && p1 === 0 && p2 === 0 && p3 === 0 && p4 === 0 && p5 === 0 ? ipv4Of(p6, p7) : undefined;
    default:
      return undefined;
  }
}

/**
 * Why a webhook may not reach `address` (IPv4 or IPv6, with or without brackets): the range it
 * is in, as ipaddr.js names it (`loopback`, `private`, `uniqueLocal`, …, or for an embedding form
 * `6to4 embedding 10.0.0.1 (private)`); undefined for a public unicast address.
 */
export function refusalOf(address: string): string | undefined {
  const bare = address.replace(/^\[|\]$/g, '');
  // Not an address at all: refuse rather than guess.
  if (!ipaddr.isValid(bare)) return 'not an IP address';
  const ip = ipaddr.parse(bare);
  if (ip.kind() === 'ipv4') {
    const range = ip.range();
    return range === 'unicast' ? undefined : range;
  }
  const v6 = ip as ipaddr.IPv6;
  const embedded = embeddedIpv4(v6);
  if (embedded) {
    const range = embedded.range();
    if (range === 'unicast') return undefined;
    const form = v6.range() === 'unicast' ? 'IPv4-compatible' : v6.range();
    return `${form} embedding ${embedded.toString()} (${range})`;
  }
  const range = v6.range();
  return range === 'unicast' ? undefined : range;
}

/** True for an address a webhook must not reach. */
export function isPrivateAddress(address: string): boolean {
  return refusalOf(address) !== undefined;
}

export class PrivateAddressError extends Error {
  readonly code = 'EPRIVATEADDRESS';
}

type Lookup = typeof dnsLookup;

/**
 * A `lookup` for outbound sockets that refuses private addresses at connect time: the address
 * checked is the one connected to, so a name that resolved to a public address when the endpoint
 * was created and to 127.0.0.1 now (DNS rebinding) is refused. `resolve` is DNS by default.
 */
export function guardedLookup(resolve: Lookup = dnsLookup): Lookup {
  const guarded = (hostname: string, options: unknown, callback: unknown) => {
    const done = (typeof options === 'function' ? options : callback) as (
      error: NodeJS.ErrnoException | null,
      address: string | LookupAddress[],
      family?: number,
    ) => void;
    const opts = typeof options === 'object' && options !== null ? (options as { all?: boolean }) : {};
    resolve(hostname, { ...opts, all: true }, (error, addresses) => {
      if (error) return done(error, '', 0);
      const list = addresses as LookupAddress[];
      const refused = list.find((a) => isPrivateAddress(a.address));
      if (refused || list.length === 0) {
        const why = refused ? `${refused.address}, a private address (${refusalOf(refused.address)})` : 'no address';
        return done(new PrivateAddressError(`${hostname} resolves to ${why}`), '', 0);
      }
      if (opts.all) return done(null, list);
      const first = list[0] as LookupAddress;
      return done(null, first.address, first.family);
    });
  };
  return guarded as unknown as Lookup;
}

/** The literal IP address a URL's host is, if it is one (without brackets). */
export function literalAddress(hostname: string): string | undefined {
  const bare = hostname.replace(/^\[|\]$/g, '');
  return isIP(bare) === 0 ? undefined : bare;
}
