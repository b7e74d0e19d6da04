import { type Kysely, sql } from 'kysely';
import { engineOf } from '../engine.js';

/**
 * `rollup_spend_months`: the ad spend entries summed per month of their dates, platform, campaign
 * and currency (schema-spend.ts). The 365-day channel report, tracking health and cohorts each
 * summed the year's entries (73,200 for 200 campaigns: 60–80 ms on PostgreSQL); they now read
 * the range's whole months here and its partial first and last months by day. Spend writes
 * recompute the months they touch from the entries (repositories/spend.ts); this migration fills
 * it from the entries stored.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const { clusteredOnKey: onKey } = engineOf(db).migrations;
  await onKey(
    db.schema
      .createTable('rollup_spend_months')
      .ifNotExists()
      .addColumn('store_id', 'text', (c) => c.notNull())
      .addColumn('livemode', 'integer', (c) => c.notNull())
      .addColumn('month', 'text', (c) => c.notNull())
      .addColumn('platform', 'text', (c) => c.notNull())
      .addColumn('campaign_id', 'text', (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('amount_minor', 'bigint', (c) => c.notNull())
      .addColumn('entries', 'bigint', (c) => c.notNull())
      .addColumn('campaign_name', 'text')
      .addPrimaryKeyConstraint('rollup_spend_months_pk', [
        'store_id',
        'livemode',
        'month',
        'platform',
        'campaign_id',
        'currency',
      ]),
  ).execute();
  // From nothing (a rerun of this migration, after a downgrade and upgrade, starts over).
  await sql`delete from rollup_spend_months`.execute(db);
  await sql`insert into rollup_spend_months
      (store_id, livemode, month, platform, campaign_id, currency, amount_minor, entries, campaign_name)
    select store_id, livemode, substr(date, 1, 7), platform, campaign_id, currency,
      sum(amount_minor), count(*), max(campaign_name)
    from ad_spend
    group by store_id, livemode, substr(date, 1, 7), platform, campaign_id, currency`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('rollup_spend_months').ifExists().execute();
}
