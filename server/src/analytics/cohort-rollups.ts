/**
 * Cohort rollups (migration 0040): what first-purchase cohorts (cohorts.ts) add up, kept per
 * local day (and month) of each customer's first conversion, its channel, the day after it and
 * the currency — so a year of cohorts reads a few thousand rows, not every customer's purchases;
 * and the new customers per first day (and month), channel and campaign (migration 0042), the
 * channel report's `newCustomers`.
 *
 * A customer's contribution depends on all of its conversions (an earlier one recorded later
 * moves its first day, a re-attribution its channel), so it is folded per customer: the
 * customer is queued (`rollup_cohort_queue`) by the fold of any of its conversions or refunds,
 * by a change of a conversion's attribution or value (withConversionRollup) and by a new rate
 * of a conversion; a cohort fold then reads the customer's stored conversions and refunds and
 * the contribution recorded for it (`rollup_cohort_customers`), and in one write replaces that
 * contribution by the new one (only if it is still the one read: several instances may fold)
 * and adds the difference to the cohort rows. Reads fold their store's queue first, so cohorts
 * are exact. Conversions removed by retention stop counting when their customer is folded again.
 */
import { type Zone, zoneOf } from '../calendar/zone.js';
import { backgroundJob, type Database, type Reader, type Writer } from '../db/database.js';
import {
  addCohortRows,
  type CohortFacts,
  type CohortStateChange,
  type CustomerFacts,
  cohortFactsOf,
  type QueuedCustomer,
  readCohortQueue,
  StaleCohorts,
  takeCohortQueue,
  writeCohortStates,
} from '../db/repositories/cohort-rollups.js';
import { addNewCustomerRows } from '../db/repositories/new-customers.js';
import { adoptZones, type RollupZone, rollupZones } from '../db/repositories/rollup-queue.js';
import type { RollupCohortDaysTable, RollupNewCustomerDaysTable } from '../db/schema.js';
import { FoldSize } from './fold-size.js';

/** Day offsets 0 … 365 after the first conversion count; later ones are outside every figure. */
export const HORIZON_DAYS = 366;
const DAY_MS = 86_400_000;

/** One cell of a customer's contribution: [day offset, currency, net minor units, net at the recorded rates, customers]. */
type Cell = [number, string, number, number, number];

interface Contribution {
  first_date: string;
  channel: string;
  campaign_id: string;
  cells: Cell[];
}

/**
 * What one customer adds to the cohorts: each Purchase within HORIZON_DAYS of the first
 * conversion on its day after it, less each of its refunds before the horizon on the refund's
 * day (a refund dated before the first conversion on day 0); in the conversion's (the refund's)
 * currency and at the rate recorded with the conversion (a refund at the conversion's rate,
 * truncated to the minor unit); and the customer, once. Undefined when the customer is unknown.
 */
export function cohortContribution(facts: CohortFacts, zone: Zone): Contribution | undefined {
  const customer = facts.customer;
  if (!customer) return undefined;
  const first = customer.first_event_time;
  const horizon = first + HORIZON_DAYS * DAY_MS;
  // The customer itself counts on its own cell: day 0, no currency.
  const cells = new Map<string, Cell>([['0|', [0, '', 0, 0, 1]]]);
  const add = (day: number, currency: string, net: number, fx: number) => {
    const key = `${day}|${currency}`;
    const cell = cells.get(key);
    if (cell) {
      cell[2] += net;
      cell[3] += fx;
    } else cells.set(key, [day, currency, net, fx, 0]);
  };
  const counted = new Map<string, CohortFacts['purchases'][number]>();
  for (const p of facts.purchases) {
    if (p.event_time < first || p.event_time >= horizon) continue;
    counted.set(p.id, p);
    add(Math.trunc((p.event_time - first) / DAY_MS), p.currency, p.value_minor, p.fx_value_minor ?? 0);
  }
  for (const r of facts.refunds) {
    const p = counted.get(r.conversion_id);
    if (!p || r.refund_time >= horizon) continue;
    const fx =
      p.fx_value_minor === null || p.value_minor === 0
        ? 0
        : Number((BigInt(r.amount_minor) * BigInt(p.fx_value_minor)) / BigInt(p.value_minor));
    add(Math.max(0, Math.trunc((r.refund_time - first) / DAY_MS)), r.currency, -r.amount_minor, -fx);
  }
  const sorted = [...cells.values()].sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
  return { first_date: zone.date(first), channel: customer.channel, campaign_id: customer.campaign_id, cells: sorted };
}

/** A cohort fold computed outside any transaction. */
export interface PendingCohorts {
  queued: QueuedCustomer[];
  zones: [string, RollupZone][];
  changes: CohortStateChange[];
  /** The differences to add to the cohort rows. */
  rows: RollupCohortDaysTable[];
  /** The differences to add to the new customers per first day, channel and campaign. */
  firsts: RollupNewCustomerDaysTable[];
  tzdata: string;
  more: boolean;
}

/** Reads up to `limit` queued customers (of one store, with `storeId`) and folds them, writing nothing. */
export async function foldCohorts(
  db: Reader,
  { limit, storeId, tzdata }: { limit: number; storeId?: string; tzdata: string },
): Promise<PendingCohorts | null> {
  const queued = await readCohortQueue(db, limit, storeId);
  if (queued.length === 0) return null;
  const zones = await rollupZones(db, [...new Set(queued.map((q) => q.store_id))], tzdata);
  const changes: CohortStateChange[] = [];
  const deltas = new Map<string, RollupCohortDaysTable>();
  const firsts = new Map<string, RollupNewCustomerDaysTable>();
  const addCells = (q: QueuedCustomer, c: Contribution, sign: 1 | -1) => {
    const { store_id, livemode } = q;
    const first = [store_id, livemode, c.first_date, c.channel, c.campaign_id].join('\u0001');
    const row = firsts.get(first) ?? {
      store_id,
      livemode,
      first_date: c.first_date,
      channel: c.channel,
      campaign_id: c.campaign_id,
      customers: 0,
    };
    row.customers += sign;
    firsts.set(first, row);
    for (const [day_offset, currency, net, fx, customers] of c.cells) {
      const key = [q.store_id, q.livemode, c.first_date, c.channel, day_offset, currency].join('\u0001');
      const row = deltas.get(key) ?? {
        store_id: q.store_id,
        livemode: q.livemode,
        first_date: c.first_date,
        channel: c.channel,
        day_offset,
        currency,
        net_minor: 0,
        net_fx_minor: 0,
        customers: 0,
      };
      row.net_minor += sign * net;
      row.net_fx_minor += sign * fx;
      row.customers += sign * customers;
      deltas.set(key, row);
    }
  };
  const read = await cohortFactsOf(db, queued);
  for (const [i, q] of queued.entries()) {
    const { facts, state } = read[i] as CustomerFacts;
    const next = cohortContribution(facts, zoneOf(zones.get(q.store_id)?.timezone ?? 'UTC'));
    const cells = next && JSON.stringify(next.cells);
    if (
      state &&
      next &&
      state.first_date === next.first_date &&
      state.channel === next.channel &&
      state.campaign_id === next.campaign_id &&
      state.cells === cells
    )
      continue;
    if (state) addCells(q, { ...state, cells: JSON.parse(state.cells) as Cell[] }, -1);
    if (next) addCells(q, next, 1);
    changes.push({
      store_id: q.store_id,
      livemode: q.livemode,
      customer_key: q.customer_key,
      ...(state && { readVersion: state.version }),
      ...(next && {
        next: { first_date: next.first_date, channel: next.channel, campaign_id: next.campaign_id, cells: cells as string },
      }),
    });
  }
  const rows = [...deltas.values()].filter((r) => r.net_minor !== 0 || r.net_fx_minor !== 0 || r.customers !== 0);
  return {
    queued,
    zones: [...zones],
    changes,
    rows,
    firsts: [...firsts.values()].filter((r) => r.customers !== 0),
    tzdata,
    more: queued.length === limit,
  };
}

/** `foldCohorts` as a background job (on the database's background thread, either engine). */
export const FOLD_COHORTS = backgroundJob('foldCohorts', foldCohorts);

/**
 * Writes a cohort fold: the customers' new contributions (StaleCohorts, rolling the write back,
 * when one moved since it was read, or a store's zone did), their queue rows still at the
 * version read, and the differences. Run it inside `database.write`.
 */
export async function applyCohorts(trx: Writer, pending: PendingCohorts): Promise<void> {
  const zones = new Map(pending.zones);
  await adoptZones(trx, zones);
  const current = await rollupZones(trx, [...zones.keys()], pending.tzdata);
  for (const [storeId, zone] of zones) {
    const now = current.get(storeId);
    if (now && (now.timezone !== zone.timezone || now.tzdata !== zone.tzdata)) throw new StaleCohorts();
  }
  await writeCohortStates(trx, pending.changes);
  await takeCohortQueue(trx, pending.queued);
  await addCohortRows(trx, pending.rows);
  await addNewCustomerRows(trx, pending.firsts);
}

/** One read-fold-write step; 'stale' when another fold got there first (nothing written). */
export async function cohortStep(
  database: Database,
  read: () => Promise<PendingCohorts | null>,
): Promise<'done' | 'more' | 'stale'> {
  const pending = await read();
  if (!pending) return 'done';
  try {
    await database.write((trx) => applyCohorts(trx, pending));
  } catch (error) {
    if (error instanceof StaleCohorts) return 'stale';
    throw error;
  }
  return pending.more ? 'more' : 'done';
}

/** Folds every queued customer of a store before a cohort read. */
export async function refreshCohorts(database: Database, storeId: string, tzdata: string): Promise<void> {
  const size = new FoldSize(2_000); // a stale step is tried again smaller (fold-size.ts)
  for (;;) {
    const step = await cohortStep(database, () => foldCohorts(database.read, { limit: size.value, storeId, tzdata }));
    if (step === 'done') return;
    size.after(step);
  }
}
