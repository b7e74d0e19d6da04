/**
 * Keeping the report rollups (reconciliation, match quality: report-fold.ts) exact when a
 * conversion changes after it was recorded: a destination's job changes status, a resend, a
 * refund, a reattribution, an order merge, retention deleting it. A conversion is folded with
 * its state when it leaves the rollup queue (rollups.ts `foldQueued`); afterwards every change
 * moves its counts in the transaction that makes the change, exactly once.
 */
import { zoneOf } from '../calendar/zone.js';
import type { Writer } from '../db/database.js';
import { engineOf } from '../db/engine.js';
import { type DestinationKind, type ReportFact, reportFacts } from '../db/repositories/reconciliation.js';
import { bumpQueuedMany, rollupZones } from '../db/repositories/rollup-queue.js';
import { addReports } from '../db/repositories/rollup-writes.js';
import { ReportFold } from './report-fold.js';
import { TZDATA } from './rollups.js';

/**
 * Runs `change` (which may change these conversions' forwarding states, refunds, attribution or
 * match quality) with the report rollups moving with it. Call it inside the `database.write` job
 * that makes the change:
 *
 *   await database.write((trx) => withReportRollup(trx, conversionIds, () => markSent(trx, …)));
 *
 * The conversions are locked first, in id order (PostgreSQL: two changes of one conversion take
 * turns, each reading the state the other left). One still queued is marked changed (a fold that
 * read its old state is not written; the next one folds its new state); one already folded has
 * its old counts subtracted and its new ones added. `only`: the change moves that destination's
 * jobs and nothing else (a delivery's recording), so only its state is read before and after.
 */
export async function withReportRollup<T>(
  trx: Writer,
  conversionIds: readonly string[],
  change: () => Promise<T>,
  only?: DestinationKind,
): Promise<T> {
  const ids = [...new Set(conversionIds)].sort();
  if (ids.length === 0) return change();
  await lockConversions(trx, ids);
  const queued = await bumpQueuedMany(trx, ids);
  const folded = ids.filter((id) => !queued.has(id));
  if (folded.length === 0) return change();
  const before = await reportFacts(trx, folded, only);
  const result = await change();
  const after = await reportFacts(trx, folded, only);
  await addFacts(trx, [
    [before, -1],
    [after, 1],
  ]);
  return result;
}

/**
 * Subtracts the counts of conversions about to be deleted (retention), in the deleting
 * transaction: those still queued were never folded and count nowhere.
 */
export async function subtractDeleted(trx: Writer, conversionIds: readonly string[]): Promise<void> {
  if (conversionIds.length === 0) return;
  const queued = new Set<string>();
  for (let i = 0; i < conversionIds.length; i += 500) {
    const rows = await trx
      .selectFrom('rollup_queue')
      .select('id')
      .where('id', 'in', conversionIds.slice(i, i + 500))
      .execute();
    for (const row of rows) queued.add(row.id);
  }
  const folded = conversionIds.filter((id) => !queued.has(id));
  await addFacts(trx, [[await reportFacts(trx, folded), -1]]);
}

async function addFacts(trx: Writer, parts: [ReportFact[], 1 | -1][]): Promise<void> {
  const stores = [...new Set(parts.flatMap(([facts]) => facts.map((f) => f.store_id)))];
  if (stores.length === 0) return;
  // A store without a recorded zone has no rollups yet: its first build folds every conversion as it is then.
  const zones = await rollupZones(trx, stores, TZDATA);
  const fold = new ReportFold();
  for (const [facts, sign] of parts) {
    for (const fact of facts) {
      const zone = zones.get(fact.store_id);
      if (zone) fold.addConversion(fact, zoneOf(zone.timezone), sign);
    }
  }
  await addReports(trx, fold.rows());
}

async function lockConversions(trx: Writer, ids: string[]): Promise<void> {
  const { locks } = engineOf(trx);
  for (let i = 0; i < ids.length; i += 500) {
    await locks.lockRows(
      trx
        .selectFrom('conversions')
        .select('id')
        .where('id', 'in', ids.slice(i, i + 500))
        .orderBy('id'),
    );
  }
}
