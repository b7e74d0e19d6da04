import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/**
 * Where a webhook may not go (api.md §9): loopback, RFC 1918, RFC 4193 (fc00::/7), link-local,
 * and the same written as IPv4-mapped IPv6; also the unspecified, "this network", shared
 * (100.64/10), multicast and reserved ranges, which reach this host or nothing outside.
 */
const BLOCKED = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  BLOCKED.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  BLOCKED.addSubnet(net, prefix, 'ipv6');
}

/** `::ffff:a.b.c.d` and `::ffff:xxxx:yyyy` (as URLs normalize it) → `a.b.c.d`; otherwise undefined. */
function mappedIpv4(address: string): string | undefined {
  const lower = address.toLowerCase().replace(/^\[|\]$/g, '');
  const dotted = /^(?:0{0,4}:){0,5}:?ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower) ?? /^::(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1];
  const hex = /^(?:0{0,4}:){0,5}:?ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (!hex) return undefined;
  const high = Number.parseInt(hex[1] as string, 16);
  const low = Number.parseInt(hex[2] as string, 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

/** True for an address a webhook must not reach (IPv4, IPv6, or IPv4-mapped IPv6). */
export function isPrivateAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '');
  const v4 = isIP(bare) === 4 ? bare : mappedIpv4(bare);
  if (v4 !== undefined) return isIP(v4) !== 4 || BLOCKED.check(v4, 'ipv4');
  if (isIP(bare) !== 6) return true; // not an address at all: refuse rather than guess
  return BLOCKED.check(bare, 'ipv6');
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
        return done(
          new PrivateAddressError(`${hostname} resolves to ${refused?.address ?? 'no address'}, a private address`),
          '',
          0,
        );
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
