import { type Kysely, sql } from 'kysely';

/**
 * `customers.campaign_id`: the campaign of the click a customer's first conversion is credited
 * to ('' when none, or the click has none), kept beside `channel` by the conversion's write and
 * by re-attribution. The channel report counts new customers per channel and campaign from
 * `customers` alone: one range of `customers_first`, now covering (store, mode, first time,
 * channel, campaign), instead of reading each first conversion and its click (a year's
 * 150,000 customers took minutes). Backfilled from the conversions and clicks recorded.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table customers add column campaign_id text not null default ''`.execute(db);
  await sql`update customers set campaign_id = coalesce((
      select k.campaign_id from conversions c join clicks k on k.id = c.attributed_click_id
      where c.id = customers.first_conversion_id and c.attributed = 1 and k.campaign_id is not null), '')
    where channel <> 'unattributed'`.execute(db);
  await sql`drop index if exists customers_first`.execute(db);
  await db.schema
    .createIndex('customers_first')
    .on('customers')
    .columns(['store_id', 'livemode', 'first_event_time', 'channel', 'campaign_id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists customers_first`.execute(db);
  await db.schema.createIndex('customers_first').on('customers').columns(['store_id', 'livemode', 'first_event_time']).execute();
  await sql`alter table customers drop column campaign_id`.execute(db);
}
