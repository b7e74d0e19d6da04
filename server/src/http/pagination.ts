import { createHmac, timingSafeEqual } from 'node:crypto';
import { Type } from 'typebox';
import type { Keyset } from '../db/repositories/keyset.js';
import { invalid } from './errors.js';

/** `limit` and `cursor`, shared by every list endpoint. */
export const PageQuery = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Items per page, 1–100' })),
  cursor: Type.Optional(Type.String({ maxLength: 512, description: 'nextCursor of the previous page' })),
};

export interface PageResult<T> {
  hasMore: boolean;
  nextCursor: string | null;
  items: T[];
}

/**
 * Opaque, signed cursors. A cursor carries the last (time, id) seen and is bound by HMAC to the
 * list it came from (route, account, mode and filters): a tampered cursor or one from another
 * list is rejected rather than silently misread.
 */
export class CursorCodec {
  constructor(private readonly secret: string) {}

  private sign(payload: string, context: string): Buffer {
    return createHmac('sha256', this.secret).update(`${context}\n${payload}`).digest().subarray(0, 16);
  }

  encode(keyset: Keyset, context: string): string {
    const payload = Buffer.from(JSON.stringify([keyset.time, keyset.id])).toString('base64url');
    return `${payload}.${this.sign(payload, context).toString('base64url')}`;
  }

  decode(cursor: string | undefined, context: string): Keyset | undefined {
    if (cursor === undefined) return undefined;
    const bad = () => invalid('cursor', 'invalid_format', 'cursor is not a cursor this list returned');
    const [payload, signature, extra] = cursor.split('.');
    if (!payload || !signature || extra !== undefined) throw bad();
    // Base64 decoding skips what is not base64 (`==`, `!`, a NUL): only the exact text this
    // service wrote is its cursor.
    const given = Buffer.from(signature, 'base64url');
    if (given.toString('base64url') !== signature || Buffer.from(payload, 'base64url').toString('base64url') !== payload) {
      throw bad();
    }
    const expected = this.sign(payload, context);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw bad();
    const parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as unknown;
    if (!Array.isArray(parsed) || parsed.length !== 2 || typeof parsed[1] !== 'string') throw bad();
    const [time, id] = parsed as [number | string, string];
    return { time, id };
  }

  /** Builds a page from the `limit + 1` rows a repository returned. */
  page<Row, Item>(
    rows: Row[],
    limit: number,
    context: string,
    keysetOf: (row: Row) => Keyset,
    present: (row: Row) => Item,
  ): PageResult<Item> {
    const hasMore = rows.length > limit;
    const items = hasMore ? rows.slice(0, limit) : rows;
    const last = items[items.length - 1];
    return {
      hasMore,
      nextCursor: hasMore && last !== undefined ? this.encode(keysetOf(last), context) : null,
      items: items.map(present),
    };
  }
}

/** The identity of a list: a cursor is only valid for the same one. */
export function listContext(route: string, auth: { accountId: string; livemode: boolean }, filters: object): string {
  // The same filters sent in another order (the query string's) still name the same list.
  const canonical = Object.entries(filters)
    .filter(([, value]) => value !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify([route, auth.accountId, auth.livemode, canonical]);
}
