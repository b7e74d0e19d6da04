/**
 * The visitor fingerprint the tag sends with a click and returns from `identifiers()`: a hash of
 * a few browser properties that stay the same across pages and visits of one browser on one
 * device, and need no permission: user agent, languages, platform, time zone, screen size and
 * colour depth, device pixel ratio, CPU cores, device memory and touch points. It is a matching
 * signal for attribution (with fbc, fbp and IP), not an identity: two identical devices share it.
 */

/** The properties hashed, in a fixed order; a missing one is an empty string. */
export type Traits = readonly (string | number | undefined | null)[];

/** FNV-1a over UTF-16 code units, then Murmur3's finalizer so that close inputs spread apart. */
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
  h ^= h >>> 16;
  return h >>> 0;
}

const hex8 = (n: number) => `0000000${n.toString(16)}`.slice(-8);

/** 16 hex characters (two independent 32-bit hashes): stable for the same traits. */
export function fingerprintOf(traits: Traits): string {
  const text = traits.map((t) => (t === undefined || t === null ? '' : String(t))).join('\u001f');
  return hex8(hash32(text, 0x811c9dc5)) + hex8(hash32(text, 0x9747b28c));
}
