import { type Kysely, sql } from 'kysely';
import { engineOf } from '../engine.js';

/**
 * The reconciliation report and the match-quality summary (api.md §10) read rollups instead of
 * every conversion of the range: `rollup_reports` holds, per store, mode, report, local day of
 * the conversion's event time, destination and item, a count (analytics/report-fold.ts). Items
 * of the reconciliation: `received`, `attributed`, `refunded` (destination ''), and per
 * destination `pending`, `sent`, `acknowledged`, `failed|<reason>`, `skipped|<reason>`,
 * `trace|<trace id>`; of match quality per destination: `conversions`, `tenths`,
 * `missing|<key>`, `warning|<code>`.
 *
 * The table fills like every rollup: marking each store's recorded time zone data as outdated
 * makes the next read (or the background refresher) delete the store's rollups and queue all of
 * its events again (analytics/rollups.ts `rebuildIfZoneChanged`), as migration 0034 did. It is
 * created only when absent, so the migration may run again harmlessly. Down drops it and marks
 * the rollups for a rebuild by the older version.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const { clusteredOnKey: onKey } = engineOf(db).migrations;
  await onKey(
    db.schema
      .createTable('rollup_reports')
      .ifNotExists()
      .addColumn('store_id', 'text', (c) => c.notNull())
      .addColumn('livemode', 'integer', (c) => c.notNull())
      .addColumn('report', 'text', (c) => c.notNull())
      .addColumn('local_date', 'text', (c) => c.notNull())
      .addColumn('destination', 'text', (c) => c.notNull())
      .addColumn('item', 'text', (c) => c.notNull())
      .addColumn('count', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('rollup_reports_pk', ['store_id', 'livemode', 'report', 'local_date', 'destination', 'item']),
  ).execute();
  await sql`update rollup_stores set tzdata = ${'rebuild:0035'}`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('rollup_reports').ifExists().execute();
  await sql`update rollup_stores set tzdata = ${'rebuild:0035-down'}`.execute(db);
}
