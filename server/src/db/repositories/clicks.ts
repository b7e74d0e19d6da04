import { sql } from 'kysely';
import { type Reader, type Writer, writeJob } from '../database.js';
import { isPostgres } from '../dialect.js';
import { prepared, preparedQuery } from '../prepared.js';
import { rowLimit } from '../row-limit.js';
import type { ClicksTable } from '../schema.js';
import { afterKeyset, type Page } from './keyset.js';
import { enqueueForRollups } from './rollup-queue.js';

const insertClick = prepared((db, click: ClicksTable) =>
  db
    .insertInto('clicks')
    .values(click)
    .onConflict((oc) => oc.columns(['store_id', 'livemode', 'fbclid']).doNothing()),
);

const clickByFbclid = preparedQuery((db, v: { storeId: string; livemode: number; fbclid: string }) =>
  db
    .selectFrom('clicks')
    .selectAll()
    .where('store_id', '=', v.storeId)
    .where('livemode', '=', v.livemode)
    .where('fbclid', '=', v.fbclid),
);

const clickById = preparedQuery((db, v: { clickId: string; accountId: string; livemode: number }) =>
  db
    .selectFrom('clicks')
    .selectAll()
    .where('id', '=', v.clickId)
    .where('account_id', '=', v.accountId)
    .where('livemode', '=', v.livemode),
);

/** A click as stored, and whether it was there before (the same fbclid tracked again). */
export interface StoredClick {
  row: ClicksTable;
  duplicate: boolean;
}

/** Inserts a click unless (store, mode, fbclid) exists; returns the stored row either way. */
export async function insertClickOnce(db: Writer, click: ClicksTable): Promise<StoredClick> {
  if (isPostgres(db)) return (await insertClicksOnceByKey(db, [click]))[0] as StoredClick;
  // SQLite: the unique constraint decides.
  const inserted = await insertClick(db, click);
  if (Number(inserted.numAffectedRows ?? 0n) > 0) {
    await enqueueForRollups(db, 'click', [click]);
    return { row: click, duplicate: false };
  }
  const existing = await findClickByFbclid(db, click.store_id, click.livemode, click.fbclid);
  if (!existing) throw new Error('click dedup conflict without a stored row');
  return { row: existing, duplicate: true };
}

/** `insertClickOnce` for each click, in order; on PostgreSQL one statement for them all. */
export async function insertClicksOnce(db: Writer, clicks: ClicksTable[]): Promise<StoredClick[]> {
  if (isPostgres(db)) return insertClicksOnceByKey(db, clicks);
  const stored: StoredClick[] = [];
  for (const click of clicks) stored.push(await insertClickOnce(db, click));
  return stored;
}

/**
 * What `INSERT_CLICK` answers: the stored row only for a duplicate. A click inserted is the row
 * the caller sent, so it does not travel back from the writer thread (copying a click's ~25
 * fields back and forth cost the event loop ~4 µs per click, and the writer ~2 µs; bench/README.md).
 */
export type ClickWritten = { duplicate: false } | { duplicate: true; row: ClicksTable };

const written = ({ row, duplicate }: StoredClick): ClickWritten => (duplicate ? { duplicate, row } : { duplicate });

/** The stored click of a `ClickWritten` answer to writing `click`. */
export function storedClick(click: ClicksTable, answer: ClickWritten): StoredClick {
  return answer.duplicate ? answer : { row: click, duplicate: false };
}

/**
 * `insertClickOnce` as a `WriteJob`: on SQLite it runs on the writer thread; on PostgreSQL its
 * one statement (below) runs without a transaction around it, and clicks that arrive together
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
 * PostgreSQL: clicks inserted once each, in one statement however many (a `WriteJob` batch).
 * The partitioned table cannot hold (store, mode, fbclid) unique; `click_keys` does (migration
 * 0007). The keys go in first: of two writers of one fbclid the second waits on the key until
 * the first commits, then finds it taken and reads the first's click. Keys, clicks and rollup
 * queue rows are one statement (PostgreSQL-only SQL: data-modifying CTEs), one round trip. The
 * rows travel as one JSON parameter typed by the table's own row type, so the statement's text
 * is the same for any number of clicks (a named statement, see db/postgres/database.ts). Keys
 * go in sorted, so two batches sharing keys wait for each other in one order instead of
 * deadlocking. A click whose key was taken (by an earlier click of its batch, or by another
 * writer) answers the stored click, as one after the other would have.
 */
async function insertClicksOnceByKey(db: Writer, clicks: ClicksTable[]): Promise<StoredClick[]> {
  if (clicks.length === 0) return [];
  const keyOf = (click: ClicksTable) => `${click.store_id}\n${click.livemode}\n${click.fbclid}`;
  const keys = clicks.map(keyOf);
  const firstOfKey = new Map<string, ClicksTable>();
  clicks.forEach((click, i) => {
    const key = keys[i] as string;
    if (!firstOfKey.has(key)) firstOfKey.set(key, click);
  });
  const unique = [...firstOfKey.values()];
  const columns = sql.join((Object.keys(clicks[0] as ClicksTable) as Array<keyof ClicksTable>).map((c) => sql.ref(c)));
  const inserted = await sql<{ id: string }>`
    with input as (
      select * from json_populate_recordset(null::clicks, ${JSON.stringify(unique)}::json)
    ), key as (
      insert into click_keys (store_id, livemode, fbclid, click_id, click_time)
      select store_id, livemode, fbclid, id, click_time from input order by store_id, livemode, fbclid
      on conflict (store_id, livemode, fbclid) do nothing
      returning click_id
    ), click as (
      insert into clicks (${columns})
      select ${columns} from input where id in (select click_id from key)
      returning id, store_id
    )
    insert into rollup_queue (id, store_id, kind, version)
    select id, store_id, 'click', 0 from click
    returning id`.execute(db);
  const insertedIds = new Set(inserted.rows.map((r) => r.id));
  const stored = new Map<ClicksTable, StoredClick>();
  for (const click of unique) {
    if (insertedIds.has(click.id)) {
      stored.set(click, { row: click, duplicate: false });
      continue;
    }
    const existing = await findClickByFbclid(db, click.store_id, click.livemode, click.fbclid);
    if (!existing) throw new Error('click dedup conflict without a stored row');
    stored.set(click, { row: existing, duplicate: true });
  }
  return clicks.map((click, i) => {
    const first = firstOfKey.get(keys[i] as string) as ClicksTable;
    const answer = stored.get(first) as StoredClick;
    return first === click ? answer : { row: answer.row, duplicate: true };
  });
}

/** PostgreSQL: by its key, then by id and time (one partition; a lookup by fbclid would probe every month). */
async function clickByKey(db: Reader, storeId: string, livemode: number, fbclid: string): Promise<ClicksTable | undefined> {
  const key = await db
    .selectFrom('click_keys')
    .select(['click_id', 'click_time'])
    .where('store_id', '=', storeId)
    .where('livemode', '=', livemode)
    .where('fbclid', '=', fbclid)
    .executeTakeFirst();
  if (!key) return undefined;
  return db
    .selectFrom('clicks')
    .selectAll()
    .where('id', '=', key.click_id)
    .where('click_time', '=', key.click_time)
    .executeTakeFirst();
}

export async function findClickByFbclid(
  db: Reader,
  storeId: string,
  livemode: number,
  fbclid: string,
): Promise<ClicksTable | undefined> {
  if (isPostgres(db)) return clickByKey(db, storeId, livemode, fbclid);
  return (await clickByFbclid(db, { storeId, livemode, fbclid })).rows[0];
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

export interface CandidateScope {
  storeId: string;
  livemode: number;
  /** Click-time bounds, inclusive. */
  from: number;
  to: number;
}

/**
 * Most recent non-bot clicks in the time bounds whose `column` equals `value`. One value per
 * query on purpose: with `IN (…)` SQLite may walk the store's time index instead of this key's.
 */
export async function findClicksMatching(
  db: Reader,
  scope: CandidateScope,
  column: 'fingerprint' | 'derived_fingerprint' | 'ip_address',
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

function matchingLookup(column: 'fingerprint' | 'derived_fingerprint' | 'ip_address', limit: number) {
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
