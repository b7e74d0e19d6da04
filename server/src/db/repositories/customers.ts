import { sql } from 'kysely';
import type { Reader, Writer } from '../database.js';
import { prepared, preparedQuery } from '../prepared.js';
import type { CustomersTable } from '../schema.js';

/**
 * Records a conversion's customer (SQLite; PostgreSQL does it in the conversion's statement:
 * db/postgres/conversions.ts): a new key inserts it; a known one takes this conversion as its
 * first only when it is earlier by (event time, id) — a late-arriving earlier purchase moves
 * the customer's first to it, so the other one is no longer new.
 */
export async function upsertCustomer(db: Writer, row: CustomersTable): Promise<void> {
  await upsert(db, row);
}

/** Built once (prepared.ts): it runs with every conversion that has an email or phone. */
const upsert = prepared((db, row: CustomersTable) =>
  db
    .insertInto('customers')
    .values(row)
    .onConflict((oc) =>
      oc
        .columns(['store_id', 'livemode', 'customer_key'])
        .doUpdateSet({
          first_conversion_id: (eb) => eb.ref('excluded.first_conversion_id'),
          first_event_time: (eb) => eb.ref('excluded.first_event_time'),
          channel: (eb) => eb.ref('excluded.channel'),
          campaign_id: (eb) => eb.ref('excluded.campaign_id'),
        })
        .where(
          sql<boolean>`(excluded.first_event_time, excluded.first_conversion_id) < (customers.first_event_time, customers.first_conversion_id)`,
        ),
    ),
);

/** The first conversion (id, event time) of each of these customers of a store and mode (primary-key reads). */
export async function firstConversionsOf(
  db: Reader,
  storeId: string,
  livemode: number,
  keys: string[],
): Promise<Map<string, { id: string; time: number }>> {
  if (keys.length === 0) return new Map();
  // One customer (every conversion's write asks for its own): the statement built once.
  const rows =
    keys.length === 1
      ? (await firstOfOne(db, { storeId, livemode, key: keys[0] as string })).rows
      : await firstsOf(db, storeId, livemode, keys);
  return new Map(rows.map((r) => [r.customer_key, { id: r.first_conversion_id, time: Number(r.first_event_time) }]));
}

const firstOfOne = preparedQuery((db, v: { storeId: string; livemode: number; key: string }) =>
  db
    .selectFrom('customers')
    .select(['customer_key', 'first_conversion_id', 'first_event_time'])
    .where('store_id', '=', v.storeId)
    .where('livemode', '=', v.livemode)
    .where('customer_key', '=', v.key),
);

function firstsOf(db: Reader, storeId: string, livemode: number, keys: string[]) {
  return db
    .selectFrom('customers')
    .select(['customer_key', 'first_conversion_id', 'first_event_time'])
    .where('store_id', '=', storeId)
    .where('livemode', '=', livemode)
    .where('customer_key', 'in', [...new Set(keys)])
    .execute();
}

/** A customer's first-conversion channel and campaign after that conversion was re-attributed (tracking/reattribution.ts). */
export async function setFirstChannel(
  db: Writer,
  first: { storeId: string; livemode: number; customerKey: string; conversionId: string },
  channel: string,
  campaignId: string,
): Promise<void> {
  await db
    .updateTable('customers')
    .set({ channel, campaign_id: channel === 'unattributed' ? '' : campaignId })
    .where('store_id', '=', first.storeId)
    .where('livemode', '=', first.livemode)
    .where('customer_key', '=', first.customerKey)
    .where('first_conversion_id', '=', first.conversionId)
    .execute();
}
