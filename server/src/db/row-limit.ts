import { type RawBuilder, sql } from 'kysely';

/**
 * A LIMIT written into the SQL text instead of bound as a parameter. better-sqlite3 builds
 * SQLite with STAT4, and SQLite then marks a statement expired whenever a LIMIT parameter is
 * re-bound: every execution re-prepared it (~0.1 ms per lookup, measured — ten times the
 * lookup itself). A literal keeps the compiled statement; the values are our own integers.
 */
export function rowLimit(n: number): RawBuilder<number> {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`row limit must be a non-negative integer, not ${n}`);
  return sql.lit(n);
}
