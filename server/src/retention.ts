/**
 * RETENTION_DAYS: clicks and conversions older than that many days (by click time / event
 * time) are deleted in the background, with their touchpoints, outbox jobs and rollup queue
 * rows (db/repositories/retention.ts). The analytics rollups keep counting them; the reports'
 * rollups (reconciliation, match quality: analytics/report-rollups.ts) count only the conversions that remain.
 */
import { subtractDeleted } from './analytics/report-rollups.js';
import type { Database } from './db/database.js';
import { deleteAmbiguityDay, oldestAmbiguityDay } from './db/repositories/attribution-keys.js';
import { deleteIdentityLinksSeenBefore } from './db/repositories/identity-links.js';
import { type Deleted, deleteExpiredEvents } from './db/repositories/retention.js';

const DAY_MS = 86_400_000;

/** Events per write: a batch holds the SQLite writer for milliseconds, so requests' writes interleave. */
export const RETENTION_BATCH = 1000;

export interface RetentionOptions {
  days: number;
  /** Between runs (default 10 minutes). */
  intervalMs?: number;
  /** Before the first run (default 10 s): the server starts serving first. */
  firstRunMs?: number;
  /** Events per batch (default RETENTION_BATCH). */
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

/**
 * Deletes expired events once shortly after start and then every `intervalMs`: each run writes
 * steps (a whole month on PostgreSQL, else a batch), each in a `database.write` of its own,
 * until one says nothing more is left.
 * Runs never overlap; `stop` waits for the one under way (which stops after its current batch).
 */
export function startRetention(database: Database, options: RetentionOptions): Retention {
  const batch = options.batchSize ?? RETENTION_BATCH;
  const now = options.now ?? Date.now;
  let running: Promise<void> | undefined;
  let stopped = false;
  let failing = false; // report a failure once, not on every run

  const run = async () => {
    // One cutoff per run: the run ends even while events keep expiring.
    const before = now() - options.days * DAY_MS;
    const total: Deleted = { clicks: 0, conversions: 0 };
    try {
      while (!stopped) {
        const deleted = await database.write((trx) => deleteExpiredEvents(trx, before, batch, subtractDeleted));
        total.clicks += deleted.clicks;
        total.conversions += deleted.conversions;
        if (!deleted.more) break;
      }
      // Identity links (POST /v1/track/identify) last seen before the cutoff, a batch per write.
      for (let deleted = batch; deleted >= batch && !stopped; ) {
        deleted = await database.write((trx) => deleteIdentityLinksSeenBefore(trx, before, batch));
      }
      // The ambiguity counts' rows (api.md §13) of days no window reaches (90 days and one), a
      // day per write (after the first run, one day's once a day); looked for with a read.
      const reached = Math.floor(now() / DAY_MS) - 91;
      for (let day = await oldestAmbiguityDay(database.read, reached); day !== undefined && !stopped; ) {
        await database.write((trx) => deleteAmbiguityDay(trx, day as number));
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
