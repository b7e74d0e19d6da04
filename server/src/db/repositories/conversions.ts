import { sql } from 'kysely';
import { type Reader, type Writer, writeJob } from '../database.js';
import { type ConversionKey, type ConversionRecord, engineOf, type LinkedBrowser } from '../engine.js';
import { prepared, preparedQuery } from '../prepared.js';
import { rowLimit } from '../row-limit.js';
import type { ConversionsTable, TouchpointsTable } from '../schema.js';
import { afterKeyset, type Page } from './keyset.js';
import { type ForwardingFilter, forwardingCondition } from './reconciliation.js';

export type { ConversionKey, ConversionRecord };

/** The conversion of a dedup key: the table's own on SQLite, through `conversion_keys` on PostgreSQL (one partition). */
export async function findConversionByKey(db: Reader, key: ConversionKey): Promise<ConversionsTable | undefined> {
  return engineOf(db).conversions.byKey(db, key);
}

/** One touchpoint of a conversion (SQLite inserts a conversion's one by one: db/sqlite/conversions.ts). */
export const insertTouchpoint = prepared((db, row: TouchpointsTable) => db.insertInto('touchpoints').values(row));

/**
 * Records a conversion unless (store, mode, eventType, orderId) exists, with its touchpoints,
 * its rollup queue row and its delivery job (the outbox: the job commits with the conversion,
 * so an acknowledged conversion is never lost to Meta); returns the stored row either way. Not
 * a prior read but a unique key decides (db/engine.ts `ConversionStatements`).
 */
export async function recordConversionOnce(
  db: Writer,
  record: ConversionRecord,
): Promise<{ row: ConversionsTable; duplicate: boolean }> {
  const { conversion } = record;
  const inserted = await engineOf(db).conversions.recordOnce(db, record);
  if (!inserted) {
    const key = {
      storeId: conversion.store_id,
      livemode: conversion.livemode,
      eventType: conversion.event_type,
      orderId: conversion.order_id,
    };
    const existing = await findConversionByKey(db, key);
    if (!existing) throw new Error('conversion dedup conflict without a stored row');
    return { row: existing, duplicate: true };
  }
  return { row: conversion, duplicate: false };
}

/**
 * `recordConversionOnce` as a `WriteJob`: on SQLite it runs on the writer thread; on PostgreSQL
 * its one statement (db/postgres/conversions.ts) runs without a transaction around it.
 */
export const RECORD_CONVERSION = writeJob('recordConversionOnce', recordConversionOnce, {
  oneStatement: true,
});

export async function findConversion(
  db: Reader,
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

/**
 * The mode (livemode 0/1) of a conversion of this account by id, in either mode; undefined when
 * the account has none. For telling a caller that an id belongs to the other mode, never its data.
 */
export async function conversionModeOf(db: Reader, accountId: string, conversionId: string): Promise<number | undefined> {
  const row = await db
    .selectFrom('conversions')
    .select('livemode')
    .where('id', '=', conversionId)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return row?.livemode;
}

export interface ConversionFilter {
  storeId?: string;
  eventType?: string;
  attributed?: boolean;
  capiStatus?: ConversionsTable['capi_status'];
  /** Conversions with refunds (true) or without (false). */
  refunded?: boolean;
  /** By their state at one destination (api.md §10: the reconciliation's links). */
  forwarding?: ForwardingFilter;
  from?: number;
  to?: number; // exclusive
}

export async function listConversions(
  db: Reader,
  accountId: string,
  livemode: number,
  filter: ConversionFilter,
  page: Page,
): Promise<ConversionsTable[]> {
  // Aliased `c`: the forwarding condition names the conversion so.
  let query = db.selectFrom('conversions as c').selectAll().where('account_id', '=', accountId).where('livemode', '=', livemode);
  if (filter.storeId) query = query.where('store_id', '=', filter.storeId);
  if (filter.eventType) query = query.where('event_type', '=', filter.eventType);
  if (filter.attributed !== undefined) query = query.where('attributed', '=', filter.attributed ? 1 : 0);
  if (filter.capiStatus) query = query.where('capi_status', '=', filter.capiStatus);
  if (filter.refunded !== undefined) query = query.where('refunded_minor', filter.refunded ? '>' : '=', 0);
  if (filter.forwarding) query = query.where(forwardingCondition(db, filter.forwarding));
  if (filter.from !== undefined) query = query.where('event_time', '>=', filter.from);
  if (filter.to !== undefined) query = query.where('event_time', '<', filter.to);
  const after = page.after;
  if (after) query = query.where((eb) => afterKeyset(eb, 'event_time', 'id', after));
  return query
    .orderBy('event_time', 'desc')
    .orderBy('id', 'desc')
    .limit(rowLimit(page.limit + 1))
    .execute();
}

type IdentityLookup = ReturnType<typeof identityLookup>;
const identityLookups = new Map<string, IdentityLookup>();

function identityLookup(column: 'email_hash' | 'phone_hash', limit: number) {
  type Values = {
    storeId: string;
    livemode: number;
    value: string;
    attributed: number;
    after: number;
    before: number;
    excludeId: string;
  };
  return preparedQuery((db, v: Values) =>
    db
      .selectFrom('conversions')
      .select(['attributed_click_id', 'visitor_id', 'fbp', 'ttp', 'event_time'])
      .where('store_id', '=', v.storeId)
      .where('livemode', '=', v.livemode)
      .where(column, '=', v.value)
      .where('attributed', '=', v.attributed)
      // `+event_time`: the bounds are checked on the hash index's few rows, not offered to an
      // index. SQLite without statistics (a new database, or before its first ANALYZE) otherwise
      // took the store's time index for the range and read every conversion of the window.
      .where(sql<number>`+${sql.ref('event_time')}`, '>=', v.after)
      .where(sql<number>`+${sql.ref('event_time')}`, '<=', v.before)
      .where('id', '!=', v.excludeId)
      .orderBy('event_time', 'desc')
      .limit(rowLimit(limit)),
  );
}

function identityByColumn(column: 'email_hash' | 'phone_hash', limit: number): IdentityLookup {
  const key = `${column}:${limit}`;
  let lookup = identityLookups.get(key);
  if (!lookup) {
    lookup = identityLookup(column, limit);
    identityLookups.set(key, lookup);
  }
  return lookup;
}

/**
 * What earlier conversions of the same store and mode, sharing a hashed email or phone with this
 * one, say about the buyer (index-backed, most recent first): the clicks the attributed ones were
 * attributed to, and the browsers the most recent ones (attributed or not) came from.
 */
export async function identityLinks(
  db: Reader,
  scope: { storeId: string; livemode: number; after: number; before: number; excludeId?: string },
  hashes: { emailHash?: string; phoneHash?: string },
  limit: number,
): Promise<{ clickIds: string[]; browsers: LinkedBrowser[] }> {
  const ids = new Set<string>();
  const linked: Array<LinkedBrowser & { time: number }> = [];
  for (const [column, value] of [
    ['email_hash', hashes.emailHash],
    ['phone_hash', hashes.phoneHash],
  ] as const) {
    if (!value) continue;
    // `attributed` is in the index's key: each state is a range of its own, read newest first.
    for (const attributed of [1, 0]) {
      // No conversion has the empty id: without one to exclude, the condition excludes nothing.
      const { rows } = await identityByColumn(column, attributed === 1 ? limit : BROWSERS_LINKED)(db, {
        ...scope,
        value,
        attributed,
        excludeId: scope.excludeId ?? '',
      });
      for (const row of rows) {
        if (row.attributed_click_id) ids.add(row.attributed_click_id);
        linked.push({ visitorId: row.visitor_id ?? null, fbp: row.fbp, ttp: row.ttp ?? null, time: row.event_time });
      }
    }
  }
  const browsers = linked
    .sort((a, b) => b.time - a.time)
    .slice(0, BROWSERS_LINKED)
    .map(({ visitorId, fbp, ttp }) => ({ visitorId, fbp, ttp }));
  return { clickIds: [...ids], browsers };
}

/** The browsers of the buyer's most recent earlier conversions whose clicks are looked up. */
export const BROWSERS_LINKED = 3;

export async function touchpointsOf(db: Reader, conversionId: string): Promise<TouchpointsTable[]> {
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
  db: Writer,
  conversionId: string,
  result: Pick<
    ConversionsTable,
    | 'attributed'
    | 'attributed_click_id'
    | 'attributed_fbclid'
    | 'attributed_click_ids'
    | 'confidence'
    | 'attribution_signal'
    | 'attribution_evidence'
  >,
  touchpoints: TouchpointsTable[],
): Promise<void> {
  await db.updateTable('conversions').set(result).where('id', '=', conversionId).execute();
  await db.deleteFrom('touchpoints').where('conversion_id', '=', conversionId).execute();
  for (const touchpoint of touchpoints) await insertTouchpoint(db, touchpoint);
}
