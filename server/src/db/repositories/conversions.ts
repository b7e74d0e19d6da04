import type { Executor } from '../database.js';
import type { ConversionsTable, TouchpointsTable } from '../schema.js';
import { afterKeyset, type Page } from './keyset.js';

export async function findConversionByKey(
  db: Executor,
  key: { storeId: string; livemode: number; eventType: string; orderId: string },
): Promise<ConversionsTable | undefined> {
  return db
    .selectFrom('conversions')
    .selectAll()
    .where('store_id', '=', key.storeId)
    .where('livemode', '=', key.livemode)
    .where('event_type', '=', key.eventType)
    .where('order_id', '=', key.orderId)
    .executeTakeFirst();
}

/**
 * Inserts a conversion and its touchpoints unless (store, mode, eventType, orderId) exists;
 * returns the stored row either way. The unique constraint, not a prior read, decides.
 */
export async function insertConversionOnce(
  db: Executor,
  conversion: ConversionsTable,
  touchpoints: TouchpointsTable[],
): Promise<{ row: ConversionsTable; duplicate: boolean }> {
  const inserted = await db
    .insertInto('conversions')
    .values(conversion)
    .onConflict((oc) => oc.columns(['store_id', 'livemode', 'event_type', 'order_id']).doNothing())
    .executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 0) {
    const existing = await findConversionByKey(db, {
      storeId: conversion.store_id,
      livemode: conversion.livemode,
      eventType: conversion.event_type,
      orderId: conversion.order_id,
    });
    if (!existing) throw new Error('conversion dedup conflict without a stored row');
    return { row: existing, duplicate: true };
  }
  if (touchpoints.length > 0) await db.insertInto('touchpoints').values(touchpoints).execute();
  return { row: conversion, duplicate: false };
}

export async function findConversion(
  db: Executor,
  accountId: string,
  livemode: number,
  conversionId: string,
): Promise<ConversionsTable | undefined> {
  return db
    .selectFrom('conversions')
    .selectAll()
    .where('id', '=', conversionId)
    .where('account_id', '=', accountId)
    .where('livemode', '=', livemode)
    .executeTakeFirst();
}

export interface ConversionFilter {
  storeId?: string;
  eventType?: string;
  attributed?: boolean;
  from?: number;
  to?: number; // exclusive
}

export async function listConversions(
  db: Executor,
  accountId: string,
  livemode: number,
  filter: ConversionFilter,
  page: Page,
): Promise<ConversionsTable[]> {
  let query = db.selectFrom('conversions').selectAll().where('account_id', '=', accountId).where('livemode', '=', livemode);
  if (filter.storeId) query = query.where('store_id', '=', filter.storeId);
  if (filter.eventType) query = query.where('event_type', '=', filter.eventType);
  if (filter.attributed !== undefined) query = query.where('attributed', '=', filter.attributed ? 1 : 0);
  if (filter.from !== undefined) query = query.where('event_time', '>=', filter.from);
  if (filter.to !== undefined) query = query.where('event_time', '<', filter.to);
  const after = page.after;
  if (after) query = query.where((eb) => afterKeyset(eb, 'event_time', 'id', after));
  return query
    .orderBy('event_time', 'desc')
    .orderBy('id', 'desc')
    .limit(page.limit + 1)
    .execute();
}
