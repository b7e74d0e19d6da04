/**
 * Folding conversions into the report rollups (`rollup_reports`, migration 0035): what one
 * conversion adds to the reconciliation report (api.md §10: received, attributed, refunded, and
 * per destination its status, reason and trace id) and to the match-quality summary (per
 * destination its count, score in tenths, missing keys and warnings), on the local day of its
 * event time. A change of a folded conversion is its old contribution subtracted and its new one
 * added (analytics/rollups.ts `withReportRollup`). Pure: no database, no HTTP.
 */
import type { Zone } from '../calendar/zone.js';
import type { ReportFact } from '../db/repositories/reconciliation.js';
import { TRACE_PREFIX } from '../db/repositories/report-traces.js';
import type { RollupReportsTable } from '../db/schema.js';
import type { MatchQuality } from '../quality/match-quality.js';

export const RECONCILIATION = 'reconciliation';
export const MATCH_QUALITY = 'match_quality';
/** Separates an item's kind from its value (`failed|expired`, `trace|abc`): never in a reason, key, code or trace id we keep apart. */
export const ITEM_SEP = '|';
/** The kind of a reconciliation item naming a trace id the platform acknowledged a delivery with (packed for past days: report-traces.ts). */
export const TRACE_ITEM = TRACE_PREFIX;

const SEP = '\u0001';

/** Deltas of `rollup_reports`, accumulated in memory. */
export class ReportFold {
  private readonly counts = new Map<string, RollupReportsTable>();

  private add(fact: ReportFact, localDate: string, report: string, destination: string, item: string, delta: number) {
    const key = [fact.store_id, fact.livemode, report, localDate, destination, item].join(SEP);
    const row = this.counts.get(key);
    if (row) row.count += delta;
    else {
      this.counts.set(key, {
        store_id: fact.store_id,
        livemode: fact.livemode,
        report,
        local_date: localDate,
        destination,
        item,
        count: delta,
      });
    }
  }

  /** Adds (sign 1) or subtracts (sign -1) one conversion's contribution. */
  addConversion(fact: ReportFact, zone: Zone, sign: 1 | -1): void {
    const day = zone.date(fact.event_time);
    const recon = (destination: string, item: string) => this.add(fact, day, RECONCILIATION, destination, item, sign);
    recon('', 'received');
    if (fact.attributed) recon('', 'attributed');
    if (fact.refunded) recon('', 'refunded');
    for (const [kind, state] of Object.entries(fact.destinations)) {
      if (state.status === 'sent') {
        recon(kind, 'sent');
        if (state.traceId !== null) {
          recon(kind, 'acknowledged');
          recon(kind, `${TRACE_ITEM}${state.traceId}`);
        }
      } else if (state.status === 'pending') recon(kind, 'pending');
      else recon(kind, `${state.status}${ITEM_SEP}${state.reason ?? 'unknown'}`);
    }
    if (!fact.match_quality) return;
    const entries = JSON.parse(fact.match_quality) as Record<string, MatchQuality>;
    for (const [kind, quality] of Object.entries(entries)) {
      const mq = (item: string, delta: number) => this.add(fact, day, MATCH_QUALITY, kind, item, sign * delta);
      mq('conversions', 1);
      mq('tenths', Math.round(quality.score * 10));
      for (const key of quality.missing) mq(`missing${ITEM_SEP}${key}`, 1);
      for (const warning of quality.warnings) mq(`warning${ITEM_SEP}${warning.code}`, 1);
    }
  }

  /** The non-zero deltas in primary-key order (concurrent writers lock rows in one order). */
  rows(): RollupReportsTable[] {
    return [...this.counts.entries()]
      .filter(([, row]) => row.count !== 0)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, row]) => row);
  }
}
