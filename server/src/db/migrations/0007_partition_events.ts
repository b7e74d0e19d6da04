import type { Kysely } from 'kysely';
import { engineOf } from '../engine.js';

/**
 * PostgreSQL only: clicks and conversions become tables range-partitioned by month of their
 * event time, their dedup keys kept in the key tables `click_keys` and `conversion_keys`
 * (db/postgres/migrations.ts says how and why). SQLite keeps its tables as they are.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await engineOf(db).migrations.partitionEvents(db);
}
