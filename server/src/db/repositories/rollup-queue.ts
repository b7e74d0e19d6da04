import { sql } from 'kysely';
import { backgroundJob, type Reader, type Writer } from '../database.js';
import { engineOf } from '../engine.js';
import { prepared } from '../prepared.js';
import { rowLimit } from '../row-limit.js';
import type { ClicksTable } from '../schema.js';

/**
 * The rollup queue (migration 0005) and the facts a fold reads: every click and conversion not
 * yet in the analytics rollups has a queue row, written with the event; a fold deletes the rows
 * it folded, at the versions it read them, in the transaction that adds them to the rollups.
 */

export type QueueKind = 'click' | 'conversion' | 'refund';

export interface QueuedRow {
  id: string;
  store_id: string;
  kind: QueueKind;
  version: number;
}

/** A click as the rollups need it. */
export interface ClickFact {
  id: string;
  store_id: string;
  livemode: number;
  click_time: number;
  is_bot: number;
  utm_source: string | null;
  utm_medium: string | null;
  utm_campaign: string | null;
  utm_content: string | null;
  campaign_id: string | null;
  adset_id: string | null;
  ad_id: string | null;
  landing_page: string | null;
  /** The click's ids (its channel, api.md §11): the dedup key `fbclid` and a column per other kind. */
  fbclid: string | null;
  gclid?: string | null;
  gbraid?: string | null;
  wbraid?: string | null;
  ttclid?: string | null;
  msclkid?: string | null;
  epik?: string | null;
  ScCid?: string | null;
  rdt_cid?: string | null;
  li_fat_id?: string | null;
}

/**
 * A conversion joined with one credited click: one row per touchpoint of an attributed
 * conversion (or its attributed click when it has no touchpoints), one row with `click_id` null
 * otherwise. Rows of one conversion are adjacent.
 */
export interface ConversionFact extends Omit<ClickFact, 'id' | 'store_id' | 'livemode' | 'click_time' | 'is_bot'> {
  id: string;
  store_id: string;
  livemode: number;
  event_type: string;
  event_time: number;
  value_minor: number;
  currency: string;
  attributed: number;
  attributed_click_id: string | null;
  click_id: string | null;
  click_time: number | null;
}

/** Queues new events for the rollups; call it in the transaction that inserts them. */
export async function enqueueForRollups(
  db: Writer,
  kind: QueueKind,
  rows: Array<{ id: string; store_id: string }>,
): Promise<void> {
  if (rows.length === 0) return;
  const only = rows.length === 1 ? rows[0] : undefined;
  if (only) {
    await enqueueOne(db, { id: only.id, store_id: only.store_id, kind });
    return;
  }
  await db
    .insertInto('rollup_queue')
    .values(rows.map((r) => ({ id: r.id, store_id: r.store_id, kind, version: 0 })))
    .execute();
}

const enqueueOne = prepared((db, v: { id: string; store_id: string; kind: QueueKind }) =>
  db.insertInto('rollup_queue').values({ id: v.id, store_id: v.store_id, kind: v.kind, version: 0 }),
);

/** Up to `limit` queued rows (of one store, with `storeId`), oldest ids first. */
export async function readQueue(db: Reader, limit: number, storeId?: string): Promise<QueuedRow[]> {
  let query = db.selectFrom('rollup_queue').select(['id', 'store_id', 'kind', 'version']);
  if (storeId) query = query.where('store_id', '=', storeId);
  const rows = await query.orderBy('id').limit(rowLimit(limit)).execute();
  return rows as QueuedRow[];
}

/** Events waiting to be folded, per kind (the backlog gauge). */
export async function queueSize(db: Reader): Promise<Record<QueueKind, number>> {
  const rows = await db
    .selectFrom('rollup_queue')
    .select((eb) => ['kind', eb.fn.countAll<number>().as('n')])
    .groupBy('kind')
    .execute();
  const size = { click: 0, conversion: 0, refund: 0 };
  for (const row of rows) size[row.kind] = Number(row.n);
  return size;
}

/**
 * `queueSize` as a background job. Counting reads every queued row: ~6.5 s for the 22M rows a
 * year's store of 20M clicks queues for its first fold (SQLite), which on the event loop would
 * hold every request that long.
 */
export const QUEUE_SIZE = backgroundJob('queueSize', (reader: Reader) => queueSize(reader));

const ID_CHUNK = 500;

/**
 * Removes queue rows that a fold read, if every one is still there at the version read.
 * Returns false when one is not (another fold took it, or it changed since): then the caller
 * must roll back. On PostgreSQL the delete waits for a concurrent fold's transaction holding
 * the same rows, and then finds them gone.
 */
export async function takeQueued(trx: Writer, rows: QueuedRow[]): Promise<boolean> {
  const expected = new Map(rows.map((r) => [r.id, r.version]));
  let taken = 0;
  for (let i = 0; i < rows.length; i += ID_CHUNK) {
    const ids = rows.slice(i, i + ID_CHUNK).map((r) => r.id);
    const deleted = await trx.deleteFrom('rollup_queue').where('id', 'in', ids).returning(['id', 'version']).execute();
    for (const row of deleted) {
      if (expected.get(row.id) !== Number(row.version)) return false;
      taken++;
    }
  }
  return taken === rows.length;
}

/** Marks a queued conversion changed (a fold that read it before must not be written). False when it is not queued. */
export async function bumpQueued(trx: Writer, id: string): Promise<boolean> {
  const result = await trx
    .updateTable('rollup_queue')
    .set((eb) => ({ version: eb('version', '+', 1) }))
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** `bumpQueued` for several rows: the ids of those that were queued (and are now marked changed). */
export async function bumpQueuedMany(trx: Writer, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await trx
    .updateTable('rollup_queue')
    .set((eb) => ({ version: eb('version', '+', 1) }))
    .where('id', 'in', ids)
    .returning('id')
    .execute();
  return new Set(rows.map((r) => r.id));
}

/** Queues every click, conversion and refund of a store again (its rollups are being rebuilt). */
export async function requeueStore(trx: Writer, storeId: string): Promise<void> {
  // A store of a million events takes longer than a request's statement bound (PostgreSQL's
  // 4 s): this one rare rebuild may take its time.
  await engineOf(trx).locks.allowLongStatements(trx, 10);
  for (const [table, kind] of [
    ['clicks', 'click'],
    ['conversions', 'conversion'],
    ['refunds', 'refund'],
  ] as const) {
    await trx
      .insertInto('rollup_queue')
      .columns(['id', 'store_id', 'kind', 'version'])
      .expression((eb) =>
        eb
          .selectFrom(table)
          .select(['id', 'store_id', sql.lit(kind).as('kind'), sql.lit(0).as('version')])
          .where('store_id', '=', storeId),
      )
      .onConflict((oc) => oc.column('id').doUpdateSet((eb) => ({ version: eb('rollup_queue.version', '+', 1) })))
      .execute();
  }
}

/**
 * Locks a conversion row until the transaction ends, so that two changes of its attribution on
 * two instances take turns (each reads the state the other left); SQLite has one writer and takes no lock.
 */
export async function lockConversion(trx: Writer, id: string): Promise<void> {
  await engineOf(trx).locks.lockRows(trx.selectFrom('conversions').select('id').where('id', '=', id));
}

const DIMENSION_COLUMNS = [
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'utm_content',
  'campaign_id',
  'adset_id',
  'ad_id',
  'landing_page',
] as const;

/** The click id columns a click's channel is told by (click-channel.ts). */
const CHANNEL_COLUMNS = [
  'fbclid',
  'gclid',
  'gbraid',
  'wbraid',
  'ttclid',
  'msclkid',
  'epik',
  'ScCid',
  'rdt_cid',
  'li_fat_id',
] as const;

const CLICK_COLUMNS = ['id', 'store_id', 'livemode', 'click_time', 'is_bot', ...DIMENSION_COLUMNS, ...CHANNEL_COLUMNS] as const;

export async function clickFacts(db: Reader, ids: string[]): Promise<ClickFact[]> {
  const facts: ClickFact[] = [];
  for (let i = 0; i < ids.length; i += ID_CHUNK) {
    facts.push(
      ...(await db
        .selectFrom('clicks')
        .select(CLICK_COLUMNS)
        .where('id', 'in', ids.slice(i, i + ID_CHUNK))
        .execute()),
    );
  }
  return facts;
}

const CONVERSION_COLUMNS = [
  'id',
  'store_id',
  'livemode',
  'event_type',
  'event_time',
  'value_minor',
  'currency',
  'attributed',
  'attributed_click_id',
] as const;

type CreditedClick = Pick<
  ClicksTable,
  'id' | 'click_time' | (typeof DIMENSION_COLUMNS)[number] | (typeof CHANNEL_COLUMNS)[number]
>;

const NO_CLICK: Omit<ConversionFact, (typeof CONVERSION_COLUMNS)[number]> = {
  click_id: null,
  click_time: null,
  utm_source: null,
  utm_medium: null,
  utm_campaign: null,
  utm_content: null,
  campaign_id: null,
  adset_id: null,
  ad_id: null,
  landing_page: null,
  fbclid: null,
};

/**
 * Facts of the given conversions, adjacent per conversion. Read as three lookups by key (the
 * conversions, their touchpoints, the credited clicks) and joined here: as one SQL join,
 * PostgreSQL hashed every partition of `clicks` for each chunk of conversions (a click is
 * found by an expression of touchpoint and conversion), ~150 ms per 500 conversions of a
 * 200k-click store and growing with the store.
 */
export async function conversionFacts(db: Reader, ids: string[]): Promise<ConversionFact[]> {
  const facts: ConversionFact[] = [];
  for (let i = 0; i < ids.length; i += ID_CHUNK) {
    const conversions = await db
      .selectFrom('conversions')
      .select(CONVERSION_COLUMNS)
      .where('id', 'in', ids.slice(i, i + ID_CHUNK))
      .orderBy('id')
      .execute();
    // The clicks each attributed conversion credits: its touchpoints' clicks, or else its attributed click.
    const attributed = conversions.filter((c) => c.attributed === 1);
    const credited = new Map<string, string[]>();
    if (attributed.length > 0) {
      const touchpoints = await db
        .selectFrom('touchpoints')
        .select(['conversion_id', 'click_id'])
        .where(
          'conversion_id',
          'in',
          attributed.map((c) => c.id),
        )
        .execute();
      for (const t of touchpoints) credited.set(t.conversion_id, [...(credited.get(t.conversion_id) ?? []), t.click_id]);
    }
    for (const c of attributed) {
      if (!credited.has(c.id) && c.attributed_click_id !== null) credited.set(c.id, [c.attributed_click_id]);
    }
    const clicks = new Map<string, CreditedClick>();
    const clickIds = [...new Set([...credited.values()].flat())];
    for (let j = 0; j < clickIds.length; j += ID_CHUNK) {
      const rows = await db
        .selectFrom('clicks')
        .select(['id', 'click_time', ...DIMENSION_COLUMNS, ...CHANNEL_COLUMNS])
        .where('id', 'in', clickIds.slice(j, j + ID_CHUNK))
        .execute();
      for (const row of rows) clicks.set(row.id, row);
    }
    for (const conversion of conversions) {
      const clickIdsOf = credited.get(conversion.id) ?? [];
      if (clickIdsOf.length === 0) facts.push({ ...conversion, ...NO_CLICK });
      for (const clickId of clickIdsOf) {
        const click = clicks.get(clickId);
        // A credited click no longer stored (retention) credits no dimension values.
        facts.push(click ? { ...conversion, ...click, id: conversion.id, click_id: click.id } : { ...conversion, ...NO_CLICK });
      }
    }
  }
  return facts;
}

/** The zone a store's rollups are computed in, and the time zone data version. */
export interface RollupZone {
  timezone: string;
  tzdata: string;
}

/** The rollup zone of each given store: recorded, or for a store never folded its current time zone. */
export async function rollupZones(db: Reader, storeIds: string[], tzdata: string): Promise<Map<string, RollupZone>> {
  const zones = new Map<string, RollupZone>();
  if (storeIds.length === 0) return zones;
  const recorded = await db
    .selectFrom('rollup_stores')
    .select(['store_id', 'timezone', 'tzdata'])
    .where('store_id', 'in', storeIds)
    .execute();
  for (const row of recorded) zones.set(row.store_id, { timezone: row.timezone, tzdata: row.tzdata });
  const missing = storeIds.filter((id) => !zones.has(id));
  if (missing.length > 0) {
    for (const store of await db.selectFrom('stores').select(['id', 'timezone']).where('id', 'in', missing).execute()) {
      zones.set(store.id, { timezone: store.timezone, tzdata });
    }
  }
  return zones;
}

/** Records the zone of stores folded for the first time (a concurrent first fold records the same). */
export async function adoptZones(trx: Writer, zones: Map<string, RollupZone>): Promise<void> {
  if (zones.size === 0) return;
  await trx
    .insertInto('rollup_stores')
    .values([...zones].map(([store_id, z]) => ({ store_id, timezone: z.timezone, tzdata: z.tzdata })))
    .onConflict((oc) => oc.column('store_id').doNothing())
    .execute();
}

/**
 * Moves a store's rollups to a new zone; false when they already are in it (another instance
 * got there first). On PostgreSQL the update locks the row, so two rebuilds take turns.
 */
export async function setRollupZone(trx: Writer, storeId: string, zone: RollupZone): Promise<boolean> {
  const result = await trx
    .updateTable('rollup_stores')
    .set(zone)
    .where('store_id', '=', storeId)
    .where((eb) => eb.or([eb('timezone', '!=', zone.timezone), eb('tzdata', '!=', zone.tzdata)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Stores whose rollups are in another zone than the store's, or other time zone data. */
export async function storesNeedingRebuild(db: Reader, tzdata: string): Promise<Array<{ id: string; timezone: string }>> {
  return db
    .selectFrom('rollup_stores')
    .innerJoin('stores', 'stores.id', 'rollup_stores.store_id')
    .select(['stores.id', 'stores.timezone'])
    .where((eb) =>
      eb.or([eb('stores.timezone', '!=', eb.ref('rollup_stores.timezone')), eb('rollup_stores.tzdata', '!=', tzdata)]),
    )
    .execute();
}
