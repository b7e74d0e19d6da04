import type { Kysely } from 'kysely';
import { engineOf } from '../engine.js';

/**
 * PostgreSQL: the evidence function (db/postgres/attribution-evidence.ts) runs each lookup only
 * when the conversion has its value. As one UNION ALL with a generic plan it started every
 * branch's scans on the window's partitions on every call: 1.33 ms a conversion at 2M clicks,
 * 0.44 ms guarded (bench/README.md). Same parameters and rows. SQLite: nothing.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await engineOf(db).migrations.guardedEvidenceFunction(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await engineOf(db).migrations.identityEvidenceFunction(db);
}
