/**
 * `waytrack attribution recompute` (issue 38 point 6): stored conversions keep the attribution
 * they were recorded with until an operator re-scores them with the current model. A dry run
 * (the default) lists what would change; with `apply`, each change goes through
 * `applyReattribution` (its own short transaction), so a run is safe beside a running server,
 * can be stopped at any point, and run again to finish (what was applied is then unchanged).
 */
import { attributeConversion } from '../attribution/evidence.js';
import type { Attribution } from '../attribution/model.js';
import { allocateCredit, MODELS, type Model } from '../attribution/models.js';
import { isValidDate, startOfDay } from '../calendar/dates.js';
import type { Database } from '../db/database.js';
import { findStoreAccount } from '../db/repositories/accounts.js';
import { touchpointsOf } from '../db/repositories/conversions.js';
import { conversionsSince } from '../db/repositories/reattribution.js';
import { findStore } from '../db/repositories/stores.js';
import type { ConversionsTable, TouchpointsTable } from '../db/schema.js';
import { fromMinorUnits } from '../money.js';
import { cluesOf, policyOf } from './attribution-columns.js';
import { applyReattribution, type ReattributionOutcome, wouldChange } from './reattribution.js';

/** A recompute that cannot run as asked; `field` names the option at fault. */
export class RecomputeError extends Error {
  constructor(
    message: string,
    readonly field: string,
  ) {
    super(message);
  }
}

export interface RecomputeOptions {
  storeId: string;
  /** First day (YYYY-MM-DD) in the store's time zone: conversions from its start, by event time. */
  since: string;
  /** When given, the store must belong to this account. */
  accountId?: string;
  /** Only this mode's conversions; both when undefined. */
  mode?: 'live' | 'test';
  apply: boolean;
  /** Conversions read per batch. */
  batchSize?: number;
}

export interface AttributionState {
  clickId: string | null;
  confidence: number | null;
  signal: string | null;
}

export interface RecomputeChange {
  conversionId: string;
  orderId: string;
  mode: 'live' | 'test';
  eventTime: string;
  value: number;
  currency: string;
  before: AttributionState;
  after: AttributionState;
  /** Per model, how much of the conversion's value moves to other clicks (or to no click). */
  moved: Record<Model, number>;
  /** With apply: what applying it did ('changed'; otherwise why it was left: it changed meanwhile). */
  outcome?: ReattributionOutcome['outcome'];
}

export interface RecomputeSummary {
  storeId: string;
  since: string;
  mode: 'live' | 'test' | 'both';
  applied: boolean;
  /** Conversions read. */
  examined: number;
  /** Recorded with confidence 100 (an explicit reference): never re-scored. */
  explicitKept: number;
  /** Whose new result differs (with apply: the ones applied). */
  changed: number;
  /** Per model and currency, the revenue that moves to other clicks. */
  revenueMoved: Record<Model, Record<string, number>>;
}

const NO_CLICK = '';

/**
 * Re-scores the store's conversions from `since` with the current model; `report` gets each
 * change as it is found (dry run) or applied. Reads in batches ordered by (event time, id).
 */
export async function recomputeAttribution(
  database: Database,
  options: RecomputeOptions,
  report: (change: RecomputeChange) => void = () => {},
): Promise<RecomputeSummary> {
  if (!isValidDate(options.since)) {
    throw new RecomputeError(`--since must be a calendar date YYYY-MM-DD (got "${options.since}")`, 'since');
  }
  const owner = await findStoreAccount(database.read, options.storeId);
  if (!owner || (options.accountId !== undefined && owner !== options.accountId)) {
    const where = options.accountId ? ` in account ${options.accountId}` : '';
    throw new RecomputeError(`no store ${options.storeId}${where}`, 'store');
  }
  const store = await findStore(database.read, owner, options.storeId);
  if (!store) throw new RecomputeError(`no store ${options.storeId}`, 'store');
  const since = startOfDay(options.since, store.timezone);
  const policy = policyOf(store);
  const summary: RecomputeSummary = {
    storeId: store.id,
    since: options.since,
    mode: options.mode ?? 'both',
    applied: options.apply,
    examined: 0,
    explicitKept: 0,
    changed: 0,
    revenueMoved: Object.fromEntries(MODELS.map((m) => [m, {}])) as RecomputeSummary['revenueMoved'],
  };
  const livemode = options.mode === undefined ? undefined : options.mode === 'live' ? 1 : 0;
  const limit = options.batchSize ?? 200;
  let after: { eventTime: number; id: string } | undefined;
  for (;;) {
    const rows = await conversionsSince(database.read, { storeId: store.id, since, livemode, after, limit });
    for (const row of rows) {
      summary.examined++;
      if (row.confidence === 100) {
        summary.explicitKept++;
        continue;
      }
      const attribution = await attributeConversion(database.read, cluesOf(row), policy);
      const stored = await touchpointsOf(database.read, row.id);
      if (!wouldChange(row, stored, attribution)) continue;
      const change = changeOf(row, stored, attribution);
      if (options.apply) {
        const ref = { accountId: row.account_id, livemode: row.livemode, conversionId: row.id };
        change.outcome = (await applyReattribution(database, ref, attribution))?.outcome ?? 'unchanged';
        if (change.outcome !== 'changed') {
          report(change);
          continue;
        }
      }
      summary.changed++;
      for (const model of MODELS) {
        const byCurrency = summary.revenueMoved[model];
        byCurrency[row.currency] = roundMoney((byCurrency[row.currency] ?? 0) + change.moved[model]);
      }
      report(change);
    }
    const last = rows.at(-1);
    if (!last || rows.length < limit) break;
    after = { eventTime: last.event_time, id: last.id };
  }
  return summary;
}

function changeOf(row: ConversionsTable, stored: TouchpointsTable[], attribution: Attribution): RecomputeChange {
  const winner = attribution.winner;
  const moved = {} as Record<Model, number>;
  for (const model of MODELS) {
    const before = credits(
      model,
      row,
      row.attributed === 1 ? row.attributed_click_id : null,
      stored.map((t) => ({ clickId: t.click_id, clickTime: t.click_time })),
    );
    const now = credits(model, row, winner?.clickId ?? null, attribution.touchpoints);
    let minor = 0;
    for (const [clickId, value] of now) minor += Math.max(0, value - (before.get(clickId) ?? 0));
    moved[model] = fromMinorUnits(minor, row.currency);
  }
  return {
    conversionId: row.id,
    orderId: row.order_id,
    mode: row.livemode === 1 ? 'live' : 'test',
    eventTime: new Date(row.event_time).toISOString(),
    value: fromMinorUnits(row.value_minor, row.currency),
    currency: row.currency,
    before: { clickId: row.attributed_click_id, confidence: row.confidence, signal: row.attribution_signal },
    after: { clickId: winner?.clickId ?? null, confidence: winner?.score ?? null, signal: winner?.signal ?? null },
    moved,
  };
}

/** A model's credit per click in minor units; an unattributed conversion's whole value on "no click". */
function credits(
  model: Model,
  row: ConversionsTable,
  winner: string | null,
  touchpoints: Array<{ clickId: string; clickTime: number }>,
): Map<string, number> {
  if (!winner) return new Map([[NO_CLICK, row.value_minor]]);
  const parts = allocateCredit(model, touchpoints, winner, row.value_minor, row.event_time);
  if (parts.length === 0) return new Map([[winner, row.value_minor]]);
  return new Map(parts.map((c) => [c.clickId, c.valueMinor]));
}

/** Sums of decimal amounts without binary noise (at most 6 decimals in any currency). */
function roundMoney(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}
