import { type Database, type Reader, type Writer, writeJob } from '../database.js';
import { type CandidateScope, engineOf, type StoredClick } from '../engine.js';
import { preparedQuery } from '../prepared.js';
import { rowLimit } from '../row-limit.js';
import type { ClicksTable, ConversionsTable } from '../schema.js';
import { afterKeyset, type Page } from './keyset.js';

const clickById = preparedQuery((db, v: { clickId: string; accountId: string; livemode: number }) =>
  db
    .selectFrom('clicks')
    .selectAll()
    .where('id', '=', v.clickId)
    .where('account_id', '=', v.accountId)
    .where('livemode', '=', v.livemode),
);

/** `clickById` with the click's time: on PostgreSQL one partition's key, not every month's. */
const clickByIdAt = preparedQuery((db, v: { clickId: string; accountId: string; livemode: number; clickTime: number }) =>
  db
    .selectFrom('clicks')
    .selectAll()
    .where('id', '=', v.clickId)
    .where('click_time', '=', v.clickTime)
    .where('account_id', '=', v.accountId)
    .where('livemode', '=', v.livemode),
);

export type { CandidateScope, StoredClick };

/** Inserts a click unless (store, mode, fbclid) exists; returns the stored row either way. */
export async function insertClickOnce(db: Writer, click: ClicksTable): Promise<StoredClick> {
  return (await engineOf(db).clicks.insertOnce(db, [click]))[0] as StoredClick;
}

/** `insertClickOnce` for each click, in order; on PostgreSQL one statement for them all. */
export function insertClicksOnce(db: Writer, batch: ClicksTable[]): Promise<StoredClick[]> {
  return engineOf(db).clicks.insertOnce(db, batch);
}

/**
 * What `INSERT_CLICK` answers: the stored row only for a duplicate. A click inserted is the row
 * the caller sent, so it does not travel back from the writer thread (copying a click's ~25
 * fields back and forth cost the event loop ~4 µs per click, and the writer ~2 µs; bench/README.md).
 */
export type ClickWritten = { duplicate: false } | { duplicate: true; row: ClicksTable };

const written = ({ row, duplicate }: StoredClick): ClickWritten => (duplicate ? { duplicate, row } : { duplicate });

/** The stored click of a `ClickWritten` answer to writing `click`. */
function storedClick(click: ClicksTable, answer: ClickWritten): StoredClick {
  return answer.duplicate ? answer : { row: click, duplicate: false };
}

/**
 * `insertClickOnce` as a `WriteJob`: on SQLite it runs on the writer thread; on PostgreSQL its
 * one statement (db/postgres/clicks.ts) runs without a transaction around it, and clicks that arrive together
 * run as one batch (`insertClicksOnce`). Read its answer with `storedClick`.
 */
export const INSERT_CLICK = writeJob(
  'insertClickOnce',
  async (db: Writer, click: ClicksTable) => written(await insertClickOnce(db, click)),
  {
    oneStatement: true,
    runBatch: async (db: Writer, clicks: ClicksTable[]) => (await insertClicksOnce(db, clicks)).map(written),
  },
);

/**
 * A click keyed by its fbclid alone, written once (`INSERT_CLICK`: on SQLite on the writer thread,
 * sharing a commit with the clicks that arrive with it); durable when it resolves.
 */
export async function writeClickOnce(database: Database, click: ClicksTable): Promise<StoredClick> {
  return storedClick(click, await database.runWrite(INSERT_CLICK, click));
}

/** The click of (store, mode, fbclid), by its dedup key (db/engine.ts `ClickStatements`). */
export async function findClickByFbclid(
  db: Reader,
  storeId: string,
  livemode: number,
  fbclid: string,
): Promise<ClicksTable | undefined> {
  return engineOf(db).clicks.byFbclid(db, storeId, livemode, fbclid);
}

/** A click by id, within one account and mode. */
export async function findClick(
  db: Reader,
  accountId: string,
  livemode: number,
  clickId: string,
): Promise<ClicksTable | undefined> {
  return (await clickById(db, { clickId, accountId, livemode })).rows[0];
}

/** A conversion's attributed click, read at most once, by whichever of its users asks first. */
export type AttributedClick = () => Promise<ClicksTable | undefined>;

/**
 * `clickTime`: the attributed click's time when the attribution just scored it, so that its read
 * names its partition (PostgreSQL: without it, each month's key is probed; 0.28 ms a conversion
 * at 2M clicks).
 */
export function attributedClickOf(
  db: Reader,
  conversion: ConversionsTable,
  known?: Map<string, ClicksTable>,
  clickTime?: number,
): AttributedClick {
  let read: Promise<ClicksTable | undefined> | undefined;
  return () => {
    const clickId = conversion.attributed_click_id;
    // A click the attribution just read whole (a candidate of this store and mode) is not read again.
    const row = clickId ? known?.get(clickId) : undefined;
    read ??= row ? Promise.resolve(row) : clickId ? readClick(db, conversion, clickId, clickTime) : Promise.resolve(undefined);
    return read;
  };
}

async function readClick(
  db: Reader,
  conversion: ConversionsTable,
  clickId: string,
  clickTime: number | undefined,
): Promise<ClicksTable | undefined> {
  const { account_id: accountId, livemode } = conversion;
  if (clickTime !== undefined) {
    const row = (await clickByIdAt(db, { clickId, accountId, livemode, clickTime })).rows[0];
    if (row) return row;
  }
  return findClick(db, accountId, livemode, clickId);
}

/**
 * The mode (livemode 0/1) of a click of this account by id, in either mode; undefined when the
 * account has none. For telling a caller that an id belongs to the other mode, never its data.
 */
export async function clickModeOf(db: Reader, accountId: string, clickId: string): Promise<number | undefined> {
  const row = await db
    .selectFrom('clicks')
    .select('livemode')
    .where('id', '=', clickId)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return row?.livemode;
}

export async function listClicks(
  db: Reader,
  accountId: string,
  livemode: number,
  filter: { storeId?: string },
  page: Page,
): Promise<ClicksTable[]> {
  let query = db.selectFrom('clicks').selectAll().where('livemode', '=', livemode);
  query = filter.storeId
    ? query.where('store_id', '=', filter.storeId).where('account_id', '=', accountId)
    : query.where('account_id', '=', accountId);
  const after = page.after;
  if (after) query = query.where((eb) => afterKeyset(eb, 'click_time', 'id', after));
  return query
    .orderBy('click_time', 'desc')
    .orderBy('id', 'desc')
    .limit(rowLimit(page.limit + 1))
    .execute();
}

/**
 * Most recent non-bot clicks in the time bounds whose `column` equals `value`. One value per
 * query on purpose: with `IN (…)` SQLite may walk the store's time index instead of this key's.
 */
export async function findClicksMatching(
  db: Reader,
  scope: CandidateScope,
  column: MatchingColumn,
  value: string,
  limit: number,
): Promise<ClicksTable[]> {
  const key = `${column}:${limit}`;
  let lookup = matchingLookups.get(key);
  if (!lookup) {
    lookup = matchingLookup(column, limit);
    matchingLookups.set(key, lookup);
  }
  return (await lookup(db, { ...scope, value })).rows;
}

type MatchingLookup = ReturnType<typeof matchingLookup>;
const matchingLookups = new Map<string, MatchingLookup>();

/** The columns candidates are found by (each with an index on store, mode, column, click time). */
export type MatchingColumn = 'fingerprint' | 'derived_fingerprint' | 'ip_address' | 'ip_network' | 'visitor_id' | 'fbp' | 'ttp';

function matchingLookup(column: MatchingColumn, limit: number) {
  return preparedQuery((db, v: CandidateScope & { value: string }) =>
    db
      .selectFrom('clicks')
      .selectAll()
      .where('store_id', '=', v.storeId)
      .where('livemode', '=', v.livemode)
      .where(column, '=', v.value)
      .where('click_time', '>=', v.from)
      .where('click_time', '<=', v.to)
      .where('is_bot', '=', 0)
      .orderBy('click_time', 'desc')
      .limit(rowLimit(limit)),
  );
}

export async function findClicksByIds(db: Reader, storeId: string, livemode: number, ids: string[]): Promise<ClicksTable[]> {
  if (ids.length === 0) return [];
  // Looked up by primary key alone (a store condition in SQL can steer SQLite to a store-wide
  // index walk); the few rows are then kept to the store and mode.
  const rows = await db.selectFrom('clicks').selectAll().where('id', 'in', ids).execute();
  return rows.filter((row) => row.store_id === storeId && row.livemode === livemode);
}

/** The fbclid of each of the given clicks (to explain an attribution). */
export async function fbclidsOf(db: Reader, clickIds: string[]): Promise<Map<string, string>> {
  if (clickIds.length === 0) return new Map();
  const rows = await db.selectFrom('clicks').select(['id', 'fbclid']).where('id', 'in', clickIds).execute();
  return new Map(rows.map((r) => [r.id, r.fbclid]));
}
