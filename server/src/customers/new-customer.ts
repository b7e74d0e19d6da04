/**
 * Whether a conversion is its customer's first (api.md §11 "Customers"): no conversion of the
 * same store and mode with the same customer key (customers/identity.ts) has an earlier event
 * time (ties: the smaller id). `customers` (migration 0033) holds each customer's first, kept
 * by every conversion's write, so the answer is a primary-key read and always reflects the
 * conversions recorded so far: a purchase that arrives late with an earlier event time becomes
 * the first, and the one that was first is from then on shown `new: false`.
 */
import type { Reader } from '../db/database.js';
import { firstConversionsOf } from '../db/repositories/customers.js';
import type { ConversionsTable, CustomersTable } from '../db/schema.js';
import { firstChannelOf } from './identity.js';

/** `customer: {new}` of a conversion item; absent when the conversion has neither email nor phone. */
export type CustomerView = { customer?: { new: boolean } };

/** The `customers` row this conversion would be the first of (upserted with it); `campaignId`: its credited click's. */
export function customerRowOf(row: ConversionsTable, campaignId: string): CustomersTable | undefined {
  if (!row.customer_key) return undefined;
  return {
    store_id: row.store_id,
    livemode: row.livemode,
    customer_key: row.customer_key,
    account_id: row.account_id,
    first_conversion_id: row.id,
    first_event_time: row.event_time,
    channel: firstChannelOf(row),
    campaign_id: firstChannelOf(row) === 'unattributed' ? '' : campaignId,
  };
}

/** For each stored conversion, its `customer` view: one read per store and mode among them. */
export async function customerViews(db: Reader, rows: ConversionsTable[]): Promise<(row: ConversionsTable) => CustomerView> {
  const byScope = new Map<string, { storeId: string; livemode: number; keys: string[] }>();
  for (const row of rows) {
    if (!row.customer_key) continue;
    const scope = `${row.store_id}|${row.livemode}`;
    const entry = byScope.get(scope) ?? { storeId: row.store_id, livemode: row.livemode, keys: [] };
    entry.keys.push(row.customer_key);
    byScope.set(scope, entry);
  }
  const firsts = new Map<string, { id: string; time: number }>();
  for (const [scope, { storeId, livemode, keys }] of byScope) {
    for (const [key, first] of await firstConversionsOf(db, storeId, livemode, keys)) firsts.set(`${scope}|${key}`, first);
  }
  return (row) => {
    if (!row.customer_key) return {};
    const first = firsts.get(`${row.store_id}|${row.livemode}|${row.customer_key}`);
    // Before the conversion's own write (its webhook event is built then) it is new when no
    // customer is known or it is earlier than the known first; after it, `customers` holds the earliest.
    const isNew =
      first === undefined ||
      first.id === row.id ||
      row.event_time < first.time ||
      (row.event_time === first.time && row.id < first.id);
    return { customer: { new: isNew } };
  };
}

/** The `customer` view of one stored conversion. */
export async function customerViewOf(db: Reader, row: ConversionsTable): Promise<CustomerView> {
  return (await customerViews(db, [row]))(row);
}
