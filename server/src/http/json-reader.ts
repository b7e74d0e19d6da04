import { isLosslessNumber, isSafeNumber, parse } from 'lossless-json';
import { ApiError } from './errors.js';

/**
 * The one JSON reader of request bodies: the API's (http/json-body.ts) and the shop webhooks'
 * (shops/webhooks.ts, after the signature was checked over the raw bytes), so that both refuse
 * and accept the same bytes and read numbers alike:
 * - the bytes must be UTF-8: an invalid sequence is 400 `invalid_unicode`, never silently read
 *   as U+FFFD (a shop's Latin-1 body would otherwise be stored, and hashed, garbled);
 * - a leading byte order mark is skipped (RFC 8259 allows ignoring it);
 * - malformed JSON is 400 `malformed_json`, nesting past 64 levels 400 `too_deep`;
 * - numbers are JavaScript numbers (what the schemas validate), and a number literal a double
 *   cannot hold exactly — an id above 2^53 (Shopify's), an amount with more digits than a
 *   double keeps — also keeps its exact text, which `exactNumber` gives back: ids keep every
 *   digit and money is parsed from what was written (money.ts parseDecimal).
 */

const UTF8 = new TextDecoder('utf-8', { fatal: true }); // ignoreBOM false: a leading BOM is dropped
export const MAX_JSON_DEPTH = 64;

/**
 * A number literal with 16 or more digits right after `:`, `[` or `,`: only those can lose
 * digits in a double (15 significant digits always survive). Bodies without one (nearly all)
 * are read by JSON.parse alone; a string value that merely looks like one costs the slow path,
 * never a wrong value.
 */
const LONG_NUMBER = /[:,[]\s*-?[\d.]{16}/;

/** Holder (object or array) → key → the exact text of the number stored there. */
const exactTexts = new WeakMap<object, Map<string, string>>();

export function readJson(bytes: Uint8Array): unknown {
  if (bytes.length === 0) {
    throw new ApiError('invalid_request', 'The request body is empty; send a JSON object', { reason: 'malformed_json' });
  }
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    throw new ApiError(
      'invalid_request',
      `The request body is not valid UTF-8 (an invalid byte sequence at byte ${firstInvalidByte(bytes)}); send JSON text encoded as UTF-8`,
      { reason: 'invalid_unicode' },
    );
  }
  let value: unknown;
  try {
    value = LONG_NUMBER.test(text) ? parseKeepingExactNumbers(text) : JSON.parse(text);
  } catch {
    throw new ApiError('invalid_request', 'The request body is not valid JSON', { reason: 'malformed_json' });
  }
  // No body nests past a few levels; thousands would overflow the stack of every recursive step
  // after parsing (JSON.stringify of the Idempotency-Key hash first): a 400, not a 500, with the
  // reason the validator gives past its own depth limit (http/validation.ts: too_deep).
  if (nestingDepth(text) > MAX_JSON_DEPTH) {
    throw new ApiError('invalid_request', `The request body nests deeper than ${MAX_JSON_DEPTH} levels`, {
      reason: 'too_deep',
    });
  }
  return value;
}

/**
 * The exact text of the number at `holder[key]` when the reader kept one (a literal a double
 * does not hold exactly) and the value is still the number read there; otherwise undefined, and
 * `String(value)` is what was written.
 */
export function exactNumber(holder: unknown, key: string | number): string | undefined {
  if (typeof holder !== 'object' || holder === null) return undefined;
  const text = exactTexts.get(holder)?.get(String(key));
  return text !== undefined && (holder as Record<string, unknown>)[key] === Number(text) ? text : undefined;
}

/**
 * lossless-json reads every number as its text; each one a double holds exactly becomes that
 * number, the others become the nearest number with their text kept beside it. lossless-json
 * refuses duplicate keys that differ, which JSON.parse takes (the last one wins): such a body is
 * read as JSON.parse reads it, so that both paths accept the same texts.
 */
function parseKeepingExactNumbers(text: string): unknown {
  // lossless-json recurses per level: a body too deep for it is refused after JSON.parse, as the fast path refuses it.
  if (nestingDepth(text) > MAX_JSON_DEPTH) return JSON.parse(text);
  try {
    return parse(text, function (this: object, key: string, value: unknown) {
      if (!isLosslessNumber(value)) return value;
      const literal = value.value;
      const number = Number(literal);
      if (!isSafeNumber(literal)) {
        const kept = exactTexts.get(this) ?? new Map<string, string>();
        exactTexts.set(this, kept.set(key, literal));
      }
      return number;
    });
  } catch (error) {
    if (error instanceof Error && error.message.startsWith('Duplicate key')) return JSON.parse(text);
    throw error;
  }
}

/** The deepest nesting of arrays and objects in valid JSON text (brackets inside strings ignored). */
function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      depth++;
      if (depth > deepest) deepest = depth;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return deepest;
}

/** The offset where the first ill-formed UTF-8 sequence starts. */
function firstInvalidByte(bytes: Uint8Array): number {
  const valid = longestValidPrefix(bytes);
  // The prefix may end inside the bad sequence (`C3` then `41`): step back to its lead byte.
  let start = valid;
  while (start > 0 && valid - start < 3 && ((bytes[start - 1] as number) & 0xc0) === 0x80) start--;
  const lead = start > 0 ? (bytes[start - 1] as number) : 0;
  const needed = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 0;
  return needed > valid - (start - 1) ? start - 1 : valid;
}

/** The length of the longest prefix that is well-formed UTF-8 but for an unfinished last character. */
function longestValidPrefix(bytes: Uint8Array): number {
  let low = 0;
  let high = bytes.length;
  // The longest valid prefix (ending on a character boundary), by bisection: at most ~20 decodes of ≤ 1 MiB.
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (isUtf8Prefix(bytes.subarray(0, mid))) low = mid;
    else high = mid - 1;
  }
  return low;
}

/** Whether `bytes` is valid UTF-8 up to a possibly unfinished last character. */
function isUtf8Prefix(bytes: Uint8Array): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes, { stream: true });
    return true;
  } catch {
    return false;
  }
}
