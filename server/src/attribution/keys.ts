import { networkKey } from './ip.js';

/**
 * The keys of the ambiguity counts (api.md §13): how many distinct browsers with a click in the
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
