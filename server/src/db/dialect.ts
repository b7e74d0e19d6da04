import { PostgresAdapter } from 'kysely';
import type { Reader } from './database.js';

/**
 * Which engine a query builder runs on, asked where a repository or a migration takes a path of
 * its own on PostgreSQL: row locks and SKIP LOCKED claims, and also whole PostgreSQL-only
 * statements (inserts once by key through the key tables, the one-statement evidence read, the
 * rollup queue's and retention's partition-aware work) and migration 0007's partitions. Only
 * db/repositories and db/migrations ask it; nothing outside db/ does. (Issue 23 is to choose the
 * engine once instead.)
 */
export function isPostgres(db: Reader): boolean {
  return (db as unknown as { getExecutor(): { adapter: unknown } }).getExecutor().adapter instanceof PostgresAdapter;
}
