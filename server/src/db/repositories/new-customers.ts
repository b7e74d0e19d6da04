import type { Reader, Writer } from '../database.js';
import type { RollupNewCustomerDaysTable, RollupNewCustomerMonthsTable } from '../schema.js';
import { monthSplit } from './rollup-reads.js';
import { addingUp, chunkedUpsert } from './rollup-writes.js';
import type { DateRange } from './spend.js';

/**
 * New customers per first local day (and month), channel and campaign (migration 0042): added to
 * by the cohort fold (analytics/cohort-rollups.ts), read by the channel report.
 */

const KEY = ['store_id', 'livemode', 'channel', 'campaign_id'] as const;

/** Rows in key order: store, mode, period, channel, campaign (concurrent folds lock rows in one order). */
function keyOrder<R extends Omit<RollupNewCustomerDaysTable, 'first_date'>>(period: (row: R) => string) {
  return (a: R, b: R) => {
    const x = [a.store_id, a.livemode, period(a), a.channel, a.campaign_id];
    const y = [b.store_id, b.livemode, period(b), b.channel, b.campaign_id];
    for (let i = 0; i < x.length; i++) {
      if (x[i] !== y[i]) return (x[i] as string | number) < (y[i] as string | number) ? -1 : 1;
    }
    return 0;
  };
}

/** Adds new-customer deltas per first day and, summed, per first month. */
export async function addNewCustomerRows(trx: Writer, days: RollupNewCustomerDaysTable[]): Promise<void> {
  await addDays(trx, [...days].sort(keyOrder((r) => r.first_date)));
  const months = new Map<string, RollupNewCustomerMonthsTable>();
  for (const { first_date, ...row } of days) {
    const first_month = first_date.slice(0, 7);
    const key = [row.store_id, row.livemode, first_month, row.channel, row.campaign_id].join('\u0001');
    const month = months.get(key);
    if (month) month.customers += row.customers;
    else months.set(key, { ...row, first_month });
  }
  const changed = [...months.values()].filter((m) => m.customers !== 0);
  await addMonths(trx, changed.sort(keyOrder((r) => r.first_month)));
}

const addDays = chunkedUpsert(['first_date', ...KEY, 'customers'], (db, rows: RollupNewCustomerDaysTable[]) =>
  db
    .insertInto('rollup_new_customer_days')
    .values(rows)
    .onConflict((oc) =>
      oc
        .columns(['store_id', 'livemode', 'first_date', 'channel', 'campaign_id'])
        .doUpdateSet(addingUp('rollup_new_customer_days', ['customers'])),
    ),
);

const addMonths = chunkedUpsert(['first_month', ...KEY, 'customers'], (db, rows: RollupNewCustomerMonthsTable[]) =>
  db
    .insertInto('rollup_new_customer_months')
    .values(rows)
    .onConflict((oc) =>
      oc
        .columns(['store_id', 'livemode', 'first_month', 'channel', 'campaign_id'])
        .doUpdateSet(addingUp('rollup_new_customer_months', ['customers'])),
    ),
);

/**
 * Customers of a store and mode whose first conversion is on a local date of the range, per
 * channel and campaign of that conversion's credited click: the range's whole months from
 * `rollup_new_customer_months`, its partial first and last months by day (a year reads a few
 * thousand rows, not its customers). The cohort fold keeps these: fold the store's queued
 * customers first (refreshCohorts) for figures as of now.
 */
export async function newCustomersBetween(
  db: Reader,
  storeId: string,
  livemode: number,
  range: DateRange,
): Promise<Array<{ channel: string; campaignId: string; customers: number }>> {
  const { months, days } = monthSplit(range);
  const reads = days.map((span) =>
    db
      .selectFrom('rollup_new_customer_days')
      .select((eb) => ['channel', 'campaign_id', eb.fn.sum<number>('customers').as('customers')])
      .where('store_id', '=', storeId)
      .where('livemode', '=', livemode)
      .where('first_date', '>=', span.startDate)
      .where('first_date', '<=', span.endDate)
      .groupBy(['channel', 'campaign_id'])
      .execute(),
  );
  if (months) {
    reads.push(
      db
        .selectFrom('rollup_new_customer_months')
        .select((eb) => ['channel', 'campaign_id', eb.fn.sum<number>('customers').as('customers')])
        .where('store_id', '=', storeId)
        .where('livemode', '=', livemode)
        .where('first_month', '>=', months.from)
        .where('first_month', '<=', months.to)
        .groupBy(['channel', 'campaign_id'])
        .execute(),
    );
  }
  const counted = new Map<string, { channel: string; campaignId: string; customers: number }>();
  for (const r of (await Promise.all(reads)).flat()) {
    const key = `${r.channel}\u0001${r.campaign_id}`;
    const sum = counted.get(key) ?? { channel: r.channel, campaignId: r.campaign_id, customers: 0 };
    sum.customers += Number(r.customers);
    counted.set(key, sum);
  }
  return [...counted.values()].filter((r) => r.customers !== 0);
}
