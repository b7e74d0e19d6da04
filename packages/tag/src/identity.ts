/**
 * The visitor id and identify's hashing (api.md §13), as pure functions of their inputs (the tag
 * reads and writes `document.cookie` and calls `crypto` with them; tests run them without a browser).
 * - `_wt_vid`: this browser, as Waytrack names it: 16 random bytes, base64url (22 characters).
 * - `waytrack('identify', {email, phone})`: normalized as the server does (api.md §2: email
 *   trimmed and lower-cased; phone digits only, a leading 00 dropped) and SHA-256 hashed here,
 *   so only hashes leave the page.
 */

export const VISITOR_COOKIE = '_wt_vid';

/** 400 days, the longest any browser keeps a cookie (script-written ones may be capped shorter). */
export const VISITOR_MAX_AGE_SECONDS = 400 * 24 * 60 * 60;

/** A visitor id the tag keeps (its own, or one the shop's server set): what the server accepts, ≤ 128 characters. */
export const VISITOR_ID = /^[A-Za-z0-9_.-]{16,128}$/;

/** base64url of the bytes, without padding: 16 bytes give 22 characters. */
export function visitorIdOf(bytes: ArrayLike<number>): string {
  return btoa(String.fromCharCode.apply(null, Array.from(bytes)))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

const SHA256_HEX = /^[a-f0-9]{64}$/i;

/** The text to hash for an email or a phone; null when nothing is left. A value already hashed is kept (lower-cased), marked by `hashed`. */
export function normalizedIdentity(kind: 'email' | 'phone', raw: unknown): { text: string; hashed: boolean } | null {
  if (typeof raw !== 'string') return null;
  const trimmed = raw.trim();
  if (SHA256_HEX.test(trimmed)) return { text: trimmed.toLowerCase(), hashed: true };
  const text = kind === 'email' ? trimmed.toLowerCase() : trimmed.replace(/\D/g, '').replace(/^00/, '');
  return text ? { text, hashed: false } : null;
}

/** Lower-case hex of a digest. */
export function hexOf(buffer: ArrayBuffer): string {
  let out = '';
  for (const byte of new Uint8Array(buffer)) out += (byte + 256).toString(16).slice(1);
  return out;
}
