import type { Database } from '../db/database.js';
import { spendByCurrencyDay } from '../db/repositories/channels.js';
import { sumConverted } from '../db/repositories/fx.js';
import { sumTotals } from '../db/repositories/rollup-reads.js';
import { averageMajor, fromMinorUnits, moneyRatio, ratio2 } from '../money.js';
import { requireStore } from '../stores/lookup.js';
import { modeFlag, type Tenant } from '../tenancy.js';
import { NO_VALUE } from './fold.js';
import { checkDates, resolveRange } from './range.js';
import { refreshRollups } from './rollups.js';
import { convertSpend, spendWarnings } from './spend-fx.js';

export interface MetricsQuery {
  storeId: string;
  startDate?: string;
  endDate?: string;
}

/** The store's headline metrics over an inclusive date range in its time zone (api.md §2). */
export async function computeMetrics(database: Database, tenant: Tenant, query: MetricsQuery, now = Date.now()) {
  checkDates(query);
  const store = await requireStore(database.read, tenant, query.storeId);
  const range = resolveRange(query, store.timezone, now);
  const livemode = modeFlag(tenant);
  await refreshRollups(database, store);
  const currency = store.currency;
  const [totals, spend] = await Promise.all([
    sumTotals(database.read, store.id, livemode, range),
    spendByCurrencyDay(database.read, store.id, livemode, range, currency),
  ]);
  // Purchases in other currencies are read one by one (each at the rate recorded with it), only
  // in the currencies the rollups show purchases of in range: a store in one currency reads none.
  const others = totals.filter((t) => t.currency !== NO_VALUE && t.currency !== currency && t.purchases !== 0);
  const foreign = await sumConverted(
    database.read,
    store.id,
    livemode,
    currency,
    others.map((t) => t.currency),
    range,
  );

  let totalClicks = 0;
  let totalConversions = 0;
  let attributedConversions = 0;
  let purchases = 0;
  let revenueMinor = 0;
  let attributedRevenueMinor = 0;
  let refundsMinor = 0;
  let attributedRefundsMinor = 0;
  const otherRevenueMinor = new Map<string, number>();
  for (const t of totals) {
    if (t.currency === NO_VALUE) {
      totalClicks += t.clicks;
      continue;
    }
    totalConversions += t.conversions;
    attributedConversions += t.attributed;
    if (t.currency === currency) {
      purchases += t.purchases;
      revenueMinor += t.revenueMinor;
      attributedRevenueMinor += t.attributedRevenueMinor;
      // Refunds by refund time (api.md §9); in other currencies, like their revenue, apart.
      refundsMinor += t.refundsMinor;
      attributedRefundsMinor += t.attributedRefundsMinor;
    } else if (t.purchases !== 0) {
      otherRevenueMinor.set(t.currency, t.revenueMinor);
    }
  }
  const netAttributedMinor = attributedRevenueMinor - attributedRefundsMinor;
  // Spend in other currencies converted at its day's rate (api.md §11 "Currencies"); without one, apart.
  const converted = await convertSpend(database.read, currency, spend);
  const spendMinor = converted.totalMinor;
  const recordedByCurrency = new Map<string, number>();
  for (const s of spend) {
    if (s.currency !== currency) recordedByCurrency.set(s.currency, (recordedByCurrency.get(s.currency) ?? 0) + s.total);
  }
  const revenueByCurrency = Object.fromEntries(
    [...otherRevenueMinor.entries()]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([cur, minor]) => [cur, fromMinorUnits(minor, cur)]),
  );
  const adSpendByCurrency = Object.fromEntries(
    [...recordedByCurrency.entries()]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([cur, minor]) => [cur, fromMinorUnits(minor, cur)]),
  );
  const spendByCurrency = Object.fromEntries(converted.unconverted.map((u) => [u.currency, fromMinorUnits(u.minor, u.currency)]));

  return {
    storeId: store.id,
    totalClicks,
    totalConversions,
    totalRevenue: fromMinorUnits(revenueMinor, currency),
    attributedConversions,
    attributedRevenue: fromMinorUnits(attributedRevenueMinor, currency),
    refunds: fromMinorUnits(refundsMinor, currency),
    netRevenue: fromMinorUnits(revenueMinor - refundsMinor, currency),
    conversionRate: ratio2(attributedConversions * 100, totalClicks),
    averageOrderValue: averageMajor(revenueMinor, purchases, currency),
    // ROAS needs spend in the store currency; with none recorded in range it is unknown, not zero.
    // Net of the refunds (in range by refund time) of conversions attributed now.
    roas: converted.entries > 0 ? moneyRatio(netAttributedMinor, spendMinor) : null,
    adSpend: fromMinorUnits(spendMinor, currency),
    currency,
    startDate: range.startDate,
    endDate: range.endDate,
    timezone: range.timezone,
    revenueByCurrency,
    adSpendByCurrency,
    spendByCurrency,
    warnings: spendWarnings(converted.unconverted, currency),
    // Other currencies at the rate recorded with each conversion (docs/operations.md "Exchange rates").
    converted: {
      totalRevenue: fromMinorUnits(revenueMinor + foreign.revenueMinor, currency),
      attributedRevenue: fromMinorUnits(attributedRevenueMinor + foreign.attributedRevenueMinor, currency),
      unconvertedByCurrency: Object.fromEntries(
        foreign.unconverted.map((u) => [u.currency, fromMinorUnits(u.revenueMinor, u.currency)]),
      ),
    },
    livemode: tenant.livemode,
  };
}
