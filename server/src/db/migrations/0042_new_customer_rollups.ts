import { type Kysely, sql } from 'kysely';
import { engineOf } from '../engine.js';

/**
 * New customers per local day (and month) of their first conversion, channel and campaign of
 * its credited click — the channel report's `newCustomers` and CAC, kept by the cohort fold
 * (analytics/cohort-rollups.ts) beside the cohorts: a year's report reads ~2,400 month rows, not
 * every customer of the year (`customers_first`, 41–61 ms on PostgreSQL at 100,000 customers).
 * A customer's recorded contribution (`rollup_cohort_customers`) gains its campaign; every
 * cohort rollup starts again from nothing and every customer is queued (the fold rebuilds both;
 * a read folds its store's customers first). `customers_first` and `customers_campaigns`
 * (migrations 0037, 0038), which only that count read, go: two index entries less to write per
 * new customer. Runs again harmlessly.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const { clusteredOnKey: onKey } = engineOf(db).migrations;
  await db.schema.dropTable('rollup_cohort_customers').ifExists().execute();
  await onKey(
    db.schema
      .createTable('rollup_cohort_customers')
      .addColumn('store_id', 'text', (c) => c.notNull())
      .addColumn('livemode', 'integer', (c) => c.notNull())
      .addColumn('customer_key', 'text', (c) => c.notNull())
      .addColumn('first_date', 'text', (c) => c.notNull())
      .addColumn('channel', 'text', (c) => c.notNull())
      .addColumn('campaign_id', 'text', (c) => c.notNull())
      .addColumn('cells', 'text', (c) => c.notNull())
      .addColumn('version', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('rollup_cohort_customers_pk', ['store_id', 'livemode', 'customer_key']),
  ).execute();
  for (const [table, period] of [
    ['rollup_new_customer_days', 'first_date'],
    ['rollup_new_customer_months', 'first_month'],
  ] as const) {
    await onKey(
      db.schema
        .createTable(table)
        .ifNotExists()
        .addColumn('store_id', 'text', (c) => c.notNull())
        .addColumn('livemode', 'integer', (c) => c.notNull())
        .addColumn(period, 'text', (c) => c.notNull())
        .addColumn('channel', 'text', (c) => c.notNull())
        .addColumn('campaign_id', 'text', (c) => c.notNull())
        .addColumn('customers', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint(`${table}_pk`, ['store_id', 'livemode', period, 'channel', 'campaign_id']),
    ).execute();
  }
  for (const table of ['rollup_cohort_days', 'rollup_cohort_months', 'rollup_new_customer_days', 'rollup_new_customer_months']) {
    await sql`delete from ${sql.table(table)}`.execute(db);
  }
  await sql`drop index if exists customers_first`.execute(db);
  await sql`drop index if exists customers_campaigns`.execute(db);
  await sql`insert into rollup_cohort_queue (store_id, livemode, customer_key, version)
    select store_id, livemode, customer_key, 0 from customers where true
    on conflict (store_id, livemode, customer_key) do update set version = rollup_cohort_queue.version + 1`.execute(db);
}

/** Back to 0040's contributions (without a campaign) and 0038's indexes; the cohort rows stay as they are. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`create index if not exists customers_first on customers
    (store_id, livemode, first_event_time, channel, campaign_id)`.execute(db);
  await sql`create index if not exists customers_campaigns on customers
    (store_id, livemode, channel, campaign_id, first_event_time)`.execute(db);
  await db.schema.dropTable('rollup_new_customer_months').ifExists().execute();
  await db.schema.dropTable('rollup_new_customer_days').ifExists().execute();
  await sql`alter table rollup_cohort_customers drop column campaign_id`.execute(db);
}
