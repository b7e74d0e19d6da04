/**
 * Packing the reconciliation's trace ids of past days (migration 0045, db/repositories/
 * report-traces.ts): the rollup refresher (rollups.ts) packs the days at least two days old
 * every `PACK_EVERY_MS`, up to `ROWS_A_WRITE` rows a write so that each write stays short; a
 * store's year of one trace id per conversion becomes ~1,100 rows for the report to read instead
 * of ~245,000.
 */
import { type Database, writeJob } from '../db/database.js';
import { packTraceRows } from '../db/repositories/report-traces.js';

/** How often the refresher packs. */
export const PACK_EVERY_MS = 60_000;
/**
 * Trace rows a write. A day's group is as many rows as its distinct trace ids: a few hundred for
 * a store sending each conversion in a request of its own at ~550 a day, far more for a larger
 * one; a write packs several small groups, or part of a large one (report-traces.ts).
 */
export const ROWS_A_WRITE = 2_000;
const DAY_MS = 86_400_000;

/**
 * One write of the packing, as a `WriteJob`: on SQLite on the writer thread after the requests'
 * writes (`background`), on PostgreSQL on the pool.
 */
export const PACK_TRACES = writeJob(
  'packTraceRows',
  (trx, { before, rows }: { before: string; rows: number }) => packTraceRows(trx, before, rows),
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

/**
 * Packs every past day's trace ids, `rowsAWrite` rows a write, until none is left or
 * `stopped()`; returns the rows packed.
 */
export async function packTraces(
  database: Database,
  now = Date.now(),
  stopped: () => boolean = () => false,
  rowsAWrite = ROWS_A_WRITE,
): Promise<number> {
  const before = packingCutoff(now);
  let total = 0;
  while (!stopped()) {
    const packed = await database.runWrite(PACK_TRACES, { before, rows: rowsAWrite });
    total += packed;
    if (packed < rowsAWrite) break;
  }
  return total;
}
