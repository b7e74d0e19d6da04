import { type Kysely, sql } from 'kysely';
import { engineOf } from '../engine.js';

/**
 * Cohort rollups (analytics/cohort-rollups.ts): the first-purchase cohorts' net Purchase value
 * per local day of the customer's first conversion (and per local month of it), the channel
 * of that conversion, day after it and currency — so a year of cohorts reads a few thousand
 * rows instead of every customer's conversions; and how many customers each first day has (on
 * the customer's own cell: day 0, no currency).
 * - `rollup_cohort_customers`: what each customer adds to them (its first local day, channel
 *   and cells as JSON) with a version, so a customer is folded again by subtracting that and
 *   adding what its stored conversions and refunds add up to now;
 * - `rollup_cohort_queue`: customers to fold again (every customer now: the background
 *   refresher folds them, and a cohort read folds its store's first).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const { clusteredOnKey: onKey } = engineOf(db).migrations;
  await onKey(
    db.schema
      .createTable('rollup_cohort_customers')
      .ifNotExists()
      .addColumn('store_id', 'text', (c) => c.notNull())
      .addColumn('livemode', 'integer', (c) => c.notNull())
      .addColumn('customer_key', 'text', (c) => c.notNull())
      .addColumn('first_date', 'text', (c) => c.notNull())
      .addColumn('channel', 'text', (c) => c.notNull())
      .addColumn('cells', 'text', (c) => c.notNull())
      .addColumn('version', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('rollup_cohort_customers_pk', ['store_id', 'livemode', 'customer_key']),
  ).execute();
  await onKey(
    db.schema
      .createTable('rollup_cohort_queue')
      .ifNotExists()
      .addColumn('store_id', 'text', (c) => c.notNull())
      .addColumn('livemode', 'integer', (c) => c.notNull())
      .addColumn('customer_key', 'text', (c) => c.notNull())
      .addColumn('version', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('rollup_cohort_queue_pk', ['store_id', 'livemode', 'customer_key']),
  ).execute();
  for (const [table, period] of [
    ['rollup_cohort_days', 'first_date'],
    ['rollup_cohort_months', 'first_month'],
  ] as const) {
    await onKey(
      db.schema
        .createTable(table)
        .ifNotExists()
        .addColumn('store_id', 'text', (c) => c.notNull())
        .addColumn('livemode', 'integer', (c) => c.notNull())
        .addColumn(period, 'text', (c) => c.notNull())
        .addColumn('channel', 'text', (c) => c.notNull())
        .addColumn('day_offset', 'integer', (c) => c.notNull())
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('net_minor', 'bigint', (c) => c.notNull())
        .addColumn('net_fx_minor', 'bigint', (c) => c.notNull())
        .addColumn('customers', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint(`${table}_pk`, ['store_id', 'livemode', period, 'channel', 'day_offset', 'currency']),
    ).execute();
  }
  // The cohorts' spend per month and platform: a year's 73,000 entries read from the index alone.
  await sql`create index if not exists ad_spend_dates on ad_spend (store_id, livemode, date, platform, currency, amount_minor)`.execute(
    db,
  );
  await sql`insert into rollup_cohort_queue (store_id, livemode, customer_key, version)
    select store_id, livemode, customer_key, 0 from customers where true
    on conflict (store_id, livemode, customer_key) do nothing`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists ad_spend_dates`.execute(db);
  for (const table of ['rollup_cohort_months', 'rollup_cohort_days', 'rollup_cohort_queue', 'rollup_cohort_customers']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
