import { type Kysely, sql } from 'kysely';
import { engineOf } from '../engine.js';

/**
 * Month rollups of the dimension rollups (analytics/rollups.ts): `rollup_month_clicks` and
 * `rollup_month_credits` hold the same sums as `rollup_dimension_clicks` / `_credits` per local
 * month (`YYYY-MM`) instead of per local day. A long range reads its whole months here and only
 * its partial first and last months by day (db/repositories/rollup-reads.ts): a year of a
 * store's 200 campaigns is about 2,400 rows per model instead of 73,000. Every fold adds its
 * deltas to both (rollup-writes.ts); this migration fills them from the daily rows, which stay
 * the source of every other read.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const { clusteredOnKey: onKey } = engineOf(db).migrations;
  await onKey(
    db.schema
      .createTable('rollup_month_clicks')
      .ifNotExists()
      .addColumn('store_id', 'text', (c) => c.notNull())
      .addColumn('livemode', 'integer', (c) => c.notNull())
      .addColumn('dimension', 'text', (c) => c.notNull())
      .addColumn('local_month', 'text', (c) => c.notNull())
      .addColumn('value', 'text', (c) => c.notNull())
      .addColumn('clicks', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('rollup_month_clicks_pk', ['store_id', 'livemode', 'dimension', 'local_month', 'value']),
  ).execute();
  await onKey(
    db.schema
      .createTable('rollup_month_credits')
      .ifNotExists()
      .addColumn('store_id', 'text', (c) => c.notNull())
      .addColumn('livemode', 'integer', (c) => c.notNull())
      .addColumn('dimension', 'text', (c) => c.notNull())
      .addColumn('model', 'text', (c) => c.notNull())
      .addColumn('local_month', 'text', (c) => c.notNull())
      .addColumn('value', 'text', (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('units', 'bigint', (c) => c.notNull())
      .addColumn('revenue_minor', 'bigint', (c) => c.notNull())
      .addColumn('refund_minor', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('rollup_month_credits_pk', [
        'store_id',
        'livemode',
        'dimension',
        'model',
        'local_month',
        'value',
        'currency',
      ]),
  ).execute();
  // From nothing (a rerun of this migration, after a downgrade and upgrade, starts over).
  await sql`delete from rollup_month_clicks`.execute(db);
  await sql`delete from rollup_month_credits`.execute(db);
  await sql`insert into rollup_month_clicks (store_id, livemode, dimension, local_month, value, clicks)
    select store_id, livemode, dimension, substr(local_date, 1, 7), value, sum(clicks)
    from rollup_dimension_clicks
    group by store_id, livemode, dimension, substr(local_date, 1, 7), value`.execute(db);
  await sql`insert into rollup_month_credits
      (store_id, livemode, dimension, model, local_month, value, currency, units, revenue_minor, refund_minor)
    select store_id, livemode, dimension, model, substr(local_date, 1, 7), value, currency,
      sum(units), sum(revenue_minor), sum(refund_minor)
    from rollup_dimension_credits
    group by store_id, livemode, dimension, model, substr(local_date, 1, 7), value, currency`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('rollup_month_credits').ifExists().execute();
  await db.schema.dropTable('rollup_month_clicks').ifExists().execute();
}
