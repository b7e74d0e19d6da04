/**
 * RETENTION_DAYS: clicks and conversions older than that many days (by click time / event
 * time) are deleted in the background, with their touchpoints, outbox jobs and rollup queue
 * rows (db/repositories/retention.ts). The analytics rollups keep counting them; the reports'
 * rollups (reconciliation, match quality: analytics/report-rollups.ts) count only the conversions that remain.
 */
import { subtractDeleted } from './analytics/report-rollups.js';
import { type Database, writeJob } from './db/database.js';
import { deleteAmbiguityDay, oldestAmbiguityDay } from './db/repositories/attribution-keys.js';
import { deleteIdentityLinksSeenBefore } from './db/repositories/identity-links.js';
import { type Deleted, deleteExpiredEvents, retentionBatchBudgetMs } from './db/repositories/retention.js';

const DAY_MS = 86_400_000;

/** Events per write at most. */
export const RETENTION_BATCH = 1000;
const MIN_BATCH = 50;

/**
 * The next batch's size after one of `size` events took `tookMs` (its wait behind requests'
 * writes included: a busy writer gets smaller batches): scaled towards `budgetMs` (the engine's
 * `batchBudgetMs`), within [50, `max`], growing at most twofold a batch. On SQLite a 1,000-event
 * batch held the writer thread 120 ms on a slow 2-core machine, and the conversions behind it
 * (bench/README.md, retention at 2M). Without a budget (PostgreSQL), `max`.
 */
export function nextBatchSize(size: number, tookMs: number, max: number, budgetMs: number | undefined): number {
  if (budgetMs === undefined) return max;
  const scaled = Math.round((size * budgetMs) / Math.max(tookMs, 0.1));
  return Math.max(Math.min(MIN_BATCH, max), Math.min(max, 2 * size, scaled));
}

export interface RetentionOptions {
  days: number;
  /** Between runs (default 10 minutes). */
  intervalMs?: number;
  /** Before the first run (default 10 s): the server starts serving first. */
  firstRunMs?: number;
  /** Events per batch at most (default RETENTION_BATCH; each batch sized by `nextBatchSize`). */
  batchSize?: number;
  /** A failed run (e.g. the database is unreachable), reported once until a run succeeds; it is retried next time. */
  onError?: (error: unknown) => void;
  /** After each run that deleted something. */
  onDeleted?: (deleted: Deleted) => void;
  now?: () => number;
}

export interface Retention {
  stop(): Promise<void>;
}

interface Cutoff {
  before: number;
  limit: number;
}

/**
 * Retention's writes, as `WriteJob`s: on SQLite they run on the writer thread, after the
 * requests' writes (`background`), never on the event loop — there, a month's deletes held it
 * for half of its time, and every request with it (bench/README.md, retention at 2M); on
 * PostgreSQL on the pool, as any write.
 */
export const DELETE_EXPIRED_EVENTS = writeJob(
  'deleteExpiredEvents',
  (trx, { before, limit }: Cutoff) => deleteExpiredEvents(trx, before, limit, subtractDeleted),
  { background: true },
);
export const DELETE_IDENTITY_LINKS = writeJob(
  'deleteIdentityLinksSeenBefore',
  (trx, { before, limit }: Cutoff) => deleteIdentityLinksSeenBefore(trx, before, limit),
  { background: true },
);
export const DELETE_AMBIGUITY_DAY = writeJob('deleteAmbiguityDay', (trx, day: number) => deleteAmbiguityDay(trx, day), {
  background: true,
});

/**
 * Deletes expired events once shortly after start and then every `intervalMs`: each run writes
 * steps (a whole month on PostgreSQL, else a batch), each a write of its own (the jobs above),
 * until one says nothing more is left.
 * Runs never overlap; `stop` waits for the one under way (which stops after its current batch).
 */
export function startRetention(database: Database, options: RetentionOptions): Retention {
  const batch = options.batchSize ?? RETENTION_BATCH;
  const budget = retentionBatchBudgetMs(database.read);
  const now = options.now ?? Date.now;
  let running: Promise<void> | undefined;
  let stopped = false;
  let failing = false; // report a failure once, not on every run

  const run = async () => {
    // One cutoff per run: the run ends even while events keep expiring.
    const before = now() - options.days * DAY_MS;
    const total: Deleted = { clicks: 0, conversions: 0 };
    try {
      for (let size = batch; !stopped; ) {
        const started = performance.now();
        const deleted = await database.runWrite(DELETE_EXPIRED_EVENTS, { before, limit: size });
        total.clicks += deleted.clicks;
        total.conversions += deleted.conversions;
        if (!deleted.more) break;
        const took = performance.now() - started;
        size = nextBatchSize(size, took, batch, budget);
        // Where requests wait for retention (SQLite), as long a pause: the writer thread is
        // retention's at most half of the time, and the two cores are not both taken.
        if (budget !== undefined) await new Promise((resolve) => setTimeout(resolve, took));
      }
      // Identity links (POST /v1/track/identify) last seen before the cutoff, a batch per write.
      for (let deleted = batch; deleted >= batch && !stopped; ) {
        deleted = await database.runWrite(DELETE_IDENTITY_LINKS, { before, limit: batch });
      }
      // The ambiguity counts' rows (api.md §13) of days no window reaches (90 days and one), a
      // day per write (after the first run, one day's once a day); looked for with a read.
      const reached = Math.floor(now() / DAY_MS) - 91;
      for (let day = await oldestAmbiguityDay(database.read, reached); day !== undefined && !stopped; ) {
        await database.runWrite(DELETE_AMBIGUITY_DAY, day);
        day = await oldestAmbiguityDay(database.read, reached);
      }
    } finally {
      if (total.clicks + total.conversions > 0) options.onDeleted?.(total);
    }
  };

  const tick = () => {
    if (running || stopped) return;
    running = run()
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
  };

  const first = setTimeout(tick, options.firstRunMs ?? 10_000);
  const timer = setInterval(tick, options.intervalMs ?? 10 * 60_000);
  first.unref();
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearTimeout(first);
      clearInterval(timer);
      await running;
    },
  };
}
