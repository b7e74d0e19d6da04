import { randomBytes } from 'node:crypto';

/** The one registry of id prefixes. Ids are `<prefix>_<10 chars time><16 chars random>` (Crockford base32, lower-case). */
const PREFIXES = {
  click: 'clk',
  conversion: 'conv',
  store: 'st',
  request: 'req',
  key: 'key',
  account: 'acct',
  spend: 'spend',
  refund: 'rfd',
  webhook: 'wh',
  webhookEvent: 'msg',
  webhookDelivery: 'whd',
} as const;

export type IdKind = keyof typeof PREFIXES;

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/** The time part of the last id made, by its millisecond: ids made in the same one share it. */
let lastTime = { ms: -1, encoded: '' };

function encodeTime(ms: number): string {
  if (ms === lastTime.ms) return lastTime.encoded;
  let out = '';
  let rest = ms;
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[rest % 32] + out;
    rest = Math.floor(rest / 32);
  }
  lastTime = { ms, encoded: out };
  return out;
}

/** Every pair of characters, by 10 random bits: 16 random characters in 8 steps. */
const PAIRS = Array.from({ length: 1024 }, (_, i) => `${ALPHABET[i >> 5]}${ALPHABET[i & 31]}`);

// Random bytes are drawn from the CSPRNG a pool at a time: one call per id cost a system call
// (~50 µs per request on the conversion endpoint, measured). Two ids a click (its own and its
// request's) and one a health check: the cached time part and the pairs halve what an id costs
// (0.42–0.60 → 0.13–0.24 µs, microbenchmark).
const POOL_SIZE = 4096;
const RANDOM_CHARS = 16;
let pool = Buffer.alloc(0);
let poolOffset = 0;

function encodeRandom(): string {
  if (poolOffset + RANDOM_CHARS > pool.length) {
    pool = randomBytes(POOL_SIZE);
    poolOffset = 0;
  }
  let out = '';
  for (let i = poolOffset; i < poolOffset + RANDOM_CHARS; i += 2) {
    out += PAIRS[(((pool[i] as number) & 31) << 5) | ((pool[i + 1] as number) & 31)];
  }
  poolOffset += RANDOM_CHARS;
  return out;
}

export function newId(kind: IdKind, now = Date.now()): string {
  return `${PREFIXES[kind]}_${encodeTime(now)}${encodeRandom()}`;
}
