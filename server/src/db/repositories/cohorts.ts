import { type RawBuilder, sql } from 'kysely';
import type { Reader } from '../database.js';

/**
 * The figures of first-purchase cohorts (api.md §11 "Customers", analytics/cohorts.ts). A
 * cohort is the customers whose first conversion (`customers`, migration 0033) falls in
 * [bounds[i], bounds[i + 1]); every query reads the range of `customers_first`, then each
 * customer's conversions through `conversions_customer` and their refunds through
 * `refunds_conversion` — the cohorts' own rows, never the store's other conversions.
 */
export interface CohortScope {
  storeId: string;
  livemode: number;
  /** Cohort boundaries, UTC ms, ascending: cohort i is [bounds[i], bounds[i + 1]). */
  bounds: number[];
  /** The store currency: money in it counts; other currencies at the rate recorded with the conversion. */
  currency: string;
  /** Days after the first conversion that count (0-based day offsets below this). */
  days: number;
}

const DAY_MS = 86_400_000;

/** Which cohort a first-conversion time falls in, as a CASE over the boundaries (both engines). */
function cohortOf(column: RawBuilder<unknown>, bounds: number[]): RawBuilder<number> {
  const arms = bounds.slice(1, -1).map((bound, i) => sql`when ${column} < ${sql.lit(bound)} then ${sql.lit(i)}`);
  if (arms.length === 0) return sql<number>`${sql.lit(0)}`;
  return sql<number>`case ${sql.join(arms, sql` `)} else ${sql.lit(bounds.length - 2)} end`;
}

function firstInRange(scope: CohortScope): RawBuilder<boolean> {
  const from = scope.bounds[0] ?? 0;
  const to = scope.bounds[scope.bounds.length - 1] ?? 0;
  return sql<boolean>`u.store_id = ${scope.storeId} and u.livemode = ${scope.livemode}
    and u.first_event_time >= ${sql.lit(from)} and u.first_event_time < ${sql.lit(to)}`;
}

export interface CohortCount {
  cohort: number;
  channel: string;
  customers: number;
}

const BY_COHORT_AND_CHANNEL = [sql`1`, sql`2`];
const BY_COHORT_CHANNEL_AND_DAY = [sql`1`, sql`2`, sql`3`];

/** Customers per cohort and channel of their first conversion. */
export async function cohortCustomers(db: Reader, scope: CohortScope): Promise<CohortCount[]> {
  if (scope.bounds.length < 2) return [];
  const rows = await db
    .selectFrom('customers as u')
    .select([
      cohortOf(sql`u.first_event_time`, scope.bounds).as('cohort'),
      'u.channel',
      sql<number | string>`count(*)`.as('customers'),
    ])
    .where(firstInRange(scope))
    .groupBy(BY_COHORT_AND_CHANNEL)
    .execute();
  return rows.map((r) => ({ cohort: Number(r.cohort), channel: r.channel, customers: Number(r.customers) }));
}

export interface CohortDay {
  cohort: number;
  channel: string;
  /** Whole days after the customer's first conversion (0 = its first 24 hours). */
  day: number;
  /** Minor units of the store currency. */
  amount: number;
}

/** The cohorts' customers' Purchases within `days` of their first conversion (`conversions_customer`). */
function purchasesOf(db: Reader, scope: CohortScope) {
  const horizon = sql.lit(scope.days * DAY_MS);
  return (
    db
      .selectFrom('customers as u')
      .innerJoin('conversions as c', (join) =>
        join
          .onRef('c.store_id', '=', 'u.store_id')
          .onRef('c.livemode', '=', 'u.livemode')
          .onRef('c.customer_key', '=', 'u.customer_key'),
      )
      .where(firstInRange(scope))
      .where('c.event_type', '=', 'Purchase')
      // `+c.event_time`: a bound on each customer's own conversions, checked on the rows the join
      // finds, never offered to `conversions_store_time` as a range per customer: SQLite with
      // sampled statistics (`analysis_limit`) took that, and read every later conversion of the
      // store once per customer (38 s for a month's cohorts of a 2M-click year; 0.1 s since).
      .where(sql<boolean>`+c.event_time >= u.first_event_time and +c.event_time < u.first_event_time + ${horizon}`)
      // The same bound on the conversions' own time: PostgreSQL reads only the partitions it can be in.
      .where('c.event_time', '>=', scope.bounds[0] ?? 0)
  );
}

/** Purchase value per cohort, channel and day after the first conversion, in the store currency. */
export async function cohortRevenue(db: Reader, scope: CohortScope): Promise<CohortDay[]> {
  if (scope.bounds.length < 2) return [];
  const rows = await purchasesOf(db, scope)
    .select([
      cohortOf(sql`u.first_event_time`, scope.bounds).as('cohort'),
      'u.channel',
      sql<number | string>`(c.event_time - u.first_event_time) / ${sql.lit(DAY_MS)}`.as('day'),
      sql<number | string | null>`sum(case when c.currency = ${scope.currency} then c.value_minor else c.fx_value_minor end)`.as(
        'amount',
      ),
    ])
    .groupBy(BY_COHORT_CHANNEL_AND_DAY)
    .execute();
  return rows.map(dayOf);
}

/**
 * Refunds of the cohorts' Purchases per cohort, channel and day after the first conversion (by
 * refund time), in the store currency: a foreign-currency conversion's refund at the rate
 * recorded with the conversion (its converted value ÷ its value), truncated to the minor unit.
 */
export async function cohortRefunds(db: Reader, scope: CohortScope): Promise<CohortDay[]> {
  if (scope.bounds.length < 2) return [];
  const horizon = sql.lit(scope.days * DAY_MS);
  const rows = await purchasesOf(db, scope)
    .innerJoin('refunds as r', 'r.conversion_id', 'c.id')
    .where(sql<boolean>`r.refund_time < u.first_event_time + ${horizon}`)
    .select([
      cohortOf(sql`u.first_event_time`, scope.bounds).as('cohort'),
      'u.channel',
      sql<number | string>`(r.refund_time - u.first_event_time) / ${sql.lit(DAY_MS)}`.as('day'),
      sql<number | string | null>`sum(case when r.currency = ${scope.currency} then r.amount_minor
        else r.amount_minor * c.fx_value_minor / nullif(c.value_minor, 0) end)`.as('amount'),
    ])
    .groupBy(BY_COHORT_CHANNEL_AND_DAY)
    .execute();
  return rows.map(dayOf);
}

type RawDay = { cohort: number | string; channel: string; day: number | string; amount: number | string | null };

function dayOf(r: RawDay): CohortDay {
  // A refund dated before the first conversion counts on its day 0.
  return { cohort: Number(r.cohort), channel: r.channel, day: Math.max(0, Number(r.day)), amount: Number(r.amount ?? 0) };
}

export interface CohortSpend {
  cohort: number;
  platform: string;
  currency: string;
  /** Minor units of `currency`. */
  amount: number;
}

/** Ad spend per cohort month (by the entries' dates: monthStarts[i] ≤ date < monthStarts[i + 1]) and platform. */
export async function cohortSpend(
  db: Reader,
  scope: { storeId: string; livemode: number; monthStarts: string[] },
): Promise<CohortSpend[]> {
  const starts = scope.monthStarts;
  if (starts.length < 2) return [];
  const arms = starts.slice(1, -1).map((start, i) => sql`when date < ${sql.lit(start)} then ${sql.lit(i)}`);
  const cohort =
    arms.length === 0
      ? sql<number>`${sql.lit(0)}`
      : sql<number>`case ${sql.join(arms, sql` `)} else ${sql.lit(starts.length - 2)} end`;
  const rows = await db
    .selectFrom('ad_spend')
    .select([cohort.as('cohort'), 'platform', 'currency', sql<number | string>`sum(amount_minor)`.as('amount')])
    .where('store_id', '=', scope.storeId)
    .where('livemode', '=', scope.livemode)
    .where('date', '>=', starts[0] ?? '')
    .where('date', '<', starts[starts.length - 1] ?? '')
    .groupBy([sql`1`, sql`2`, sql`3`])
    .execute();
  return rows.map((r) => ({ cohort: Number(r.cohort), platform: r.platform, currency: r.currency, amount: Number(r.amount) }));
}
