import { sql } from 'kysely';
import type { Reader } from '../database.js';
import { monthSplit } from './rollup-reads.js';

/**
 * The figures of first-purchase cohorts (api.md §11 "Customers", analytics/cohorts.ts): their
 * customers and net Purchase value from the cohort rollups (migration 0040), their spend from
 * the spend month rollups (migration 0041) and `ad_spend`.
 */

const DAY_MS = 86_400_000;

export interface CohortDay {
  cohort: number;
  channel: string;
  /** Whole days after the customer's first conversion (0 = its first 24 hours). */
  day: number;
  /** Minor units of the store currency. */
  amount: number;
  /** Customers whose first conversion is in the cohort with this channel (on day 0). */
  customers: number;
}

/**
 * Net Purchase value (less refunds) per cohort, channel and day after the first conversion, in
 * the store currency, and the cohort's customers, from the cohort rollups (analytics/cohort-rollups.ts): the cohorts' whole
 * months from `rollup_cohort_months`, a partial first or last month by first day. Cohort i is
 * the customers whose first local day is in [monthStarts[i], monthStarts[i + 1]).
 */
export async function cohortNet(
  db: Reader,
  scope: { storeId: string; livemode: number; monthStarts: string[]; currency: string },
): Promise<CohortDay[]> {
  const starts = scope.monthStarts;
  if (starts.length < 2) return [];
  const cohortOfMonth = new Map(starts.slice(0, -1).map((start, i) => [start.slice(0, 7), i]));
  const span = { startDate: starts[0] as string, endDate: dayBefore(starts[starts.length - 1] as string) };
  const { months, days } = monthSplit(span);
  const amount = sql<number | string>`sum(case when currency = ${scope.currency} then net_minor else net_fx_minor end)`;
  const customers = sql<number | string>`sum(customers)`;
  const byDay = (d: { startDate: string; endDate: string }) =>
    db
      .selectFrom('rollup_cohort_days')
      .select([
        sql<string>`substr(first_date, 1, 7)`.as('month'),
        'channel',
        'day_offset',
        amount.as('amount'),
        customers.as('customers'),
      ])
      .where('store_id', '=', scope.storeId)
      .where('livemode', '=', scope.livemode)
      .where('first_date', '>=', d.startDate)
      .where('first_date', '<=', d.endDate)
      .groupBy([sql`1`, 'channel', 'day_offset'])
      .execute();
  const byMonth = (m: { from: string; to: string }) =>
    db
      .selectFrom('rollup_cohort_months')
      .select(['first_month as month', 'channel', 'day_offset', amount.as('amount'), customers.as('customers')])
      .where('store_id', '=', scope.storeId)
      .where('livemode', '=', scope.livemode)
      .where('first_month', '>=', m.from)
      .where('first_month', '<=', m.to)
      .groupBy(['first_month', 'channel', 'day_offset'])
      .execute();
  const reads = await Promise.all([...days.map(byDay), ...(months ? [byMonth(months)] : [])]);
  // A cell whose customers all moved to another cohort nets to zero: it is nobody's.
  return reads
    .flat()
    .map((r) => ({
      cohort: cohortOfMonth.get(r.month) as number,
      channel: r.channel,
      day: Number(r.day_offset),
      amount: Number(r.amount ?? 0),
      customers: Number(r.customers ?? 0),
    }))
    .filter((r) => r.amount !== 0 || r.customers !== 0);
}

/** The date before a `YYYY-MM-DD` date. */
function dayBefore(date: string): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) - DAY_MS).toISOString().slice(0, 10);
}

export interface CohortSpend {
  cohort: number;
  platform: string;
  currency: string;
  /** Minor units of `currency`. */
  amount: number;
}

/**
 * Ad spend per cohort month (by the entries' dates: monthStarts[i] ≤ date < monthStarts[i + 1])
 * and platform: whole months from `rollup_spend_months` (migration 0041), a partial first or
 * last month from the entries (`ad_spend_dates`).
 */
export async function cohortSpend(
  db: Reader,
  scope: { storeId: string; livemode: number; monthStarts: string[] },
): Promise<CohortSpend[]> {
  const starts = scope.monthStarts;
  if (starts.length < 2) return [];
  const cohortOfMonth = new Map(starts.slice(0, -1).map((start, i) => [start.slice(0, 7), i]));
  const { months, days } = monthSplit({
    startDate: starts[0] as string,
    endDate: dayBefore(starts[starts.length - 1] as string),
  });
  const amount = sql<number | string>`sum(amount_minor)`;
  const byDay = (d: { startDate: string; endDate: string }) =>
    db
      .selectFrom('ad_spend')
      .select([sql<string>`substr(date, 1, 7)`.as('month'), 'platform', 'currency', amount.as('amount')])
      .where('store_id', '=', scope.storeId)
      .where('livemode', '=', scope.livemode)
      .where('date', '>=', d.startDate)
      .where('date', '<=', d.endDate)
      .groupBy([sql`1`, 'platform', 'currency'])
      .execute();
  const byMonth = (m: { from: string; to: string }) =>
    db
      .selectFrom('rollup_spend_months')
      .select(['month', 'platform', 'currency', amount.as('amount')])
      .where('store_id', '=', scope.storeId)
      .where('livemode', '=', scope.livemode)
      .where('month', '>=', m.from)
      .where('month', '<=', m.to)
      .groupBy(['month', 'platform', 'currency'])
      .execute();
  const reads = await Promise.all([...days.map(byDay), ...(months ? [byMonth(months)] : [])]);
  return reads.flat().map((r) => ({
    cohort: cohortOfMonth.get(r.month) as number,
    platform: r.platform,
    currency: r.currency,
    amount: Number(r.amount),
  }));
}
