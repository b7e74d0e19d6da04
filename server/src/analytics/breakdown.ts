import type { Model } from '../attribution/models.js';
import type { Database } from '../db/database.js';
import type { Keyset } from '../db/repositories/keyset.js';
import { sumDimensionClicks, sumDimensionCredits } from '../db/repositories/rollup-reads.js';
import { sumSpendByCampaign } from '../db/repositories/spend.js';
import { invalid } from '../http/errors.js';
import { fromMinorUnits, moneyRatio, ratio2 } from '../money.js';
import { requireStore } from '../stores/lookup.js';
import { modeFlag, type Tenant } from '../tenancy.js';
import { CREDIT_UNITS, type Dimension, NO_VALUE } from './fold.js';
import { checkDates, resolveRange } from './range.js';
import { refreshRollups } from './rollups.js';

export interface BreakdownQuery {
  storeId: string;
  startDate?: string;
  endDate?: string;
  by: Dimension;
  model?: Model;
}

/** One group of the breakdown, before presentation. `value` null: the clicks without a value. */
export interface BreakdownGroup {
  value: string | null;
  clicks: number;
  units: number;
  revenueMinor: number;
  /** Credited refunds with refund time in range. */
  refundMinor: number;
  spend: { totalMinor: number; entries: number } | null;
}

/**
 * Order of groups: attributed revenue, then credited conversions, then clicks (all descending),
 * then the value (ascending, the group without a value last).
 */
export function compareGroups(a: BreakdownGroup, b: BreakdownGroup): number {
  return (
    b.revenueMinor - a.revenueMinor ||
    b.units - a.units ||
    b.clicks - a.clicks ||
    (a.value === b.value ? 0 : a.value === null ? 1 : b.value === null ? -1 : a.value < b.value ? -1 : 1)
  );
}

/** The cursor position of a group: revenue in `time`, the other sort keys in `id`. */
export function keysetOf(group: BreakdownGroup): Keyset {
  return { time: group.revenueMinor, id: JSON.stringify([group.units, group.clicks, group.value]) };
}

function positionOf(keyset: Keyset): BreakdownGroup {
  const bad = () => invalid('cursor', 'invalid_format', 'cursor is not a cursor this list returned');
  let parsed: unknown;
  try {
    parsed = JSON.parse(keyset.id);
  } catch {
    throw bad();
  }
  if (
    typeof keyset.time !== 'number' ||
    !Array.isArray(parsed) ||
    parsed.length !== 3 ||
    typeof parsed[0] !== 'number' ||
    typeof parsed[1] !== 'number' ||
    (parsed[2] !== null && typeof parsed[2] !== 'string')
  ) {
    throw bad();
  }
  return { revenueMinor: keyset.time, units: parsed[0], clicks: parsed[1], value: parsed[2], refundMinor: 0, spend: null };
}

/**
 * Clicks, credited conversions, revenue and refunds per value of one click dimension over an inclusive
 * date range in the store's time zone, credit shared among each conversion's touchpoints by
 * `model`. Returns the store, the range and the `limit + 1` groups after `after`, in order.
 */
export async function computeBreakdown(
  database: Database,
  tenant: Tenant,
  query: BreakdownQuery,
  page: { limit: number; after?: Keyset },
  now = Date.now(),
) {
  checkDates(query);
  const after = page.after ? positionOf(page.after) : undefined;
  const store = await requireStore(database.read, tenant, query.storeId);
  const range = resolveRange(query, store.timezone, now);
  const livemode = modeFlag(tenant);
  const model = query.model ?? 'last_click';
  const currency = store.currency;
  await refreshRollups(database, store);

  const [clicks, credits, spend] = await Promise.all([
    sumDimensionClicks(database.read, store.id, livemode, query.by, range),
    sumDimensionCredits(database.read, store.id, livemode, query.by, model, range, currency),
    query.by === 'campaign_id' ? sumSpendByCampaign(database.read, store.id, livemode, range, currency) : Promise.resolve([]),
  ]);

  const groups = new Map<string, BreakdownGroup>();
  const group = (key: string) => {
    let g = groups.get(key);
    if (!g) {
      g = {
        value: key === NO_VALUE ? null : key,
        clicks: 0,
        units: 0,
        revenueMinor: 0,
        refundMinor: 0,
        spend: query.by === 'campaign_id' ? { totalMinor: 0, entries: 0 } : null,
      };
      groups.set(key, g);
    }
    return g;
  };
  for (const row of clicks) if (row.clicks !== 0) group(row.value).clicks += row.clicks;
  for (const row of credits) {
    if (row.units === 0 && row.revenueMinor === 0 && row.refundMinor === 0) continue;
    const g = group(row.value);
    g.units += row.units;
    g.revenueMinor += row.revenueMinor;
    g.refundMinor += row.refundMinor;
  }
  // A campaign with spend in range is listed even without clicks or conversions.
  for (const row of spend) group(row.campaignId).spend = { totalMinor: row.total, entries: row.entries };

  const ordered = [...groups.values()].sort(compareGroups);
  const start = after ? ordered.findIndex((g) => compareGroups(g, after) > 0) : 0;
  const rows = start === -1 ? [] : ordered.slice(start, start + page.limit + 1);

  return {
    header: {
      storeId: store.id,
      by: query.by,
      model,
      startDate: range.startDate,
      endDate: range.endDate,
      timezone: range.timezone,
      currency,
      livemode: tenant.livemode,
    },
    rows,
    present: (g: BreakdownGroup) => ({
      value: g.value,
      clicks: g.clicks,
      attributedConversions: ratio2(g.units, CREDIT_UNITS),
      attributedRevenue: fromMinorUnits(g.revenueMinor, currency),
      refunds: fromMinorUnits(g.refundMinor, currency),
      netRevenue: fromMinorUnits(g.revenueMinor - g.refundMinor, currency),
      conversionRate: ratio2(BigInt(g.units) * 100n, BigInt(g.clicks) * BigInt(CREDIT_UNITS)),
      spend: g.spend ? fromMinorUnits(g.spend.totalMinor, currency) : null,
      // ROAS needs spend in the store currency; with none recorded it is unknown, not zero.
      // Net of the group's credited refunds in range (api.md §9), as the metrics' roas.
      roas: g.spend && g.spend.entries > 0 ? moneyRatio(g.revenueMinor - g.refundMinor, g.spend.totalMinor) : null,
    }),
  };
}
