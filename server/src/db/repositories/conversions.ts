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
  capiStatus?: ConversionsTable['capi_status'];
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
  if (filter.capiStatus) query = query.where('capi_status', '=', filter.capiStatus);
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

/**
 * Clicks that earlier attributed conversions of the same store and mode, sharing a hashed email
 * or phone with this one, were attributed to — most recent first (index-backed).
 */
export async function identityLinkedClickIds(
  db: Executor,
  scope: { storeId: string; livemode: number; before: number; excludeId?: string },
  hashes: { emailHash?: string; phoneHash?: string },
  limit: number,
): Promise<string[]> {
  const ids = new Set<string>();
  for (const [column, value] of [
    ['email_hash', hashes.emailHash],
    ['phone_hash', hashes.phoneHash],
  ] as const) {
    if (!value) continue;
    let query = db
      .selectFrom('conversions')
      .select('attributed_click_id')
      .where('store_id', '=', scope.storeId)
      .where('livemode', '=', scope.livemode)
      .where(column, '=', value)
      .where('event_time', '<=', scope.before)
      .where('attributed', '=', 1);
    if (scope.excludeId) query = query.where('id', '!=', scope.excludeId);
    const rows = await query.orderBy('event_time', 'desc').limit(limit).execute();
    for (const row of rows) if (row.attributed_click_id) ids.add(row.attributed_click_id);
  }
  return [...ids];
}

export async function touchpointsOf(db: Executor, conversionId: string): Promise<TouchpointsTable[]> {
  return db
    .selectFrom('touchpoints')
    .selectAll()
    .where('conversion_id', '=', conversionId)
    .orderBy('score', 'desc')
    .orderBy('click_time', 'desc')
    .orderBy('click_id', 'desc')
    .execute();
}

/** Replaces a conversion's attribution result and its touchpoints. */
export async function replaceAttribution(
  db: Executor,
  conversionId: string,
  result: Pick<
    ConversionsTable,
    'attributed' | 'attributed_click_id' | 'attributed_fbclid' | 'confidence' | 'attribution_signal'
  >,
  touchpoints: TouchpointsTable[],
): Promise<void> {
  await db.updateTable('conversions').set(result).where('id', '=', conversionId).execute();
  await db.deleteFrom('touchpoints').where('conversion_id', '=', conversionId).execute();
  if (touchpoints.length > 0) await db.insertInto('touchpoints').values(touchpoints).execute();
}
