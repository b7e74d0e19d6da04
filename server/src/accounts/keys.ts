import { hash, randomBytes, randomInt, scryptSync, timingSafeEqual } from 'node:crypto';

export const SCOPES = [
  'clicks:write',
  'conversions:write',
  'conversions:read',
  'clicks:read',
  'stores:read',
  'stores:write',
  'analytics:read',
  'spend:write',
  'webhooks:read',
  'webhooks:write',
] as const;
export type Scope = (typeof SCOPES)[number];
export type Mode = 'live' | 'test';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SECRET_LENGTH = 40;

/** `wt_live_<secret>` / `wt_test_<secret>`, secret ≥ 32 base62 characters. */
export const API_KEY_FORMAT = /^wt_(live|test)_[0-9A-Za-z]{32,128}$/;

/** `wt_pk_live_<secret>` / `wt_pk_test_<secret>`: a publishable key, made to sit in a web page. */
export const PUBLISHABLE_KEY_FORMAT = /^wt_pk_(live|test)_[0-9A-Za-z]{32,128}$/;

/** A secret key (server to server) or a publishable one (the browser tag: one store, clicks only). */
export type KeyKind = 'secret' | 'publishable';

/** The kind a well-formed key names in its prefix; undefined when it is neither format. */
export function keyKindOf(key: string): KeyKind | undefined {
  if (API_KEY_FORMAT.test(key)) return 'secret';
  if (PUBLISHABLE_KEY_FORMAT.test(key)) return 'publishable';
  return undefined;
}

export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex'); // one-shot (no Hash object): every authenticated request hashes its key
}

/** A new key from the CSPRNG (uniform base62, no modulo bias), its hash and display hint. */
export function generateApiKey(mode: Mode, kind: KeyKind = 'secret'): { key: string; hash: string; hint: string } {
  let secret = '';
  for (let i = 0; i < SECRET_LENGTH; i++) secret += BASE62[randomInt(62)];
  const prefix = kind === 'publishable' ? `wt_pk_${mode}_` : `wt_${mode}_`;
  const key = `${prefix}${secret}`;
  return { key, hash: hashApiKey(key), hint: `${prefix}…${secret.slice(-4)}` };
}

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/** True when a key's scope list grants `needed` (`*` grants everything). */
export function grants(scopes: readonly string[], needed: string): boolean {
  return scopes.includes('*') || scopes.includes(needed);
}

const SCRYPT = { N: 16384, r: 8, p: 1, keylen: 32 };

export function hashPassword(password: string): string {
  const salt = randomBytes(16);
  const hash = scryptSync(password, salt, SCRYPT.keylen, { N: SCRYPT.N, r: SCRYPT.r, p: SCRYPT.p });
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64url')}$${hash.toString('base64url')}`;
}

export function verifyPassword(password: string, stored: string): boolean {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = scryptSync(password, Buffer.from(salt, 'base64url'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
  });
  return timingSafeEqual(actual, expected);
}
