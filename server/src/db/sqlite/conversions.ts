import type { Reader, Writer } from '../database.js';
import type { ConversionKey, ConversionRecord, ConversionStatements } from '../engine.js';
import { prepared, preparedQuery } from '../prepared.js';
import { insertTouchpoint } from '../repositories/conversions.js';
import { upsertCustomer } from '../repositories/customers.js';
import { enqueueForRollups } from '../repositories/rollup-queue.js';
import { fanOut } from '../repositories/webhooks.js';
import type { ConversionsTable } from '../schema.js';

const conversionByKey = preparedQuery((db, key: ConversionKey) =>
  db
    .selectFrom('conversions')
    .selectAll()
    .where('store_id', '=', key.storeId)
    .where('livemode', '=', key.livemode)
    .where('event_type', '=', key.eventType)
    .where('order_id', '=', key.orderId),
);

const insertConversion = prepared((db, row: ConversionsTable) =>
  db
    .insertInto('conversions')
    .values(row)
    .onConflict((oc) => oc.columns(['store_id', 'livemode', 'event_type', 'order_id']).doNothing()),
);

/** The conversions table holds its own unique key (store, mode, eventType, orderId). */
export class SqliteConversions implements ConversionStatements {
  /** The table's unique key decides; then the conversion's dependants, statement by statement. */
  async recordOnce(db: Writer, record: ConversionRecord): Promise<boolean> {
    const { conversion, touchpoints } = record;
    if (Number((await insertConversion(db, conversion)).numAffectedRows ?? 0n) === 0) return false;
    for (const touchpoint of touchpoints) await insertTouchpoint(db, touchpoint);
    await enqueueForRollups(db, 'conversion', [conversion]);
    if (record.jobs?.length) await db.insertInto('destination_jobs').values(record.jobs).execute();
    if (record.webhook) await fanOut(db, record.webhook);
    if (record.customer) await upsertCustomer(db, record.customer);
    return true;
  }

  async byKey(db: Reader, key: ConversionKey): Promise<ConversionsTable | undefined> {
    return (await conversionByKey(db, key)).rows[0];
  }

  async idOfKey(db: Reader, key: ConversionKey): Promise<{ id: string; eventTime: number } | undefined> {
    const row = await db
      .selectFrom('conversions')
      .select(['id', 'event_time'])
      .where('store_id', '=', key.storeId)
      .where('livemode', '=', key.livemode)
      .where('event_type', '=', key.eventType)
      .where('order_id', '=', key.orderId)
      .executeTakeFirst();
    return row && { id: row.id, eventTime: row.event_time };
  }

  async ofOrder(db: Reader, order: { storeId: string; livemode: number; orderId: string }, limit: number) {
    const rows = await db
      .selectFrom('conversions')
      .select(['id', 'event_type', 'event_time'])
      .where('store_id', '=', order.storeId)
      .where('livemode', '=', order.livemode)
      .where('order_id', '=', order.orderId)
      .limit(limit)
      .execute();
    return rows.map((r) => ({ id: r.id, eventType: r.event_type, eventTime: r.event_time }));
  }

  /** The key goes with the conversion. */
  async deleteKeys(): Promise<void> {}
}
