import type { Reader, Writer } from '../database.js';
import { engineOf } from '../engine.js';
import type { ConversionsTable, RefundsTable } from '../schema.js';

/** The conversion an order's refund applies to: its id, time, value and what is refunded so far. */
export type RefundTarget = Pick<
  ConversionsTable,
  'id' | 'event_time' | 'event_type' | 'order_id' | 'value_minor' | 'currency' | 'attributed'
> & { refunded_minor: number };

export async function findRefund(
  db: Reader,
  key: { storeId: string; livemode: number; refundId: string },
): Promise<RefundsTable | undefined> {
  return db
    .selectFrom('refunds')
    .selectAll()
    .where('store_id', '=', key.storeId)
    .where('livemode', '=', key.livemode)
    .where('refund_id', '=', key.refundId)
    .executeTakeFirst();
}

/**
 * The conversions recorded for an order in a store and mode: at most one per eventType (the
 * conversion key), by (id, time). On PostgreSQL from the unpartitioned `conversion_keys`.
 */
export async function conversionsOfOrder(
  db: Reader,
  key: { storeId: string; livemode: number; orderId: string },
): Promise<{ id: string; eventType: string; eventTime: number }[]> {
  return engineOf(db).conversions.ofOrder(db, key, 2);
}

/** The Purchase of an order, by its key (index-backed on both engines). */
export async function purchaseOfOrder(
  db: Reader,
  key: { storeId: string; livemode: number; orderId: string },
): Promise<{ id: string; eventTime: number } | undefined> {
  return engineOf(db).conversions.idOfKey(db, { ...key, eventType: 'Purchase' });
}

/**
 * The conversion to refund, locked until the transaction ends on PostgreSQL (`for update`: two
 * refunds of one conversion take turns, each reading the total the other left; SQLite has one
 * writer). By id and time: one partition.
 */
export function lockRefundTarget(db: Writer, id: string, eventTime: number): Promise<RefundTarget | undefined> {
  return refundTarget(db, id, eventTime, true);
}

/** The conversion a refund applies to, by id and time (locked for update on PostgreSQL when `lock`). */
export async function refundTarget(db: Reader, id: string, eventTime: number, lock = false): Promise<RefundTarget | undefined> {
  const row = await db
    .selectFrom('conversions')
    .select(['id', 'event_time', 'event_type', 'order_id', 'value_minor', 'currency', 'attributed', 'refunded_minor'])
    .where('id', '=', id)
    .where('event_time', '=', eventTime)
    .$if(lock, engineOf(db).locks.forUpdate)
    .executeTakeFirst();
  return row && { ...row, refunded_minor: Number(row.refunded_minor ?? 0) };
}

/** Inserts a refund unless its key (store, mode, refundId) exists; true when inserted. */
export async function insertRefund(db: Writer, row: RefundsTable): Promise<boolean> {
  const result = await db
    .insertInto('refunds')
    .values(row)
    .onConflict((oc) => oc.columns(['store_id', 'livemode', 'refund_id']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
}

/** Sets a conversion's refunded total (its row is locked by `lockRefundTarget`). */
export async function setRefunded(db: Writer, id: string, eventTime: number, refundedMinor: number): Promise<void> {
  await db
    .updateTable('conversions')
    .set({ refunded_minor: refundedMinor })
    .where('id', '=', id)
    .where('event_time', '=', eventTime)
    .execute();
}

/** A refund as the rollups need it (analytics/fold.ts). */
export type RefundFact = Pick<
  RefundsTable,
  'id' | 'store_id' | 'livemode' | 'conversion_id' | 'amount_minor' | 'refunded_after_minor' | 'currency' | 'refund_time'
>;

const REFUND_FACT_COLUMNS = [
  'id',
  'store_id',
  'livemode',
  'conversion_id',
  'amount_minor',
  'refunded_after_minor',
  'currency',
  'refund_time',
] as const;

/** Numbers as numbers (PostgreSQL returns bigint columns as strings). */
const refundFact = (r: RefundFact): RefundFact => ({
  ...r,
  livemode: Number(r.livemode),
  amount_minor: Number(r.amount_minor),
  refunded_after_minor: Number(r.refunded_after_minor),
  refund_time: Number(r.refund_time),
});

const ID_CHUNK = 500;

/** The refunds with the given ids (refunds.id). */
export async function refundFacts(db: Reader, ids: string[]): Promise<RefundFact[]> {
  const facts: RefundFact[] = [];
  for (let i = 0; i < ids.length; i += ID_CHUNK) {
    const rows = await db
      .selectFrom('refunds')
      .select(REFUND_FACT_COLUMNS)
      .where('id', 'in', ids.slice(i, i + ID_CHUNK))
      .execute();
    facts.push(...rows.map(refundFact));
  }
  return facts;
}

/** Every refund of one conversion (index refunds_conversion). */
export async function refundsOfConversion(db: Reader, conversionId: string): Promise<RefundFact[]> {
  const rows = await db.selectFrom('refunds').select(REFUND_FACT_COLUMNS).where('conversion_id', '=', conversionId).execute();
  return rows.map(refundFact);
}
