import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from './errors.js';

/**
 * The JSON body parser (every route, API and dashboard), in place of Fastify's:
 * - the bytes must be UTF-8: an invalid sequence is 400 `invalid_unicode`, never silently read
 *   as U+FFFD (as a `\ud800` escape already is, http/validation.ts);
 * - a leading byte order mark is skipped (RFC 8259 allows ignoring it; Fastify's parser did too);
 * - malformed JSON is 400 `malformed_json`. Keys that could pollute prototypes (`__proto__`,
 *   `constructor.prototype`) are refused by name in http/validation.ts prepareInput, not
 *   reported as "not valid JSON".
 * Errors keep the connection open (http/error-handler.ts): the body was read whole.
 */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

export function parseJsonBody(_request: FastifyRequest, body: Buffer, done: (error: Error | null, body?: unknown) => void) {
  if (body.length === 0) {
    done(new ApiError('invalid_request', 'The request body is empty; send a JSON object', { reason: 'malformed_json' }));
    return;
  }
  let text: string;
  try {
    text = UTF8.decode(body);
  } catch {
    done(
      new ApiError(
        'invalid_request',
        `The request body is not valid UTF-8 (an invalid byte sequence at byte ${firstInvalidByte(body)}); send JSON text encoded as UTF-8`,
        { reason: 'invalid_unicode' },
      ),
    );
    return;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    done(new ApiError('invalid_request', 'The request body is not valid JSON', { reason: 'malformed_json' }));
    return;
  }
  // No body of the API nests past a few levels; thousands would overflow the stack of every
  // recursive step after parsing (JSON.stringify of the Idempotency-Key hash first): a 400, not a
  // 500, with the reason the validator gives past its own depth limit (validation.ts: too_deep).
  if (nestingDepth(text) > MAX_DEPTH) {
    done(new ApiError('invalid_request', `The request body nests deeper than ${MAX_DEPTH} levels`, { reason: 'too_deep' }));
    return;
  }
  done(null, value);
}

const MAX_DEPTH = 64;

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
function firstInvalidByte(bytes: Buffer): number {
  const valid = longestValidPrefix(bytes);
  // The prefix may end inside the bad sequence (`C3` then `41`): step back to its lead byte.
  let start = valid;
  while (start > 0 && valid - start < 3 && ((bytes[start - 1] as number) & 0xc0) === 0x80) start--;
  const lead = start > 0 ? (bytes[start - 1] as number) : 0;
  const needed = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 0;
  return needed > valid - (start - 1) ? start - 1 : valid;
}

/** The length of the longest prefix that is well-formed UTF-8 but for an unfinished last character. */
function longestValidPrefix(bytes: Buffer): number {
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

export function registerJsonBody(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, parseJsonBody);
}
