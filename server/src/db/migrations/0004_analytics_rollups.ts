import type { CreateTableBuilder, Kysely } from 'kysely';
import { engineOf } from '../engine.js';

/**
 * Rollups for analytics: clicks and conversions pre-aggregated per store, mode and local day /
 * local hour (in the time zone recorded per store in `rollup_stores`), maintained off the request
 * path by a catch-up step that folds in the rows inserted since a watermark (rowid). Reads run
 * the catch-up first, so rollups are always exact. Empty until the first catch-up, which folds
 * in every existing row.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // On SQLite the rollup tables are clustered on their key (reads are range scans of it).
  const { clusteredOnKey: onKey } = engineOf(db).migrations;

  // Watermarks: the highest rowid of `clicks` / `conversions` already folded in.
  await db.schema
    .createTable('rollup_state')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value', 'bigint', (c) => c.notNull())
    .execute();

  // The time zone (and the platform's time zone data version) each store's rollups are computed
  // in: when either changes, the store's rollups are rebuilt, in steps. While a rebuild runs,
  // `rebuild_*` hold how far it got (rowids) and the watermarks it must reach.
  await db.schema
    .createTable('rollup_stores')
    .addColumn('store_id', 'text', (c) => c.primaryKey())
    .addColumn('timezone', 'text', (c) => c.notNull())
    .addColumn('tzdata', 'text', (c) => c.notNull())
    .addColumn('rebuild_clicks', 'bigint')
    .addColumn('rebuild_conversions', 'bigint')
    .addColumn('rebuild_until_clicks', 'bigint')
    .addColumn('rebuild_until_conversions', 'bigint')
    .execute();

  // Totals per local day and per local hour; `currency` is '' on the row that carries the clicks.
  const totals = <T extends string, C extends string>(table: CreateTableBuilder<T, C>) =>
    table
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('clicks', 'bigint', (c) => c.notNull())
      .addColumn('conversions', 'bigint', (c) => c.notNull())
      .addColumn('attributed', 'bigint', (c) => c.notNull())
      .addColumn('purchases', 'bigint', (c) => c.notNull())
      .addColumn('revenue_minor', 'bigint', (c) => c.notNull())
      .addColumn('attributed_revenue_minor', 'bigint', (c) => c.notNull());
  await onKey(
    totals(
      db.schema
        .createTable('rollup_days')
        .addColumn('store_id', 'text', (c) => c.notNull())
        .addColumn('livemode', 'integer', (c) => c.notNull())
        .addColumn('local_date', 'text', (c) => c.notNull()),
    ).addPrimaryKeyConstraint('rollup_days_pk', ['store_id', 'livemode', 'local_date', 'currency']),
  ).execute();
  await onKey(
    totals(
      db.schema
        .createTable('rollup_hours')
        .addColumn('store_id', 'text', (c) => c.notNull())
        .addColumn('livemode', 'integer', (c) => c.notNull())
        .addColumn('local_date', 'text', (c) => c.notNull())
        .addColumn('hour_start', 'bigint', (c) => c.notNull()),
    ).addPrimaryKeyConstraint('rollup_hours_pk', ['store_id', 'livemode', 'local_date', 'hour_start', 'currency']),
  ).execute();

  // Non-bot clicks per local day and dimension value ('' = the click has no value).
  await onKey(
    db.schema
      .createTable('rollup_dimension_clicks')
      .addColumn('store_id', 'text', (c) => c.notNull())
      .addColumn('livemode', 'integer', (c) => c.notNull())
      .addColumn('dimension', 'text', (c) => c.notNull())
      .addColumn('local_date', 'text', (c) => c.notNull())
      .addColumn('value', 'text', (c) => c.notNull())
      .addColumn('clicks', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('rollup_dimension_clicks_pk', ['store_id', 'livemode', 'dimension', 'local_date', 'value']),
  ).execute();

  // Conversion credit per model, local day of the conversion, dimension value of the credited
  // click and conversion currency: `units` of conversions (1,000,000 per conversion) and the
  // credited Purchase value in minor units.
  await onKey(
    db.schema
      .createTable('rollup_dimension_credits')
      .addColumn('store_id', 'text', (c) => c.notNull())
      .addColumn('livemode', 'integer', (c) => c.notNull())
      .addColumn('dimension', 'text', (c) => c.notNull())
      .addColumn('model', 'text', (c) => c.notNull())
      .addColumn('local_date', 'text', (c) => c.notNull())
      .addColumn('value', 'text', (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('units', 'bigint', (c) => c.notNull())
      .addColumn('revenue_minor', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('rollup_dimension_credits_pk', [
        'store_id',
        'livemode',
        'dimension',
        'model',
        'local_date',
        'value',
        'currency',
      ]),
  ).execute();
}
