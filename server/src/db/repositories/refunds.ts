import type { Reader, Writer } from '../database.js';
import { isPostgres } from '../dialect.js';
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
  if (isPostgres(db)) {
    const rows = await db
      .selectFrom('conversion_keys')
      .select(['conversion_id', 'event_type', 'event_time'])
      .where('store_id', '=', key.storeId)
      .where('livemode', '=', key.livemode)
      .where('order_id', '=', key.orderId)
      .limit(2)
      .execute();
    return rows.map((r) => ({ id: r.conversion_id, eventType: r.event_type, eventTime: Number(r.event_time) }));
  }
  const rows = await db
    .selectFrom('conversions')
    .select(['id', 'event_type', 'event_time'])
    .where('store_id', '=', key.storeId)
    .where('livemode', '=', key.livemode)
    .where('order_id', '=', key.orderId)
    .limit(2)
    .execute();
  return rows.map((r) => ({ id: r.id, eventType: r.event_type, eventTime: r.event_time }));
}

/** The Purchase of an order, by its key (index-backed on both engines). */
export async function purchaseOfOrder(
  db: Reader,
  key: { storeId: string; livemode: number; orderId: string },
): Promise<{ id: string; eventTime: number } | undefined> {
  if (isPostgres(db)) {
    const row = await db
      .selectFrom('conversion_keys')
      .select(['conversion_id', 'event_time'])
      .where('store_id', '=', key.storeId)
      .where('livemode', '=', key.livemode)
      .where('event_type', '=', 'Purchase')
      .where('order_id', '=', key.orderId)
      .executeTakeFirst();
    return row && { id: row.conversion_id, eventTime: Number(row.event_time) };
  }
  const row = await db
    .selectFrom('conversions')
    .select(['id', 'event_time'])
    .where('store_id', '=', key.storeId)
    .where('livemode', '=', key.livemode)
    .where('event_type', '=', 'Purchase')
    .where('order_id', '=', key.orderId)
    .executeTakeFirst();
  return row && { id: row.id, eventTime: row.event_time };
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
    .$if(lock && isPostgres(db), (qb) => qb.forUpdate())
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

/**
 * Refunds of Purchase conversions of a store and mode with refund time in [from, to), per
 * currency: all of them, and those of conversions attributed now. Read from `refunds` itself
 * (index refunds_time), not from the rollups: refunds are few, and so a reattribution moves
 * its refunds at once.
 */
export async function sumRefunds(
  db: Reader,
  storeId: string,
  livemode: number,
  range: { from: number; to: number },
): Promise<Array<{ currency: string; total: number; attributed: number }>> {
  const rows = await db
    .selectFrom('refunds as r')
    .innerJoin('conversions as c', (join) =>
      join.onRef('c.id', '=', 'r.conversion_id').onRef('c.event_time', '=', 'r.conversion_time'),
    )
    .select((eb) => [
      'r.currency as currency',
      eb.fn.sum<number>('r.amount_minor').as('total'),
      eb.fn.sum<number>(eb.case().when('c.attributed', '=', 1).then(eb.ref('r.amount_minor')).else(0).end()).as('attributed'),
    ])
    .where('r.store_id', '=', storeId)
    .where('r.livemode', '=', livemode)
    .where('r.refund_time', '>=', range.from)
    .where('r.refund_time', '<', range.to)
    .where('c.event_type', '=', 'Purchase')
    .groupBy('r.currency')
    .execute();
  return rows.map((r) => ({ currency: r.currency, total: Number(r.total), attributed: Number(r.attributed) }));
}

/** The refunds of Purchase conversions in one currency with refund time in [from, to): time and amount, for buckets. */
export async function refundsInRange(
  db: Reader,
  storeId: string,
  livemode: number,
  range: { from: number; to: number },
  currency: string,
): Promise<Array<{ time: number; amountMinor: number }>> {
  const rows = await db
    .selectFrom('refunds as r')
    .innerJoin('conversions as c', (join) =>
      join.onRef('c.id', '=', 'r.conversion_id').onRef('c.event_time', '=', 'r.conversion_time'),
    )
    .select(['r.refund_time', 'r.amount_minor'])
    .where('r.store_id', '=', storeId)
    .where('r.livemode', '=', livemode)
    .where('r.refund_time', '>=', range.from)
    .where('r.refund_time', '<', range.to)
    .where('r.currency', '=', currency)
    .where('c.event_type', '=', 'Purchase')
    .execute();
  return rows.map((r) => ({ time: Number(r.refund_time), amountMinor: Number(r.amount_minor) }));
}
