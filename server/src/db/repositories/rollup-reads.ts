import type { ExpressionBuilder } from 'kysely';
import type { Reader } from '../database.js';
import type { DB } from '../schema.js';

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

/**
 * A span of local dates as its whole months (read from the month rollups, migration 0039) and
 * the days before and after them (read by day): a year is at most two partial months of days.
 */
export function monthSplit(span: DateSpan): { months?: { from: string; to: string }; days: DateSpan[] } {
  const [sy, sm, sd] = dateParts(span.startDate);
  const [ey, em, ed] = dateParts(span.endDate);
  // The first day of the first whole month, the last day of the last whole month.
  const first = sd === 1 ? span.startDate : isoDate(sy, sm + 1, 1);
  const last = isoDate(ey, em, ed + 1).endsWith('-01') ? span.endDate : isoDate(ey, em, 0);
  if (first > last) return { days: [span] };
  const days: DateSpan[] = [];
  if (span.startDate < first) days.push({ startDate: span.startDate, endDate: isoDate(sy, sm + 1, 0) });
  if (last < span.endDate) days.push({ startDate: isoDate(ey, em, 1), endDate: span.endDate });
  return { months: { from: first.slice(0, 7), to: last.slice(0, 7) }, days };
}

const dateParts = (date: string) => date.split('-').map(Number) as [number, number, number];

/** `YYYY-MM-DD` of a year, month and day that may overflow (day 0 is the last of the month before). */
function isoDate(year: number, month: number, day: number): string {
  const at = new Date(0);
  at.setUTCFullYear(year, month - 1, day);
  return at.toISOString().slice(0, 10);
}

/** Rows of sums per `value` from several reads, added up (sums are bigints as strings on PostgreSQL). */
function addUp<C extends string>(reads: Array<Array<{ value: string } & Record<C, unknown>>>, columns: readonly C[]) {
  const out = new Map<string, { value: string } & Record<C, number>>();
  for (const row of reads.flat()) {
    let sum = out.get(row.value);
    if (!sum) {
      sum = { value: row.value, ...Object.fromEntries(columns.map((c) => [c, 0])) } as { value: string } & Record<C, number>;
      out.set(row.value, sum);
    }
    for (const c of columns) (sum as Record<C, number>)[c] += Number(row[c]);
  }
  return [...out.values()];
}

/** Clicks per dimension value over local dates. */
export async function sumDimensionClicks(
  db: Reader,
  storeId: string,
  livemode: number,
  dimension: string,
  span: DateSpan,
): Promise<Array<{ value: string; clicks: number }>> {
  const { months, days } = monthSplit(span);
  const byDay = (d: DateSpan) =>
    db
      .selectFrom('rollup_dimension_clicks')
      .select((eb) => ['value', eb.fn.sum<number>('clicks').as('clicks')])
      .where('store_id', '=', storeId)
      .where('livemode', '=', livemode)
      .where('dimension', '=', dimension)
      .where('local_date', '>=', d.startDate)
      .where('local_date', '<=', d.endDate)
      .groupBy('value')
      .execute();
  const byMonth = (m: { from: string; to: string }) =>
    db
      .selectFrom('rollup_month_clicks')
      .select((eb) => ['value', eb.fn.sum<number>('clicks').as('clicks')])
      .where('store_id', '=', storeId)
      .where('livemode', '=', livemode)
      .where('dimension', '=', dimension)
      .where('local_month', '>=', m.from)
      .where('local_month', '<=', m.to)
      .groupBy('value')
      .execute();
  return addUp(await Promise.all([...days.map(byDay), ...(months ? [byMonth(months)] : [])]), ['clicks']);
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
  const { months, days } = monthSplit(span);
  const inCurrency = (
    eb: ExpressionBuilder<DB, 'rollup_dimension_credits' | 'rollup_month_credits'>,
    column: 'revenue_minor' | 'refund_minor',
  ) => eb.fn.sum<number>(eb.case().when('currency', '=', currency).then(eb.ref(column)).else(0).end());
  const byDay = (d: DateSpan) =>
    db
      .selectFrom('rollup_dimension_credits')
      .select((eb) => [
        'value',
        eb.fn.sum<number>('units').as('units'),
        inCurrency(eb, 'revenue_minor').as('revenue_minor'),
        inCurrency(eb, 'refund_minor').as('refund_minor'),
      ])
      .where('store_id', '=', storeId)
      .where('livemode', '=', livemode)
      .where('dimension', '=', dimension)
      .where('model', '=', model)
      .where('local_date', '>=', d.startDate)
      .where('local_date', '<=', d.endDate)
      .groupBy('value')
      .execute();
  const byMonth = (m: { from: string; to: string }) =>
    db
      .selectFrom('rollup_month_credits')
      .select((eb) => [
        'value',
        eb.fn.sum<number>('units').as('units'),
        inCurrency(eb, 'revenue_minor').as('revenue_minor'),
        inCurrency(eb, 'refund_minor').as('refund_minor'),
      ])
      .where('store_id', '=', storeId)
      .where('livemode', '=', livemode)
      .where('dimension', '=', dimension)
      .where('model', '=', model)
      .where('local_month', '>=', m.from)
      .where('local_month', '<=', m.to)
      .groupBy('value')
      .execute();
  const rows = addUp(await Promise.all([...days.map(byDay), ...(months ? [byMonth(months)] : [])]), [
    'units',
    'revenue_minor',
    'refund_minor',
  ]);
  return rows.map((r) => ({
    value: r.value,
    units: r.units,
    revenueMinor: r.revenue_minor,
    refundMinor: r.refund_minor,
  }));
}
