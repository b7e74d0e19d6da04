import { type Kysely, sql } from 'kysely';

/**
 * The channel report (api.md §11) reads the rollups' `channel_campaign` dimension (analytics/
 * fold.ts): clicks and each model's credited conversions, revenue and refunds per channel of the
 * credited click and its campaign id. Rows folded before this version lack it, so every store's
 * rollups are rebuilt: marking their recorded time zone data as outdated makes the next read (or
 * the background refresher) delete them and queue all of the store's events again in one
 * transaction (analytics/rollups.ts `rebuildIfZoneChanged`), exactly as after a time zone change,
 * on either engine. Down does the same, so rollups folded by this version are rebuilt by the older one.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`update rollup_stores set tzdata = ${'rebuild:0034'}`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`update rollup_stores set tzdata = ${'rebuild:0034-down'}`.execute(db);
}
