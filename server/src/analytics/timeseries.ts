import { addDays, daysBetween } from '../calendar/dates.js';
import { zoneOf } from '../calendar/zone.js';
import type { Database } from '../db/database.js';
import { type BucketTotals, totalsByDate, totalsByHour } from '../db/repositories/rollup-reads.js';
import { sumSpendByDate } from '../db/repositories/spend.js';
import { invalid } from '../http/errors.js';
import { averageMajor, fromMinorUnits, ratio2 } from '../money.js';
import { requireStore } from '../stores/lookup.js';
import { modeFlag, type Tenant } from '../tenancy.js';
import { checkDates, MAX_RANGE_DAYS, resolveRange } from './range.js';
import { refreshRollups } from './rollups.js';

export const INTERVALS = ['day', 'hour'] as const;
export type Interval = (typeof INTERVALS)[number];

/** Hourly buckets cover at most this many days (up to 745 buckets). */
export const MAX_HOUR_RANGE_DAYS = 31;

export interface TimeseriesQuery {
  storeId: string;
  startDate?: string;
  endDate?: string;
  interval?: Interval;
}

interface Bucket {
  start: number;
  label: string;
  clicks: number;
  conversions: number;
  attributed: number;
  purchases: number;
  revenueMinor: number;
  attributedRevenueMinor: number;
  refundsMinor: number;
  /** Day buckets: the day's ad spend in the store currency. */
  adSpendMinor: number;
}

function add(bucket: Bucket, totals: BucketTotals): void {
  bucket.clicks += totals.clicks;
  bucket.conversions += totals.conversions;
  bucket.attributed += totals.attributed;
  bucket.purchases += totals.purchases;
  bucket.revenueMinor += totals.revenueMinor;
  bucket.attributedRevenueMinor += totals.attributedRevenueMinor;
  bucket.refundsMinor += totals.refundsMinor;
}

const empty = (start: number, label: string): Bucket => ({
  start,
  label,
  clicks: 0,
  conversions: 0,
  attributed: 0,
  purchases: 0,
  revenueMinor: 0,
  attributedRevenueMinor: 0,
  refundsMinor: 0,
  adSpendMinor: 0,
});

/** The bucket whose start is the last one at or before `ms` (buckets sorted by start). */
function bucketAt(buckets: Bucket[], ms: number): Bucket | undefined {
  let lo = 0;
  let hi = buckets.length - 1;
  if (hi < 0 || ms < (buckets[0] as Bucket).start) return undefined;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((buckets[mid] as Bucket).start <= ms) lo = mid;
    else hi = mid - 1;
  }
  return buckets[lo];
}

/**
 * A store's metrics per local day or local hour over an inclusive date range in its time zone:
 * every bucket is present, with zeros where nothing happened.
 */
export async function computeTimeseries(database: Database, tenant: Tenant, query: TimeseriesQuery, now = Date.now()) {
  checkDates(query);
  const interval = query.interval ?? 'day';
  const maxDays = interval === 'hour' ? MAX_HOUR_RANGE_DAYS : MAX_RANGE_DAYS;
  const { startDate, endDate } = query;
  if (interval === 'hour' && startDate !== undefined && endDate !== undefined && daysBetween(startDate, endDate) + 1 > maxDays) {
    throw invalid('interval', 'out_of_range', `interval=hour covers at most ${MAX_HOUR_RANGE_DAYS} days; use interval=day`);
  }
  const store = await requireStore(database.read, tenant, query.storeId);
  const range = resolveRange(query, store.timezone, now, maxDays);
  const livemode = modeFlag(tenant);
  const zone = zoneOf(store.timezone);
  const currency = store.currency;
  await refreshRollups(database, store);

  const buckets: Bucket[] = [];
  if (interval === 'day') {
    const byDate = new Map<string, Bucket>();
    for (let date = range.startDate; date <= range.endDate; date = addDays(date, 1)) {
      const bucket = empty(zone.dayStart(date), date);
      buckets.push(bucket);
      byDate.set(date, bucket);
    }
    for (const row of await totalsByDate(database.read, store.id, livemode, range, currency)) {
      const bucket = byDate.get(row.localDate);
      if (bucket) add(bucket, row);
    }
    for (const row of await sumSpendByDate(database.read, store.id, livemode, range, currency)) {
      const bucket = byDate.get(row.date);
      if (bucket) bucket.adSpendMinor += row.total;
    }
  } else {
    const end = zone.dayStart(addDays(range.endDate, 1));
    for (let start = zone.dayStart(range.startDate); start < end; start = zone.nextHour(start)) {
      buckets.push(empty(start, zone.label(start)));
    }
    for (const row of await totalsByHour(database.read, store.id, livemode, range, currency)) {
      // Rollup hours and buckets come from the same zone rules, so each row starts a bucket.
      const bucket = bucketAt(buckets, row.hourStart);
      if (bucket) add(bucket, row);
    }
  }

  return {
    storeId: store.id,
    interval,
    startDate: range.startDate,
    endDate: range.endDate,
    timezone: range.timezone,
    currency,
    livemode: tenant.livemode,
    buckets: buckets.map((b) => ({
      start: new Date(b.start).toISOString(),
      label: b.label,
      clicks: b.clicks,
      conversions: b.conversions,
      revenue: fromMinorUnits(b.revenueMinor, currency),
      attributedConversions: b.attributed,
      attributedRevenue: fromMinorUnits(b.attributedRevenueMinor, currency),
      refunds: fromMinorUnits(b.refundsMinor, currency),
      conversionRate: ratio2(b.attributed * 100, b.clicks),
      averageOrderValue: averageMajor(b.revenueMinor, b.purchases, currency),
      ...(interval === 'day' && { adSpend: fromMinorUnits(b.adSpendMinor, currency) }),
    })),
  };
}
