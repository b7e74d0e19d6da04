import type { Kysely } from 'kysely';
import { engineOf } from '../engine.js';

/**
 * PostgreSQL only: a conversion's evidence lookup becomes a function whose plan is generic,
 * every branch bounded by the window (db/postgres/migrations.ts says why). SQLite has nothing to do.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await engineOf(db).migrations.evidenceFunction(db);
}
