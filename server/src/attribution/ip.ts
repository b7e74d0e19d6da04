import { isIP } from 'node:net';

/**
 * The network an address stands for in attribution (api.md §13): an IPv4 address itself; for
 * IPv6 its /64 prefix, written `2001:db8:1:2::/64`. A device on IPv6 changes its interface id
 * (the low 64 bits) every day or so (RFC 8981 temporary addresses), while its network keeps the
 * /64: comparing whole IPv6 addresses would miss the same phone an hour later. An IPv4-mapped
 * IPv6 address (`::ffff:198.51.100.7`) is its IPv4 address. Null when `ip` is not an address.
 */
export function networkKey(ip: string | null | undefined): string | null {
  if (!ip) return null;
  const kind = isIP(ip);
  if (kind === 4) return ip;
  if (kind !== 6) return null;
  const groups = ipv6Groups(ip);
  if (!groups) return null;
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    const [hi, lo] = [groups[6] as number, groups[7] as number];
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}

/** Whether an address is IPv6 (its network key is a /64 prefix), IPv4-mapped ones excepted. */
export function isIpv6Network(key: string | null): boolean {
  return key?.endsWith('/64') ?? false;
}

/** The eight 16-bit groups of a valid IPv6 address (zone id dropped, an embedded IPv4 tail converted). */
function ipv6Groups(address: string): number[] | null {
  let text = address.split('%')[0] as string;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => Number.parseInt(g, 16)));
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  const missing = 8 - left.length - right.length;
  if (missing < 0 || (tail === undefined && missing !== 0)) return null;
  const groups = [...left, ...Array<number>(missing).fill(0), ...right];
  return groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null;
}
