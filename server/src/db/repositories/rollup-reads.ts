import type { Reader } from '../database.js';

/** Reads of the analytics rollups: sums over local dates (see analytics/rollups.ts). */

export interface DateSpan {
  startDate: string;
  endDate: string; // inclusive
}

/** The sums every rollup read returns (money in minor units; refunds by refund time). */
export interface BucketTotals {
  clicks: number;
  conversions: number;
  attributed: number;
  purchases: number;
  revenueMinor: number;
  attributedRevenueMinor: number;
  refundsMinor: number;
  attributedRefundsMinor: number;
}

/** Totals in one currency ('' carries the clicks). */
export interface Totals extends BucketTotals {
  currency: string;
}

type SummedRow = Record<
  | 'clicks'
  | 'conversions'
  | 'attributed'
  | 'purchases'
  | 'revenue_minor'
  | 'attributed_revenue_minor'
  | 'refunds_minor'
  | 'attributed_refunds_minor',
  number | string
>;

/** A row of sums as numbers (PostgreSQL sums bigints as numeric). */
const bucketTotals = (r: SummedRow): BucketTotals => ({
  clicks: Number(r.clicks),
  conversions: Number(r.conversions),
  attributed: Number(r.attributed),
  purchases: Number(r.purchases),
  revenueMinor: Number(r.revenue_minor),
  attributedRevenueMinor: Number(r.attributed_revenue_minor),
  refundsMinor: Number(r.refunds_minor),
  attributedRefundsMinor: Number(r.attributed_refunds_minor),
});

/**
 * The sums over rollup rows; with `currency`, purchases, revenue and refunds only of that currency
 * (summed in SQL: one row per bucket reaches JavaScript instead of one per bucket and currency).
 */
function summed<T extends 'rollup_days' | 'rollup_hours'>(db: Reader, table: T, currency?: string) {
  return db.selectFrom(table as 'rollup_hours').select((eb) => {
    const money = (
      column: 'purchases' | 'revenue_minor' | 'attributed_revenue_minor' | 'refunds_minor' | 'attributed_refunds_minor',
    ) =>
      currency === undefined
        ? eb.fn.sum<number>(column)
        : eb.fn.sum<number>(eb.case().when('currency', '=', currency).then(eb.ref(column)).else(0).end());
    return [
      eb.fn.sum<number>('clicks').as('clicks'),
      eb.fn.sum<number>('conversions').as('conversions'),
      eb.fn.sum<number>('attributed').as('attributed'),
      money('purchases').as('purchases'),
      money('revenue_minor').as('revenue_minor'),
      money('attributed_revenue_minor').as('attributed_revenue_minor'),
      money('refunds_minor').as('refunds_minor'),
      money('attributed_refunds_minor').as('attributed_refunds_minor'),
    ];
  });
}

/** Totals over local dates, per currency ('' carries the clicks). */
export async function sumTotals(db: Reader, storeId: string, livemode: number, span: DateSpan): Promise<Totals[]> {
  const rows = await summed(db, 'rollup_days')
    .select('currency')
    .where('store_id', '=', storeId)
    .where('livemode', '=', livemode)
    .where('local_date', '>=', span.startDate)
    .where('local_date', '<=', span.endDate)
    .groupBy('currency')
    .execute();
  return rows.map((r) => ({ ...bucketTotals(r), currency: r.currency }));
}

/** Totals per local date (revenue in `currency`). */
export async function totalsByDate(
  db: Reader,
  storeId: string,
  livemode: number,
  span: DateSpan,
  currency: string,
): Promise<Array<BucketTotals & { localDate: string }>> {
  const rows = await summed(db, 'rollup_days', currency)
    .select('local_date')
    .where('store_id', '=', storeId)
    .where('livemode', '=', livemode)
    .where('local_date', '>=', span.startDate)
    .where('local_date', '<=', span.endDate)
    .groupBy('local_date')
    .execute();
  return rows.map((r) => ({ ...bucketTotals(r), localDate: r.local_date }));
}

/** Totals per local-hour bucket, by its start instant (revenue in `currency`). */
export async function totalsByHour(
  db: Reader,
  storeId: string,
  livemode: number,
  span: DateSpan,
  currency: string,
): Promise<Array<BucketTotals & { hourStart: number }>> {
  const rows = await summed(db, 'rollup_hours', currency)
    .select('hour_start')
    .where('store_id', '=', storeId)
    .where('livemode', '=', livemode)
    .where('local_date', '>=', span.startDate)
    .where('local_date', '<=', span.endDate)
    // in key order, so SQLite groups without sorting
    .groupBy(['local_date', 'hour_start'])
    .execute();
  return rows.map((r) => ({ ...bucketTotals(r), hourStart: Number(r.hour_start) }));
}

/** Clicks per dimension value over local dates. */
export async function sumDimensionClicks(
  db: Reader,
  storeId: string,
  livemode: number,
  dimension: string,
  span: DateSpan,
): Promise<Array<{ value: string; clicks: number }>> {
  const rows = await db
    .selectFrom('rollup_dimension_clicks')
    .select((eb) => ['value', eb.fn.sum<number>('clicks').as('clicks')])
    .where('store_id', '=', storeId)
    .where('livemode', '=', livemode)
    .where('dimension', '=', dimension)
    .where('local_date', '>=', span.startDate)
    .where('local_date', '<=', span.endDate)
    .groupBy('value')
    .execute();
  return rows.map((r) => ({ value: r.value, clicks: Number(r.clicks) }));
}

/**
 * Credited conversions (units, every currency), and credited revenue (by conversion day) and
 * credited refunds (by refund day) in `currency`, per dimension value.
 */
export async function sumDimensionCredits(
  db: Reader,
  storeId: string,
  livemode: number,
  dimension: string,
  model: string,
  span: DateSpan,
  currency: string,
): Promise<Array<{ value: string; units: number; revenueMinor: number; refundMinor: number }>> {
  const rows = await db
    .selectFrom('rollup_dimension_credits')
    .select((eb) => [
      'value',
      eb.fn.sum<number>('units').as('units'),
      eb.fn
        .sum<number>(eb.case().when('currency', '=', currency).then(eb.ref('revenue_minor')).else(0).end())
        .as('revenue_minor'),
      eb.fn.sum<number>(eb.case().when('currency', '=', currency).then(eb.ref('refund_minor')).else(0).end()).as('refund_minor'),
    ])
    .where('store_id', '=', storeId)
    .where('livemode', '=', livemode)
    .where('dimension', '=', dimension)
    .where('model', '=', model)
    .where('local_date', '>=', span.startDate)
    .where('local_date', '<=', span.endDate)
    .groupBy('value')
    .execute();
  return rows.map((r) => ({
    value: r.value,
    units: Number(r.units),
    revenueMinor: Number(r.revenue_minor),
    refundMinor: Number(r.refund_minor),
  }));
}
