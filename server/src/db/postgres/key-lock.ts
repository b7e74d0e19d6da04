import { sql } from 'kysely';
import type { Writer } from '../database.js';

/**
 * Takes a PostgreSQL advisory lock on a key, held until the transaction ends: instances doing
 * the same maintenance (retention dropping months) take turns instead of failing each other. A
 * hash collision between two keys only makes them take turns too.
 */
export async function lockKey(trx: Writer, ...parts: (string | number)[]): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${parts.join('\u001f')}, 0))`.execute(trx);
}
