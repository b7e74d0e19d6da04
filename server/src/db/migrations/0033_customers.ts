import { type Kysely, sql } from 'kysely';
import { firstChannelOf } from '../../customers/identity.js';

/**
 * Customers (api.md §11 "Customers"; docs/api.md "Customers and cohorts").
 * - `conversions.customer_key`: `em:<hashed email>`, else `ph:<hashed phone>`, else null
 *   (customers/identity.ts); `conversions_customer` finds a customer's conversions in time order.
 * - `customers`: one row per (store, mode, customer key) holding the customer's first conversion
 *   by event time (ties by id) and the channel that conversion is credited to. Every recorded
 *   conversion upserts it in the conversion's own write (an earlier one arriving later takes the
 *   place), so "is this conversion the customer's first" is one primary-key read, and a cohort
 *   is a range of `customers_first`.
 * Backfilled here from the conversions already recorded.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('conversions').addColumn('customer_key', 'text').execute();
  await sql`update conversions set customer_key = case
      when email_hash is not null and email_hash <> '' then 'em:' || email_hash
      else 'ph:' || phone_hash end
    where (email_hash is not null and email_hash <> '') or (phone_hash is not null and phone_hash <> '')`.execute(db);
  await db.schema
    .createIndex('conversions_customer')
    .on('conversions')
    .columns(['store_id', 'livemode', 'customer_key', 'event_time'])
    .execute();
  await db.schema
    .createTable('customers')
    .addColumn('store_id', 'text', (c) => c.notNull())
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('customer_key', 'text', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('first_conversion_id', 'text', (c) => c.notNull())
    .addColumn('first_event_time', 'bigint', (c) => c.notNull())
    .addColumn('channel', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('customers_pk', ['store_id', 'livemode', 'customer_key'])
    .execute();
  await db.schema.createIndex('customers_first').on('customers').columns(['store_id', 'livemode', 'first_event_time']).execute();
  await sql`insert into customers (store_id, livemode, customer_key, account_id, first_conversion_id, first_event_time, channel)
    select store_id, livemode, customer_key, account_id, id, event_time, 'unattributed' from (
      select store_id, livemode, customer_key, account_id, id, event_time, row_number() over (
        partition by store_id, livemode, customer_key order by event_time, id) as position
      from conversions where customer_key is not null) firsts
    where position = 1`.execute(db);
  await backfillChannels(db);
}

type Row = Parameters<typeof firstChannelOf>[0] & { id: string; store_id: string; livemode: number; customer_key: string };

/** The channel of each attributed first conversion (click-channel.ts reads JSON: done here, in pages). */
async function backfillChannels(db: Kysely<unknown>): Promise<void> {
  let after = '';
  for (;;) {
    const { rows } =
      await sql<Row>`select c.id, u.store_id, u.livemode, u.customer_key, c.attributed, c.attributed_click_ids, c.attributed_fbclid, c.ref_fbclid,
        c.ref_fbc, c.ref_ids
      from customers u join conversions c on c.id = u.first_conversion_id and c.event_time = u.first_event_time
      where c.attributed = 1 and c.id > ${after} order by c.id limit 1000`.execute(db);
    if (rows.length === 0) return;
    for (const row of rows) {
      await sql`update customers set channel = ${firstChannelOf(row)}
        where store_id = ${row.store_id} and livemode = ${row.livemode} and customer_key = ${row.customer_key}`.execute(db);
    }
    after = rows[rows.length - 1]?.id ?? after;
  }
}
