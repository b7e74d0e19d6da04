/**
 * Packing the reconciliation's trace ids of past days (migration 0045, db/repositories/
 * report-traces.ts): the rollup refresher (rollups.ts) packs the days at least two days old
 * every `PACK_EVERY_MS`, a few groups (store, mode, day, destination) a write so that each stays
 * short; a store's year of one trace id per conversion becomes ~1,100 rows for the report to read
 * instead of ~245,000.
 */
import { type Database, writeJob } from '../db/database.js';
import { packTraceGroups } from '../db/repositories/report-traces.js';

/** How often the refresher packs. */
export const PACK_EVERY_MS = 60_000;
/**
 * Groups a write. A group is as many rows as its day's distinct trace ids: a few hundred for a
 * store sending each conversion in a request of its own at ~550 a day; far more for a large store
 * sending each of its own too (then a write is long: packing part of a group is as exact, not done yet).
 */
const GROUPS_A_WRITE = 4;
const DAY_MS = 86_400_000;

/**
 * One write of the packing, as a `WriteJob`: on SQLite on the writer thread after the requests'
 * writes (`background`), on PostgreSQL on the pool.
 */
export const PACK_TRACES = writeJob(
  'packTraceGroups',
  (trx, { before, groups }: { before: string; groups: number }) => packTraceGroups(trx, before, groups),
  { background: true },
);

/**
 * The first local date not packed: the UTC date two days before `now`. Local dates are within
 * 14 h of UTC's, so every day packed is at least two days old in its store's time zone: no day
 * that still gets most of its deliveries; one that gets a late change is packed again.
 */
export function packingCutoff(now: number): string {
  return new Date(now - 2 * DAY_MS).toISOString().slice(0, 10);
}

/** Packs every past day's trace ids, a few groups a write, until none is left or `stopped()`; returns the groups packed. */
export async function packTraces(database: Database, now = Date.now(), stopped: () => boolean = () => false): Promise<number> {
  const before = packingCutoff(now);
  let total = 0;
  while (!stopped()) {
    const packed = await database.runWrite(PACK_TRACES, { before, groups: GROUPS_A_WRITE });
    total += packed;
    if (packed < GROUPS_A_WRITE) break;
  }
  return total;
}
