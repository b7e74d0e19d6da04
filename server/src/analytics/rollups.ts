/**
 * Analytics rollups: clicks and conversions pre-aggregated so that a 90-day query over millions
 * of rows reads a few thousand rollup rows instead.
 *
 * - `rollup_days`, `rollup_hours`: per store, mode, local day (hour) and currency — clicks,
 *   conversions, attributed conversions, purchases, revenue, attributed revenue (metrics and
 *   timeseries).
 * - `rollup_dimension_clicks` / `rollup_dimension_credits`: per store, mode, local day and
 *   dimension value — clicks, and each model's credited conversions and revenue (breakdown).
 *
 * They are maintained off the request path: `catchUp` folds in the rows inserted since a
 * watermark (the tables' rowids; rows are only ever appended, and every write is serialized by
 * the group committer, so a rowid below the mark can never appear later). Every analytics read
 * runs the catch-up first, so results are exact and include every acknowledged write; a
 * background refresher keeps the backlog near zero so reads rarely wait.
 *
 * Local hours and days are those of the time zone recorded per store in `rollup_stores`. When a
 * store's time zone (or the platform's time zone data) changes, its rollups are rebuilt from the
 * stored rows, in bounded steps, before they are read again.
 */
import type { Database, Executor } from '../db/database.js';
import {
  adoptZones,
  type ClickFact,
  type ConversionFact,
  clicksAfter,
  conversionFactsOf,
  conversionsAfter,
  countAttributionChange,
  deleteStoreRollups,
  type Marks,
  type Rebuild,
  readAttributionChanges,
  readMarks,
  rollupProgress,
  rollupStores,
  setRollupStore,
  storesNeedingRebuild,
  writeMarks,
} from '../db/repositories/rollups.js';
import { addFoldRows, Fold, type FoldRows, perConversion } from './fold.js';
import { FoldThread } from './fold-thread.js';
import { type Zone, zoneOf } from './zone.js';

/**
 * Rows folded per job (catch-up or rebuild step): bounded, so that a backlog never holds the
 * writer (and the requests whose writes share its transaction) for long.
 */
export const READ_CHUNK = 5_000;
export const BACKGROUND_CHUNK = 1_000;

/** The platform's time zone data version: rollups computed with other data are rebuilt. */
export const TZDATA = process.versions.tz ?? 'unknown';

export interface CatchUpResult {
  clicks: number;
  conversions: number;
  /** More rows are waiting beyond this chunk. */
  more: boolean;
}

/** Folds fetched rows into `fold`; returns how many conversions they held. */
function foldRows(fold: Fold, clicks: ClickFact[], facts: ConversionFact[], zoneOfStore: (storeId: string) => Zone): number {
  for (const click of clicks) fold.addClick(click, zoneOfStore(click.store_id));
  let conversions = 0;
  for (const group of perConversion(facts)) {
    fold.addConversion(group, zoneOfStore((group[0] as ConversionFact).store_id), 1);
    conversions++;
  }
  return conversions;
}

/** Rows folded between two turns of the event loop by the in-process background fold (~2–4 ms of work). */
const SLICE = 32;
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** `foldRows`, with `pace()` every `SLICE` rows (in-process: requests are served meanwhile). */
async function foldRowsPaced(
  fold: Fold,
  clicks: ClickFact[],
  facts: ConversionFact[],
  zoneOfStore: (storeId: string) => Zone,
  pace: () => Promise<void>,
): Promise<number> {
  for (let i = 0; i < clicks.length; i += SLICE) {
    foldRows(fold, clicks.slice(i, i + SLICE), [], zoneOfStore);
    await pace();
  }
  const conversions = [...perConversion(facts)];
  for (let i = 0; i < conversions.length; i += SLICE) {
    foldRows(fold, [], conversions.slice(i, i + SLICE).flat(), zoneOfStore);
    await pace();
  }
  return conversions.length;
}

/**
 * Up to `limit` rows (clicks, or conversions with their fact rows) after a rowid, read `page`
 * at a time with `pace()` between: in-process, one read of ~500 conversions with their
 * touchpoints and clicks held the event loop for ~15 ms.
 */
async function readInPages<T extends { seq: number }>(
  read: (after: number, n: number) => Promise<T[]>,
  after: number,
  limit: number,
  page: number,
  pace: () => Promise<void>,
): Promise<T[]> {
  const rows: T[] = [];
  let taken = 0;
  let from = after;
  while (taken < limit) {
    const n = Math.min(page, limit - taken);
    const fetched = await read(from, n);
    const count = new Set(fetched.map((row) => row.seq)).size; // a conversion spans several fact rows
    rows.push(...fetched);
    taken += count;
    if (count < n) break;
    from = (fetched.at(-1) as T).seq;
    await pace();
  }
  return rows;
}

interface ZoneState {
  timezone: string;
  tzdata: string;
}

/** Per store, the zone its rows are folded in and the time zone data: the rollup's, or for a store never folded the store's current zone. */
async function zoneStates(db: Executor, storeIds: string[]): Promise<Map<string, ZoneState>> {
  const states = new Map<string, ZoneState>();
  for (const [id, store] of await rollupStores(db, storeIds)) states.set(id, { timezone: store.timezone, tzdata: store.tzdata });
  const missing = storeIds.filter((id) => !states.has(id));
  if (missing.length > 0) {
    for (const store of await db.selectFrom('stores').select(['id', 'timezone']).where('id', 'in', missing).execute()) {
      states.set(store.id, { timezone: store.timezone, tzdata: TZDATA });
    }
  }
  return states;
}

const sameZones = (a: Map<string, ZoneState>, b: Map<string, ZoneState>) =>
  a.size === b.size && [...a].every(([id, z]) => b.get(id)?.timezone === z.timezone && b.get(id)?.tzdata === z.tzdata);

/**
 * A fold computed outside any transaction, and what it was computed from: it may be written
 * only while the watermarks, the attribution-change count and the stores' zones are still these.
 * Computed in-process or in the worker thread, which keeps it until it writes it.
 */
export interface PendingFold {
  marks: Marks;
  changes: number;
  zones: [string, ZoneState][];
  rows: FoldRows;
  /** The watermarks once these rows are in. */
  next: Marks;
  clicks: number;
  conversions: number;
  /** More rows are waiting beyond this fold. */
  more: boolean;
}

/**
 * Reads up to `limit` clicks and conversions above the watermarks and folds them, writing
 * nothing. With `pace`, reads and folds in small steps and runs `pace()` between them (the
 * in-process fold yields to requests); without, in one go (a worker thread has nothing to yield to).
 * Returns null when nothing is waiting.
 */
export async function foldPending(db: Executor, limit: number, pace?: () => Promise<void>): Promise<PendingFold | null> {
  const page = pace ? SLICE * 2 : limit;
  const step = pace ?? (() => Promise.resolve());
  const marks = await readMarks(db);
  const changes = await readAttributionChanges(db);
  const clicks = await readInPages((after, n) => clicksAfter(db, after, n), marks.clicks, limit, page, step);
  const facts = await readInPages((after, n) => conversionsAfter(db, after, n), marks.conversions, limit, page, step);
  if (clicks.length === 0 && facts.length === 0) return null;
  const storeIds = [...new Set([...clicks.map((c) => c.store_id), ...facts.map((f) => f.store_id)])];
  const zones = await zoneStates(db, storeIds);
  const fold = new Fold();
  const zoneOfStore = (storeId: string) => zoneOf(zones.get(storeId)?.timezone ?? 'UTC');
  const conversions = pace
    ? await foldRowsPaced(fold, clicks, facts, zoneOfStore, pace)
    : foldRows(fold, clicks, facts, zoneOfStore);
  return {
    marks,
    changes,
    zones: [...zones],
    rows: fold.rows(),
    next: { clicks: clicks.at(-1)?.seq ?? marks.clicks, conversions: facts.at(-1)?.seq ?? marks.conversions },
    clicks: clicks.length,
    conversions,
    more: clicks.length === limit || conversions === limit,
  };
}

/**
 * Writes a fold computed outside the transaction (`foldPending`), unless the watermarks, the
 * attribution-change count or the zones of its stores moved since it was computed (a read's
 * catch-up, a re-attribution or a time zone change came first): then nothing is written and
 * `stale` is returned, for the next fold to start over. Run it in a write transaction.
 */
export async function writePendingFold(trx: Executor, pending: PendingFold): Promise<CatchUpResult & { stale: boolean }> {
  const { marks, changes, more } = pending;
  const stale = { clicks: 0, conversions: 0, more, stale: true };
  const current = await readMarks(trx);
  if (current.clicks !== marks.clicks || current.conversions !== marks.conversions) return stale;
  if ((await readAttributionChanges(trx)) !== changes) return stale;
  const storeIds = pending.zones.map(([id]) => id);
  await adoptZones(trx, storeIds, TZDATA);
  if (!sameZones(new Map(pending.zones), await zoneStates(trx, storeIds))) return stale;
  await addFoldRows(trx, pending.rows);
  await writeMarks(trx, pending.next);
  return { clicks: pending.clicks, conversions: pending.conversions, more, stale: false };
}

const NOTHING_PENDING = { clicks: 0, conversions: 0, more: false, stale: false };

/**
 * The background form of `catchUp`, in-process: rows are read and folded outside any
 * transaction, in slices between which requests are served, and only the result is written, in
 * one short job — by default at a quiet moment of the writer. Folding ~500 conversions inside
 * the write had held every request's write for 50–100 ms (measured at 500 conversions/s). The
 * server's refresher uses `catchUpInWorker`; reads use this form for their backlog
 * (`refreshRollups`), and tests compare the worker against it.
 */
export async function catchUpInBackground(
  database: Database,
  limit: number,
  { waitForQuiet = true } = {},
): Promise<CatchUpResult & { stale: boolean }> {
  const pending = await foldPending(database.db, limit, nextTurn);
  if (!pending) return NOTHING_PENDING;
  if (waitForQuiet) await database.quiet(); // not in the middle of a burst of requests
  return database.write((trx) => writePendingFold(trx, pending));
}

/**
 * The background form of `catchUp` in a worker thread (fold-worker.ts): the worker reads and
 * folds the new rows on its own connection, then — at a quiet moment of the writer, between two
 * group commits — writes the result itself. The event loop serving requests does none of it:
 * in-process, the fold's slices and its ~10 ms write per second were what set the conversion
 * p99 at 500 conversions/s.
 */
export async function catchUpInWorker(
  database: Database,
  thread: FoldThread,
  limit: number,
): Promise<CatchUpResult & { stale: boolean }> {
  const folded = await thread.fold(limit);
  if (!folded) return NOTHING_PENDING;
  await database.quiet();
  return database.writeAlone(() => thread.write());
}

/**
 * Folds up to `limit` clicks and `limit` conversions inserted since the watermarks into the
 * rollups and moves the watermarks. Run it inside `database.write` (it must be atomic with
 * the watermark, and serialized with the inserts).
 */
export async function catchUp(trx: Executor, limit = READ_CHUNK): Promise<CatchUpResult> {
  const marks = await readMarks(trx);
  const clicks = await clicksAfter(trx, marks.clicks, limit);
  const facts = await conversionsAfter(trx, marks.conversions, limit);
  if (clicks.length === 0 && facts.length === 0) return { clicks: 0, conversions: 0, more: false };

  const storeIds = [...new Set([...clicks.map((c) => c.store_id), ...facts.map((f) => f.store_id)])];
  const zones = await adoptZones(trx, storeIds, TZDATA);
  const fold = new Fold();
  const conversions = foldRows(fold, clicks, facts, (storeId) => zoneOf(zones.get(storeId) ?? 'UTC'));
  await fold.flush(trx);
  await writeMarks(trx, {
    clicks: clicks.at(-1)?.seq ?? marks.clicks,
    conversions: facts.at(-1)?.seq ?? marks.conversions,
  });
  return { clicks: clicks.length, conversions, more: clicks.length === limit || conversions === limit };
}

/**
 * When a store's time zone (or the time zone data) changed since its rollups were computed,
 * deletes them and starts a rebuild: `rebuildStep` refolds the store's rows up to the current
 * watermarks in the new zone, while the catch-up folds newer rows in the new zone already.
 * Returns false when nothing changed. Run inside `database.write`.
 */
export async function startRebuildIfStale(trx: Executor, storeId: string): Promise<boolean> {
  const store = await trx.selectFrom('stores').select('timezone').where('id', '=', storeId).executeTakeFirst();
  const current = (await rollupStores(trx, [storeId])).get(storeId);
  if (!store || !current || (current.timezone === store.timezone && current.tzdata === TZDATA)) return false;
  const until = await readMarks(trx);
  await deleteStoreRollups(trx, storeId);
  await setRollupStore(trx, storeId, {
    timezone: store.timezone,
    tzdata: TZDATA,
    rebuild: { done: { clicks: 0, conversions: 0 }, until },
  });
  return true;
}

/**
 * Refolds up to `limit` clicks and conversions of a store whose rollups are being rebuilt.
 * Returns true once the rebuild is complete (or when none is running). Run inside `database.write`.
 */
export async function rebuildStep(trx: Executor, storeId: string, limit = READ_CHUNK): Promise<boolean> {
  const state = (await rollupStores(trx, [storeId])).get(storeId);
  const rebuild = state?.rebuild;
  if (!state || !rebuild) return true;
  const { done, until } = rebuild;
  const clicks = done.clicks < until.clicks ? await clicksAfter(trx, done.clicks, limit, { storeId, upTo: until.clicks }) : [];
  const facts =
    done.conversions < until.conversions
      ? await conversionsAfter(trx, done.conversions, limit, { storeId, upTo: until.conversions })
      : [];
  const fold = new Fold();
  const zone = zoneOf(state.timezone);
  const conversions = foldRows(fold, clicks, facts, () => zone);
  await fold.flush(trx);
  // A short fetch means nothing of this store is left below the target.
  const next = {
    clicks: clicks.length < limit ? until.clicks : (clicks.at(-1) as ClickFact).seq,
    conversions: conversions < limit ? until.conversions : (facts.at(-1) as ConversionFact).seq,
  };
  const finished = next.clicks >= until.clicks && next.conversions >= until.conversions;
  await setRollupStore(trx, storeId, { ...state, rebuild: finished ? null : { done: next, until } });
  return finished;
}

/**
 * Brings the rollups up to date before a read: completes a rebuild of the store's rollups if
 * its time zone changed, then folds in every row acknowledged so far. Cheap when nothing is
 * pending (a few index lookups, no write).
 */
export async function refreshRollups(database: Database, store?: { id: string; timezone: string }): Promise<void> {
  if (store) {
    const state = (await rollupStores(database.db, [store.id])).get(store.id);
    if (state && (state.timezone !== store.timezone || state.tzdata !== TZDATA || state.rebuild)) {
      await database.write((trx) => startRebuildIfStale(trx, store.id));
      while (!(await database.write((trx) => rebuildStep(trx, store.id, READ_CHUNK)))) {}
    }
  }
  // The backlog (up to a second or two of rows between background folds) is folded in slices
  // that let requests through, then the exact catch-up inside a write folds the few rows that
  // arrived meanwhile. Folding it all inside the write had held the event loop for 20–70 ms per
  // read (a dashboard reading metrics twice a second took the conversion p99 at 500/s from ~11
  // to 19 ms). Handing the backlog to the worker thread measured worse (p99 16–22 ms against
  // 10–13): its write cannot wait for a quiet moment while a read waits for it.
  if (await hasBacklog(database)) await catchUpInBackground(database, READ_CHUNK, { waitForQuiet: false });
  await drain(database, READ_CHUNK);
}

async function hasBacklog(database: Database): Promise<boolean> {
  const { stored, folded } = await rollupProgress(database.db);
  return stored.clicks > folded.clicks || stored.conversions > folded.conversions;
}

async function drain(database: Database, chunk: number): Promise<void> {
  for (;;) {
    if (!(await hasBacklog(database))) return;
    const result = await database.write((trx) => catchUp(trx, chunk));
    if (!result.more) return;
  }
}

/** Whether a conversion (by rowid) is in the rollups now: folded by the catch-up and not waiting for a rebuild. */
function isFolded(seq: number, mark: number, rebuild: Rebuild | null): boolean {
  if (seq > mark) return false;
  return !rebuild || seq <= rebuild.done.conversions || seq > rebuild.until.conversions;
}

/**
 * Keeps the rollups exact when a stored conversion's attribution changes (reattribution).
 * Call it inside the same `database.write` job that makes the change, around it:
 *
 *   await database.write((trx) => withConversionRollup(trx, conversionId, () => replaceAttribution(trx, …)));
 *
 * If the conversion is already in the rollups, its contribution under its old attribution
 * (attributed flag, attributed click, touchpoints) is subtracted and its new one added; if not,
 * nothing is done and the catch-up (or a rebuild) folds in its new state later. `change` may
 * change the conversion's attribution and touchpoints only (not its store, mode, event type,
 * value, currency or time). Returns what `change` returns.
 */
export async function withConversionRollup<T>(trx: Executor, conversionId: string, change: () => Promise<T>): Promise<T> {
  const marks = await readMarks(trx);
  const before = await conversionFactsOf(trx, conversionId);
  const result = await change();
  await countAttributionChange(trx); // a background fold that read the old state must start over
  const first = before[0];
  if (!first) return result;
  const state = (await rollupStores(trx, [first.store_id])).get(first.store_id);
  if (!state || !isFolded(first.seq, marks.conversions, state.rebuild)) return result;
  const after = await conversionFactsOf(trx, conversionId);
  const zone = zoneOf(state.timezone);
  const fold = new Fold();
  fold.addConversion(before, zone, -1);
  fold.addConversion(after, zone, 1);
  await fold.flush(trx);
  return result;
}

const REBUILD_BUDGET_MS = 200;

export interface RollupRefresher {
  stop(): Promise<void>;
}

/**
 * Keeps the rollups close to the stored rows in the background: every `intervalMs`, advances
 * the rebuilds of stores whose time zone changed, and every `foldEveryMs` folds in new rows, in
 * small jobs so that the writes of requests are never held for long. Folding less often folds
 * more rows into each rollup row (measured under 250 conversions/s: 1 s instead of 250 ms
 * halves the upserts); reads catch up first, so this never makes a result stale. Errors (e.g.
 * the database is unreachable) are reported to `onError` once and retried on every tick.
 */
export function startRollupRefresher(
  database: Database,
  options: { intervalMs?: number; foldEveryMs?: number; inWorker?: boolean; onError?: (error: unknown) => void } = {},
): RollupRefresher {
  // With `inWorker`, a worker thread reads, folds and writes the new rows (catchUpInWorker).
  const thread = options.inWorker ? new FoldThread(database.file) : undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  let failing = false; // report a failure once, not on every tick
  let foldedAt = performance.now();
  const tick = async () => {
    // Rebuilds advance a bounded amount per tick, so new rows keep being folded in meanwhile.
    const until = performance.now() + REBUILD_BUDGET_MS;
    for (const storeId of await storesNeedingRebuild(database.db, TZDATA)) {
      await database.write((trx) => startRebuildIfStale(trx, storeId));
      while (!stopped && performance.now() < until) {
        if (await database.write((trx) => rebuildStep(trx, storeId, BACKGROUND_CHUNK))) break;
      }
    }
    if (performance.now() - foldedAt < (options.foldEveryMs ?? 1000)) return;
    foldedAt = performance.now();
    while (!stopped) {
      const result = thread
        ? await catchUpInWorker(database, thread, BACKGROUND_CHUNK)
        : await catchUpInBackground(database, BACKGROUND_CHUNK);
      if (!result.more || result.stale) break;
    }
  };
  const timer = setInterval(() => {
    if (running || stopped) return;
    running = tick()
      .then(() => {
        failing = false;
      })
      .catch((error) => {
        if (!failing && !stopped) options.onError?.(error);
        failing = true;
      })
      .finally(() => {
        running = undefined;
      });
  }, options.intervalMs ?? 250);
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
      await thread?.close();
    },
  };
}
