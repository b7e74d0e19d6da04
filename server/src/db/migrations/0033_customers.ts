import { type Kysely, sql } from 'kysely';

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

interface Row {
  id: string;
  store_id: string;
  livemode: number;
  customer_key: string;
  attributed: number;
  attributed_click_ids: string | null;
  attributed_fbclid: string | null;
  ref_fbclid: string | null;
  ref_fbc: string | null;
  ref_ids: string | null;
}

/**
 * The channel of each click id kind, as it stood when this migration shipped (click-channel.ts
 * `CHANNEL_OF_KIND`): a copy, so that what the migration does never changes with the app's code
 * (and db/ imports nothing above it).
 */
const CHANNEL_OF_KIND: Record<string, string> = {
  fbclid: 'meta',
  gclid: 'google_ads',
  gbraid: 'google_ads',
  wbraid: 'google_ads',
  ttclid: 'tiktok',
  msclkid: 'microsoft',
  epik: 'pinterest',
  ScCid: 'snapchat',
  rdt_cid: 'reddit',
  li_fat_id: 'linkedin',
};

/** The first conversion's channel, as click-channel.ts `channelOf` read it then; `unattributed` when none. */
function firstChannelOf(row: Row): string {
  if (row.attributed !== 1) return 'unattributed';
  let ids: Record<string, string> = {};
  if (row.attributed_click_ids) ids = JSON.parse(row.attributed_click_ids) as Record<string, string>;
  else if (row.attributed_fbclid) {
    const key = row.attributed_fbclid;
    const colon = key.indexOf(':');
    ids = colon < 0 ? { fbclid: key } : { [key.slice(0, colon)]: key.slice(colon + 1) };
  }
  const named: string[] = [];
  if (row.ref_fbclid || row.ref_fbc) named.push('fbclid');
  if (row.ref_ids) named.push(...Object.keys(JSON.parse(row.ref_ids) as Record<string, string>));
  const kind = named.find((k) => ids[k] !== undefined) ?? Object.keys(ids).find((k) => k in CHANNEL_OF_KIND);
  return (kind && CHANNEL_OF_KIND[kind]) || 'unattributed';
}

/** The channel of each attributed first conversion (it reads JSON: done here, in pages). */
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
