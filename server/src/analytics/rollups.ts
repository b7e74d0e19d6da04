/**
 * Analytics rollups: clicks and conversions pre-aggregated so that a 90-day query over millions
 * of rows reads a few thousand rollup rows instead.
 *
 * - `rollup_days`, `rollup_hours`: per store, mode, local day (hour) and currency — clicks,
 *   conversions, attributed conversions, purchases, revenue, attributed revenue, and refunds
 *   (all, of attributed conversions) on the refund's own day / hour (metrics and timeseries).
 * - `rollup_dimension_clicks` / `rollup_dimension_credits`: per store, mode, local day and
 *   dimension value — clicks, and each model's credited conversions, revenue and refunds
 *   (breakdown; a refund's share in proportion to each touchpoint's credit, see fold.ts).
 *
 * Every event (click, conversion, refund) is queued for them in the transaction that stores it (`rollup_queue`). A fold
 * reads queued events and computes their deltas outside any transaction, then — in one write —
 * takes its queue rows (only if each is still queued at the version it read) and adds the
 * deltas. A row is therefore counted once however many folds race, on however many instances,
 * and is never skipped however late its transaction commits. Every analytics read folds its
 * store's queue first, so results are exact and include every acknowledged write; a background
 * refresher keeps the queue short so reads rarely wait.
 *
 * Local hours and days are those of the time zone recorded per store in `rollup_stores`. When a
 * store's time zone (or the platform's time zone data) changes, its rollups are deleted and all
 * of its events queued again, in one transaction; folds then recompute them in the new zone.
 */

import { zoneOf } from '../calendar/zone.js';
import { crashPoint } from '../crash-point.js';
import { backgroundJob, type Database, type Reader, type Writer } from '../db/database.js';
import {
  type CustomerRef,
  customersOfConversions,
  queueCohortCustomers,
  requeueStoreCohorts,
} from '../db/repositories/cohort-rollups.js';
import { reportFacts } from '../db/repositories/reconciliation.js';
import { refundFacts, refundsOfConversion } from '../db/repositories/refunds.js';
import {
  adoptZones,
  bumpQueued,
  bumpQueuedMany,
  type ConversionFact,
  clickFacts,
  conversionFacts,
  lockConversion,
  type QueuedRow,
  type RollupZone,
  readQueue,
  requeueStore,
  rollupZones,
  setRollupZone,
  storesNeedingRebuild,
  takeQueued,
} from '../db/repositories/rollup-queue.js';
import { addFoldRows, deleteStoreRollups, type FoldRows } from '../db/repositories/rollup-writes.js';
import { cohortStep, FOLD_COHORTS } from './cohort-rollups.js';
import { Fold, perConversion } from './fold.js';
import { FoldProgress, type RollupLog } from './fold-progress.js';
import { FoldSize } from './fold-size.js';
import { ReportFold } from './report-fold.js';
import { PACK_EVERY_MS, packTraces } from './trace-compaction.js';

export type { RollupLog };

/** Events folded per read step and per background step: bounded, so no one write holds the writer long. */
export const READ_CHUNK = 5_000;
export const BACKGROUND_CHUNK = 1_000;

/** The platform's time zone data version: rollups computed with other data are rebuilt. */
export const TZDATA = process.versions.tz ?? 'unknown';

/** A fold computed outside any transaction, and the queue rows (at their versions) it came from. */
export interface PendingFold {
  queued: QueuedRow[];
  zones: [string, RollupZone][];
  rows: FoldRows;
  /** The customers of the folded conversions and refunds: queued for the cohort rollups (cohort-rollups.ts). */
  customers: CustomerRef[];
  clicks: number;
  conversions: number;
  /** More rows may be waiting beyond this fold. */
  more: boolean;
}

/**
 * Reads up to `limit` queued events (of one store, with `storeId`) and folds them, writing
 * nothing. Returns null when none is waiting. Read-only, so it runs as a background job too.
 */
export async function foldQueued(
  db: Reader,
  { limit, storeId }: { limit: number; storeId?: string },
): Promise<PendingFold | null> {
  const queued = await readQueue(db, limit, storeId);
  if (queued.length === 0) return null;
  const clickIds = queued.filter((q) => q.kind === 'click').map((q) => q.id);
  const conversionIds = queued.filter((q) => q.kind === 'conversion').map((q) => q.id);
  const refundIds = queued.filter((q) => q.kind === 'refund').map((q) => q.id);
  const clicks = await clickFacts(db, clickIds);
  const facts = await conversionFacts(db, conversionIds);
  const refunds = await refundFacts(db, refundIds);
  const refunded = byConversion(await conversionFacts(db, [...new Set(refunds.map((r) => r.conversion_id))]));
  const zones = await rollupZones(db, [...new Set(queued.map((q) => q.store_id))], TZDATA);
  const zoneOfStore = (storeId: string) => zoneOf(zones.get(storeId)?.timezone ?? 'UTC');
  const fold = new Fold();
  for (const click of clicks) fold.addClick(click, zoneOfStore(click.store_id));
  let conversions = 0;
  for (const group of perConversion(facts)) {
    fold.addConversion(group, zoneOfStore((group[0] as ConversionFact).store_id), 1);
    conversions++;
  }
  // A refund whose conversion is gone (retention takes both) counts nowhere.
  for (const refund of refunds) {
    const of = refunded.get(refund.conversion_id);
    if (of) fold.addRefund(refund, of, zoneOfStore(refund.store_id), 1);
  }
  const reports = new ReportFold(); // the reconciliation's and match quality's counts
  for (const fact of await reportFacts(db, conversionIds)) reports.addConversion(fact, zoneOfStore(fact.store_id), 1);
  const rows = { ...fold.rows(), reports: reports.rows() };
  const customers = await customersOfConversions(db, [...new Set([...conversionIds, ...refunds.map((r) => r.conversion_id)])]);
  return { queued, zones: [...zones], rows, customers, clicks: clicks.length, conversions, more: queued.length === limit };
}

/** Fact rows per conversion id. */
function byConversion(facts: ConversionFact[]): Map<string, ConversionFact[]> {
  const map = new Map<string, ConversionFact[]>();
  for (const group of perConversion(facts)) map.set((group[0] as ConversionFact).id, group);
  return map;
}

/** `foldQueued` as a background job (on the database's background thread, either engine). */
export const FOLD_QUEUED = backgroundJob('foldQueued', foldQueued);

/** A fold whose queue rows were taken (or changed) by someone else first: it was not written. */
export class StaleFold extends Error {
  constructor() {
    super('the fold was computed from rows that changed meanwhile');
  }
}

/**
 * Writes a fold computed outside the transaction: takes its queue rows and adds its deltas, or
 * throws StaleFold (rolling the job back) when a row is no longer queued at the version read or
 * a store's rollup zone moved. Run it inside `database.write`.
 */
export async function applyFold(trx: Writer, pending: PendingFold): Promise<void> {
  const zones = new Map(pending.zones);
  if (!(await takeQueued(trx, pending.queued))) throw new StaleFold();
  await adoptZones(trx, zones);
  const current = await rollupZones(trx, [...zones.keys()], TZDATA);
  for (const [storeId, zone] of zones) {
    const now = current.get(storeId);
    if (now && (now.timezone !== zone.timezone || now.tzdata !== zone.tzdata)) throw new StaleFold();
  }
  await addFoldRows(trx, pending.rows);
  await queueCohortCustomers(trx, pending.customers);
  crashPoint('fold'); // test hook (crash-point.ts): deltas written, the transaction not committed
}

/** The last fold step started on each database by this process (see `foldStep`). */
const lastFoldStep = new WeakMap<Database, Promise<unknown>>();

/**
 * Reads (with `read`), folds and writes one step; 'stale' when another fold got there first
 * (nothing written). Steps on one database take turns within the process: the refresher and
 * reads fold from the head of the same queue, so concurrent steps would mostly compute folds of
 * the same rows only for all but one to be thrown away (measured: each queued row read 2.1 times
 * on average by an initial build with the refresher running). Other instances may still race;
 * the queue versions keep that exact.
 */
async function foldStep(
  database: Database,
  read: () => Promise<PendingFold | null>,
): Promise<{ step: 'done' | 'more' | 'stale'; pending: PendingFold | null }> {
  const run = async () => {
    const pending = await read();
    if (!pending) return { step: 'done' as const, pending };
    try {
      await database.write((trx) => applyFold(trx, pending));
    } catch (error) {
      if (error instanceof StaleFold) return { step: 'stale' as const, pending };
      throw error;
    }
    return { step: pending.more ? ('more' as const) : ('done' as const), pending };
  };
  const previous = lastFoldStep.get(database) ?? Promise.resolve();
  const step = previous.then(run, run);
  lastFoldStep.set(
    database,
    step.catch(() => undefined),
  );
  return step;
}

/**
 * Moves a store's rollups to its current zone when it (or the time zone data) changed: deletes
 * them and queues all of the store's events again, in one transaction. A fold in flight that
 * read the store's events in the old zone finds their versions moved and is not written.
 */
export async function rebuildIfZoneChanged(trx: Writer, store: { id: string; timezone: string }): Promise<boolean> {
  if (!(await setRollupZone(trx, store.id, { timezone: store.timezone, tzdata: TZDATA }))) return false;
  await deleteStoreRollups(trx, store.id);
  await requeueStore(trx, store.id);
  await requeueStoreCohorts(trx, store.id);
  return true;
}

/**
 * Brings a store's rollups up to date before a read: rebuilds them if the store's time zone
 * changed, then folds every event of the store queued so far. Cheap when nothing is queued (one
 * index lookup, no write).
 */
export async function refreshRollups(database: Database, store: { id: string; timezone: string }): Promise<void> {
  const recorded = (await rollupZones(database.read, [store.id], TZDATA)).get(store.id);
  if (recorded && (recorded.timezone !== store.timezone || recorded.tzdata !== TZDATA)) {
    await database.write((trx) => rebuildIfZoneChanged(trx, store));
  }
  // A stale step means some of these rows changed first: read the queue again, a smaller step.
  const size = new FoldSize(READ_CHUNK);
  for (;;) {
    const { step } = await foldStep(database, () => foldQueued(database.read, { limit: size.value, storeId: store.id }));
    if (step === 'done') return;
    size.after(step);
  }
}

/**
 * Keeps the rollups exact when a stored conversion's attribution changes (reattribution).
 * Call it inside the `database.write` job that makes the change, around it:
 *
 *   await database.write((trx) => withConversionRollup(trx, conversionId, () => replaceAttribution(trx, …)));
 *
 * A conversion (or a refund of it) still queued is marked changed (a fold that read its old
 * state is not written; the next one folds its new state). One already folded has its old
 * contribution (attributed flag, attributed click, touchpoints) subtracted and its new one
 * added; so has each of its refunds already folded (their credit follows the touchpoints).
 * `change` may change the conversion's attribution and touchpoints only. Returns what
 * `change` returns.
 */
export async function withConversionRollup<T>(trx: Writer, conversionId: string, change: () => Promise<T>): Promise<T> {
  await lockConversion(trx, conversionId);
  const queued = await bumpQueued(trx, conversionId);
  // Refunds of this conversion are recorded under the same lock: this list stays whole.
  const refunds = await refundsOfConversion(trx, conversionId);
  const queuedRefunds = await bumpQueuedMany(
    trx,
    refunds.map((r) => r.id),
  );
  const folded = refunds.filter((r) => !queuedRefunds.has(r.id));
  if (queued && folded.length === 0) {
    const result = await change();
    await queueCohortCustomers(trx, await customersOfConversions(trx, [conversionId]));
    return result;
  }
  const before = await conversionFacts(trx, [conversionId]);
  const result = await change();
  // The customer's cohort contribution follows the attribution (its channel) and the value.
  await queueCohortCustomers(trx, await customersOfConversions(trx, [conversionId]));
  const first = before[0];
  if (!first) return result;
  const zone = (await rollupZones(trx, [first.store_id], TZDATA)).get(first.store_id);
  if (!zone) return result;
  const after = await conversionFacts(trx, [conversionId]);
  const fold = new Fold();
  const inZone = zoneOf(zone.timezone);
  if (!queued) {
    fold.addConversion(before, inZone, -1);
    fold.addConversion(after, inZone, 1);
  }
  for (const refund of folded) {
    fold.addRefund(refund, before, inZone, -1);
    fold.addRefund(refund, after, inZone, 1);
  }
  await addFoldRows(trx, fold.rows());
  return result;
}

export interface RollupRefresher {
  stop(): Promise<void>;
}

/**
 * How often the refresher folds (`foldEveryMs`), per engine. Folding less often folds more
 * events into each rollup row (measured under 250 conversions/s: 1 s instead of 250 ms halves
 * the upserts), and reads fold first, so no interval makes a result stale.
 * - SQLite, every second: its one writer pays for every upsert.
 * - PostgreSQL, every 250 ms: a second's step in one piece (then read and folded on the event
 *   loop: ~12 ms of folding 500 conversions, then ~900 rows of upserts) was the p99 of the
 *   requests around it. Conversions at 500/s on a 1M-click store, p99 with fbclid + IP + UA:
 *   24.7 / 29.8 / 26.5 ms every second, 13.8 / 14.5 / 17.3 ms every 250 ms, the CPU per
 *   conversion the same (bench/README.md). The reading and folding now run on the background
 *   thread on both engines; the write (upserts) still runs here.
 */
export const FOLD_EVERY_MS = { sqlite: 1000, postgres: 250 } as const;

/**
 * Keeps the rollups close to the stored rows in the background: every `intervalMs`, rebuilds
 * the rollups of stores whose time zone changed, and every `foldEveryMs` (`FOLD_EVERY_MS`) folds
 * queued events, reading and folding them as a background job (off the event loop) and
 * writing each step in one short write. Errors (e.g. the database is
 * unreachable, the disk full) are retried on every tick and reported to `onError` once per
 * failure streak; its end is logged (`log`) with how many tries failed and for how long. A
 * streak ends only at a tick that did all of its work: the ticks between two folds, which do not
 * fold, say nothing about whether folding works again.
 */
export function startRollupRefresher(
  database: Database,
  options: {
    intervalMs?: number;
    foldEveryMs?: number;
    onError?: (error: unknown) => void;
    /** Rebuilds and the progress of long folds are logged here. */
    log?: RollupLog;
    /** How often a long fold logs its progress (default 5 s). */
    progressEveryMs?: number;
    /** Events per background step (default BACKGROUND_CHUNK). */
    chunk?: number;
    /** How often past days' trace ids are packed (trace-compaction.ts; default PACK_EVERY_MS). */
    packEveryMs?: number;
  } = {},
): RollupRefresher {
  let running: Promise<void> | undefined;
  let stopped = false;
  // The current failure streak: reported once when it starts, logged when it ends.
  let streak: { failures: number; since: number } | undefined;
  let foldedAt = performance.now();
  let packedAt = Number.NEGATIVE_INFINITY;
  let progress: FoldProgress | undefined;
  const size = new FoldSize(options.chunk ?? BACKGROUND_CHUNK);
  const cohortSize = new FoldSize(Math.max(1, Math.floor((options.chunk ?? BACKGROUND_CHUNK) / 4)));
  /** One round of the work; true when it did all of it (it folded), false when it stopped early. */
  const tick = async (): Promise<boolean> => {
    for (const store of await storesNeedingRebuild(database.read, TZDATA)) {
      if (stopped) return false;
      if (await database.write((trx) => rebuildIfZoneChanged(trx, store))) {
        options.log?.info(
          { storeId: store.id, timezone: store.timezone },
          "rebuilding a store's analytics rollups in its time zone (it changed, or the time zone data did)",
        );
      }
    }
    if (performance.now() - foldedAt < (options.foldEveryMs ?? 1000)) return false;
    foldedAt = performance.now();
    // One fold may span ticks (a stale step, a failure): its progress goes on until the queue is empty.
    if (options.log) progress ??= new FoldProgress(database, options.log, options.progressEveryMs ?? 5000);
    while (!stopped) {
      const { step, pending } = await foldStep(database, () => database.background(FOLD_QUEUED, { limit: size.value }));
      if (step !== 'stale' && pending) await progress?.folded(pending.queued.length);
      if (step === 'done') {
        progress?.finished();
        progress = undefined;
      }
      // A stale step is tried again at once, smaller; one of a single event waits for the next tick.
      if (!size.after(step) || step === 'done') break;
    }
    if (performance.now() - packedAt >= (options.packEveryMs ?? PACK_EVERY_MS)) {
      packedAt = performance.now();
      await packTraces(database, Date.now(), () => stopped);
    }
    // Then the customers those folds queued for the cohort rollups, a quarter as many a step
    // (a customer's write is a row of its own and a few cells: each write stays short).
    while (!stopped) {
      const limit = cohortSize.value;
      const step = await cohortStep(database, () => database.background(FOLD_COHORTS, { limit, tzdata: TZDATA }));
      if (!cohortSize.after(step) || step === 'done') break;
    }
    return !stopped;
  };
  const timer = setInterval(() => {
    if (running || stopped) return;
    running = tick()
      .then((complete) => {
        if (!complete || !streak) return;
        const { failures, since } = streak;
        streak = undefined;
        const seconds = Math.round((performance.now() - since) / 100) / 10;
        options.log?.info(
          { failedAttempts: failures, seconds },
          `analytics rollups are refreshed again, after ${failures} failed attempts over ${seconds} s`,
        );
      })
      .catch((error) => {
        if (stopped) return;
        if (!streak) {
          streak = { failures: 0, since: performance.now() };
          options.onError?.(error);
        }
        streak.failures++;
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
    },
  };
}
