import { PostgresAdapter } from 'kysely';
import type { Reader } from './database.js';

/**
 * For the few statements whose SQL must differ by engine (row locks, SKIP LOCKED claims):
 * repositories ask this, next to the statement, and nothing outside db/ ever does.
 */
export function isPostgres(db: Reader): boolean {
  return (db as unknown as { getExecutor(): { adapter: unknown } }).getExecutor().adapter instanceof PostgresAdapter;
}
