/**
 * First-purchase cohorts (api.md §11 "Customers"; docs/api.md "Customers and cohorts"): the
 * customers whose first conversion (customers/new-customer.ts) falls in each month of the range,
 * in the store's time zone — and, by channel, the channel that first conversion is credited to —
 * with the cumulative Purchase value net of refunds per customer N days after each customer's
 * first conversion, the month's ad spend, CAC and the payback day.
 */
import { addDays, dateIn, startOfDay } from '../calendar/dates.js';
import type { Database } from '../db/database.js';
import { cohortNet, cohortSpend } from '../db/repositories/cohorts.js';
import { fromMinorUnits } from '../money.js';
import { requireStore } from '../stores/lookup.js';
import { modeFlag, type Tenant } from '../tenancy.js';
import { HORIZON_DAYS, refreshCohorts } from './cohort-rollups.js';
import { checkDates } from './range.js';
import { refreshRollups, TZDATA } from './rollups.js';

export const COHORT_BY = ['month', 'channel'] as const;
export type CohortBy = (typeof COHORT_BY)[number];
/** The days after the first purchase `netRevenuePerCustomer` shows (`d0` … `d365`). */
export const COHORT_DAYS = [0, 30, 60, 90, 180, 365] as const;
const DAY_MS = 86_400_000;

export interface CohortQuery {
  storeId: string;
  startDate?: string;
  endDate?: string;
  by?: CohortBy;
}

interface Row {
  cohort: number;
  channel?: string;
  customers: number;
  /** Net (Purchase value − refunds) per day offset, store-currency minor units. */
  net: Map<number, number>;
  spend?: number;
}

export async function computeCohorts(database: Database, tenant: Tenant, query: CohortQuery, now = Date.now()) {
  checkDates(query);
  const store = await requireStore(database.read, tenant, query.storeId);
  const timezone = store.timezone;
  const by = query.by ?? 'month';
  const endDate = query.endDate ?? dateIn(now, timezone);
  // By default the twelve months ending with endDate's.
  const startDate = query.startDate ?? `${addMonths(endDate.slice(0, 7), -11)}-01`;
  checkDates({ startDate, endDate });
  const monthStarts = monthStartsOf(startDate, endDate);
  const bounds = monthStarts.map((date) => startOfDay(date, timezone));
  const livemode = modeFlag(tenant);
  // Every conversion recorded so far counts: its store's events, then its customers, folded first.
  await refreshRollups(database, store);
  await refreshCohorts(database, store.id, TZDATA);
  const [net, spend] = await Promise.all([
    cohortNet(database.read, { storeId: store.id, livemode, monthStarts, currency: store.currency }),
    cohortSpend(database.read, { storeId: store.id, livemode, monthStarts }),
  ]);

  const rows = new Map<string, Row>();
  const rowOf = (cohort: number, channel: string): Row => {
    const key = by === 'channel' ? `${cohort}|${channel}` : `${cohort}`;
    let row = rows.get(key);
    if (!row) {
      row = { cohort, ...(by === 'channel' && { channel }), customers: 0, net: new Map() };
      rows.set(key, row);
    }
    return row;
  };
  if (by === 'month') for (let i = 0; i < bounds.length - 1; i++) rowOf(i, '');
  for (const d of net) {
    const row = rowOf(d.cohort, d.channel);
    row.customers += d.customers;
    row.net.set(d.day, (row.net.get(d.day) ?? 0) + d.amount);
  }
  const unconverted = new Set<string>();
  for (const entry of spend) {
    if (entry.currency !== store.currency) {
      unconverted.add(entry.currency);
      continue;
    }
    const row = rowOf(entry.cohort, entry.platform);
    row.spend = (row.spend ?? 0) + entry.amount;
  }

  const cohorts = [...rows.values()]
    .sort((a, b) => a.cohort - b.cohort || (a.channel ?? '').localeCompare(b.channel ?? ''))
    .map((row) => present(row, monthStarts, maturityOf(bounds[row.cohort + 1] ?? now, now), store.currency));
  return {
    storeId: store.id,
    by,
    startDate,
    endDate,
    timezone,
    currency: store.currency,
    livemode: livemode === 1,
    asOf: new Date(now).toISOString(),
    cohorts,
    warnings: [...unconverted].sort().map((currency) => ({
      code: 'spend_not_converted' as const,
      currency,
      message: `Ad spend recorded in ${currency} is not in the store currency (${store.currency}): it is left out of spend, cac and paybackDays`,
    })),
  };
}

/**
 * The last day offset every customer of a cohort has lived through: the cohort ended at
 * `end`, so offset D (the 24 hours from D days after a first purchase) is complete for all of
 * them once `end + (D + 1) days ≤ now`. −1 while not even day 0 is.
 */
function maturityOf(end: number, now: number): number {
  return Math.min(HORIZON_DAYS - 1, Math.floor((now - end) / DAY_MS) - 1);
}

function present(row: Row, monthStarts: string[], matureThrough: number, currency: string) {
  const cumulative: number[] = [];
  let running = 0;
  for (let day = 0; day < HORIZON_DAYS; day++) {
    running += row.net.get(day) ?? 0;
    cumulative.push(running);
  }
  const perCustomer: Record<string, number> = {};
  if (row.customers > 0) {
    for (const n of COHORT_DAYS) {
      if (n <= matureThrough) perCustomer[`d${n}`] = fromMinorUnits(divideRounded(cumulative[n] ?? 0, row.customers), currency);
    }
  }
  const spend = row.spend;
  // Payback: the first day offset whose cumulative net revenue covers the spend (per customer ≥ cac ⇔ total ≥ spend, exactly).
  let paybackDays: number | undefined;
  if (spend !== undefined && row.customers > 0) {
    for (let day = 0; day <= matureThrough; day++) {
      if ((cumulative[day] ?? 0) >= spend) {
        paybackDays = day;
        break;
      }
    }
  }
  return {
    cohort: (monthStarts[row.cohort] ?? '').slice(0, 7),
    ...(row.channel !== undefined && { channel: row.channel }),
    customers: row.customers,
    ...(spend !== undefined && { spend: fromMinorUnits(spend, currency) }),
    ...(spend !== undefined && row.customers > 0 && { cac: fromMinorUnits(divideRounded(spend, row.customers), currency) }),
    netRevenuePerCustomer: perCustomer,
    ...(paybackDays !== undefined && { paybackDays }),
  };
}

/** `total ÷ count` rounded half away from zero to a whole minor unit. */
function divideRounded(total: number, count: number): number {
  const sign = total < 0 ? -1n : 1n;
  const magnitude = BigInt(Math.abs(total));
  const n = BigInt(count);
  return Number(sign * ((magnitude * 2n + n) / (2n * n)));
}

/** `YYYY-MM` plus `months`. */
function addMonths(month: string, months: number): string {
  const [y, m] = month.split('-').map(Number) as [number, number];
  const index = y * 12 + (m - 1) + months;
  return `${String(Math.floor(index / 12)).padStart(4, '0')}-${String((index % 12) + 1).padStart(2, '0')}`;
}

/** The start date of each cohort month within the range (the first clipped to startDate), then the day after endDate. */
function monthStartsOf(startDate: string, endDate: string): string[] {
  const starts = [startDate];
  for (let month = addMonths(startDate.slice(0, 7), 1); `${month}-01` <= endDate; month = addMonths(month, 1)) {
    starts.push(`${month}-01`);
  }
  starts.push(addDays(endDate, 1));
  return starts;
}
