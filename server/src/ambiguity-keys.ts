import { isIP } from 'node:net';

/**
 * The network and ambiguity keys of attribution (api.md §13), pure functions on the ground floor:
 * the click path (tracking), both engines' click writes (db) and the model (attribution) use them.
 *
 * The keys of the ambiguity counts: how many distinct browsers with a click in the
 * window share an IP (IPv6: its /64), an IP + user agent, a fingerprint. A click adds, for each
 * key it has, one row (day, key, browser) to `attribution_keys` (migration 0024); a conversion
 * counts the distinct browsers of its keys over the window's days. Pure functions.
 */

export const AMBIGUITY_KINDS = ['ip', 'ip_user_agent', 'fingerprint'] as const;
export type AmbiguityKind = (typeof AMBIGUITY_KINDS)[number];

const DAY_MS = 86_400_000;

/** The UTC day number of a time: the counts' granularity. */
export const dayOf = (ms: number): number => Math.floor(ms / DAY_MS);

/** 32 bits of a text: FNV-1a's loop with a seed, then Murmur3's finalizer (as the tag's fingerprint). */
function hash32(text: string, seed: number): number {
  let h = seed >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * A 53-bit number for a text: two seeded 32-bit hashes, 21 and 32 bits of them. Not a secret
 * (the raw values sit in the clicks beside them), a compact key both engines store as an integer
 * and JavaScript holds exactly, ~0.2 µs where MD5 took ~5 µs on the click path. A collision
 * between two values of one store, rare at 53 bits, adds a browser to a count.
 */
export function key53(text: string): number {
  return (hash32(text, 0x9747b28c) & 0x1f_ffff) * 0x1_0000_0000 + hash32(text, 0x811c9dc5);
}

/** What a click or a conversion shows of the visitor's network and device. */
export interface AmbiguityValues {
  ipAddress?: string | null;
  userAgent?: string | null;
  fingerprint?: string | null;
}

/** Each ambiguity key's value text for these values (absent kinds left out). */
export function ambiguityValues(values: AmbiguityValues): Partial<Record<AmbiguityKind, string>> {
  const network = networkKey(values.ipAddress);
  const out: Partial<Record<AmbiguityKind, string>> = {};
  if (network) out.ip = network;
  if (network && values.userAgent) out.ip_user_agent = `${network}|${values.userAgent}`;
  if (values.fingerprint) out.fingerprint = values.fingerprint;
  return out;
}

/** The stored key of one kind's value in one store and mode (the key carries them, so one integer column does). */
export function ambiguityKey(storeId: string, livemode: number, kind: AmbiguityKind, value: string): number {
  return key53(`${storeId}\n${livemode}\n${kind}\n${value}`);
}

/** A click's browser ids (api.md §13): the tag's visitor id, Meta's `_fbp`, TikTok's `_ttp`. */
export interface BrowserIds {
  visitorId?: string | null;
  fbp?: string | null;
  ttp?: string | null;
}

/**
 * The browser a click came from, for counting distinct browsers and grouping candidates: its
 * visitor id, else its fbp, else its ttp; a click without any is a browser of its own (so that
 * clicks the service cannot tell apart are never taken for one visitor).
 */
export function browserOf(clickId: string, ids: BrowserIds): string {
  if (ids.visitorId) return `v:${ids.visitorId}`;
  if (ids.fbp) return `f:${ids.fbp}`;
  if (ids.ttp) return `t:${ids.ttp}`;
  return `c:${clickId}`;
}

/** One row of `attribution_keys`. */
export interface AmbiguityRow {
  day: number;
  k: number;
  browser: number;
}

/** The rows a click adds to the counts: none for a bot (never a candidate), else one per key it has. */
export function ambiguityRows(click: {
  id: string;
  store_id: string;
  livemode: number;
  click_time: number;
  is_bot: number;
  ip_address: string | null;
  user_agent: string | null;
  fingerprint: string | null;
  fbp: string | null;
  ttp?: string | null;
  visitor_id?: string | null;
}): AmbiguityRow[] {
  if (click.is_bot === 1) return [];
  const values = ambiguityValues({ ipAddress: click.ip_address, userAgent: click.user_agent, fingerprint: click.fingerprint });
  const browser = key53(browserOf(click.id, { visitorId: click.visitor_id, fbp: click.fbp, ttp: click.ttp }));
  const day = dayOf(click.click_time);
  return (Object.entries(values) as Array<[AmbiguityKind, string]>).map(([kind, value]) => ({
    day,
    k: ambiguityKey(click.store_id, click.livemode, kind, value),
    browser,
  }));
}

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
