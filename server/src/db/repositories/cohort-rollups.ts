import { sql } from 'kysely';
import type { Reader, Writer } from '../database.js';
import type { RollupCohortCustomersTable, RollupCohortDaysTable, RollupCohortMonthsTable } from '../schema.js';
import { addingUp, chunkedUpsert } from './rollup-writes.js';

/** Reads and writes of the cohort rollups (migration 0040; analytics/cohort-rollups.ts). */

export interface CustomerRef {
  store_id: string;
  livemode: number;
  customer_key: string;
}

/** A queued customer at the version read. */
export interface QueuedCustomer extends CustomerRef {
  version: number;
}

const ID_CHUNK = 500;
const KEY_CHUNK = 500;
/**
 * Customers whose facts one set of statements reads. Not 500: PostgreSQL estimated ~11
 * conversions per key and scanned every monthly partition for 500 keys (200 ms at 200,000
 * conversions); 100 keys go through `conversions_customer` (11 ms).
 */
const FACTS_CHUNK = 100;

/** `(store, mode, key)` in key order, each once (rows are locked in one order: no deadlock between instances). */
function sortedUnique<T extends CustomerRef>(refs: T[]): T[] {
  const byKey = new Map(refs.map((r) => [`${r.store_id}\u0001${r.livemode}\u0001${r.customer_key}`, r]));
  return [...byKey.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, r]) => r);
}

/** The customers of these conversions (those with a customer key). */
export async function customersOfConversions(db: Reader, conversionIds: string[]): Promise<CustomerRef[]> {
  const out: CustomerRef[] = [];
  for (let i = 0; i < conversionIds.length; i += ID_CHUNK) {
    const rows = await db
      .selectFrom('conversions')
      .select(['store_id', 'livemode', 'customer_key'])
      .where('id', 'in', conversionIds.slice(i, i + ID_CHUNK))
      .where('customer_key', 'is not', null)
      .execute();
    for (const r of rows) out.push({ store_id: r.store_id, livemode: r.livemode, customer_key: r.customer_key as string });
  }
  return sortedUnique(out);
}

/** Queues customers to be folded again (a customer queued already moves its version). */
export async function queueCohortCustomers(db: Writer, refs: CustomerRef[]): Promise<void> {
  const rows = sortedUnique(refs);
  for (let i = 0; i < rows.length; i += KEY_CHUNK) {
    await db
      .insertInto('rollup_cohort_queue')
      .values(rows.slice(i, i + KEY_CHUNK).map((r) => ({ ...r, version: 0 })))
      .onConflict((oc) =>
        oc
          .columns(['store_id', 'livemode', 'customer_key'])
          .doUpdateSet({ version: sql<number>`${sql.ref('rollup_cohort_queue.version')} + 1` }),
      )
      .execute();
  }
}

/** Queues every customer of a store (its cohort rollups start again from nothing). */
export async function requeueStoreCohorts(db: Writer, storeId: string): Promise<void> {
  await db.deleteFrom('rollup_cohort_customers').where('store_id', '=', storeId).execute();
  await db.deleteFrom('rollup_cohort_days').where('store_id', '=', storeId).execute();
  await db.deleteFrom('rollup_cohort_months').where('store_id', '=', storeId).execute();
  await db.deleteFrom('rollup_new_customer_days').where('store_id', '=', storeId).execute();
  await db.deleteFrom('rollup_new_customer_months').where('store_id', '=', storeId).execute();
  await sql`insert into rollup_cohort_queue (store_id, livemode, customer_key, version)
    select store_id, livemode, customer_key, 0 from customers where store_id = ${storeId}
    on conflict (store_id, livemode, customer_key) do update set version = rollup_cohort_queue.version + 1`.execute(db);
}

/** Up to `limit` queued customers (of one store, with `storeId`), in key order. */
export async function readCohortQueue(db: Reader, limit: number, storeId?: string): Promise<QueuedCustomer[]> {
  let query = db.selectFrom('rollup_cohort_queue').select(['store_id', 'livemode', 'customer_key', 'version']);
  if (storeId) query = query.where('store_id', '=', storeId);
  const rows = await query.orderBy('store_id').orderBy('livemode').orderBy('customer_key').limit(limit).execute();
  return rows.map((r) => ({ ...r, version: Number(r.version) }));
}

/** What a customer's conversions and refunds are, as the cohort fold needs them. */
export interface CohortFacts {
  customer?: { first_event_time: number; channel: string; campaign_id: string };
  purchases: Array<{ id: string; event_time: number; currency: string; value_minor: number; fx_value_minor: number | null }>;
  refunds: Array<{ conversion_id: string; refund_time: number; currency: string; amount_minor: number }>;
}

/** A customer's recorded contribution (rollup_cohort_customers), if any. */
export interface CohortState {
  first_date: string;
  channel: string;
  campaign_id: string;
  cells: string;
  version: number;
}

/** A customer's facts and recorded contribution, as the cohort fold reads them. */
export interface CustomerFacts {
  facts: CohortFacts;
  state?: CohortState;
}

const customerKey = (r: CustomerRef) => `${r.store_id}\u0001${r.livemode}\u0001${r.customer_key}`;
const num = (v: number | string | null | undefined) => (v === null || v === undefined ? null : Number(v));

/**
 * Each customer's row, Purchases (`conversions_customer`) and their refunds, and its recorded
 * contribution: four statements per store, mode and 100 customers (not per customer: at one
 * round trip each, PostgreSQL folded ~150 customers a second). In the order of `refs`.
 */
export async function cohortFactsOf(db: Reader, refs: CustomerRef[]): Promise<CustomerFacts[]> {
  const found = new Map<string, CustomerFacts>(refs.map((r) => [customerKey(r), { facts: { purchases: [], refunds: [] } }]));
  const of = (r: CustomerRef) => found.get(customerKey(r)) as CustomerFacts;
  for (const chunk of chunksOf(refs, FACTS_CHUNK)) {
    const { store_id, livemode } = chunk[0] as CustomerRef;
    const keys = chunk.map((r) => r.customer_key);
    const ref = (customer_key: string | null | undefined) => ({ store_id, livemode, customer_key: customer_key as string });
    const customers = await db
      .selectFrom('customers')
      .select(['customer_key', 'first_event_time', 'channel', 'campaign_id'])
      .where('store_id', '=', store_id)
      .where('livemode', '=', livemode)
      .where('customer_key', 'in', keys)
      .execute();
    for (const c of customers) {
      of(ref(c.customer_key)).facts.customer = {
        first_event_time: Number(c.first_event_time),
        channel: c.channel,
        campaign_id: c.campaign_id,
      };
    }
    const purchases = await db
      .selectFrom('conversions')
      .select(['id', 'customer_key', 'event_time', 'currency', 'value_minor', 'fx_value_minor'])
      .where('store_id', '=', store_id)
      .where('livemode', '=', livemode)
      .where('customer_key', 'in', keys)
      .where('event_type', '=', 'Purchase')
      .execute();
    const buyer = new Map<string, CustomerFacts>();
    for (const p of purchases) {
      const facts = of(ref(p.customer_key));
      buyer.set(p.id, facts);
      facts.facts.purchases.push({
        id: p.id,
        event_time: Number(p.event_time),
        currency: p.currency,
        value_minor: Number(p.value_minor),
        fx_value_minor: num(p.fx_value_minor),
      });
    }
    const ids = [...buyer.keys()];
    for (let j = 0; j < ids.length; j += ID_CHUNK) {
      const refunds = await db
        .selectFrom('refunds')
        .select(['conversion_id', 'refund_time', 'currency', 'amount_minor'])
        .where('conversion_id', 'in', ids.slice(j, j + ID_CHUNK))
        .execute();
      for (const r of refunds) {
        buyer.get(r.conversion_id)?.facts.refunds.push({
          conversion_id: r.conversion_id,
          refund_time: Number(r.refund_time),
          currency: r.currency,
          amount_minor: Number(r.amount_minor),
        });
      }
    }
    const states = await db
      .selectFrom('rollup_cohort_customers')
      .select(['customer_key', 'first_date', 'channel', 'campaign_id', 'cells', 'version'])
      .where('store_id', '=', store_id)
      .where('livemode', '=', livemode)
      .where('customer_key', 'in', keys)
      .execute();
    for (const { customer_key, version, ...state } of states) {
      of(ref(customer_key)).state = { ...state, version: Number(version) };
    }
  }
  return refs.map(of);
}

/** A customer's new contribution, written only if its recorded one is still the one read. */
export interface CohortStateChange extends CustomerRef {
  /** The recorded contribution's version read; undefined when none was recorded. */
  readVersion?: number;
  /** The new contribution; undefined when it contributes nothing now (its row is deleted). */
  next?: { first_date: string; channel: string; campaign_id: string; cells: string };
}

/** Thrown when a customer's recorded contribution changed since it was read (another instance folded it). */
export class StaleCohorts extends Error {
  constructor() {
    super("a customer's cohort contribution changed while it was folded");
  }
}

/** The refs grouped by store and mode, each group cut in chunks of `size`. */
function chunksOf<T extends CustomerRef>(refs: T[], size = KEY_CHUNK): T[][] {
  const groups = new Map<string, T[]>();
  for (const r of refs) {
    const group = `${r.store_id}\u0001${r.livemode}`;
    groups.set(group, [...(groups.get(group) ?? []), r]);
  }
  const chunks: T[][] = [];
  for (const group of groups.values()) for (let i = 0; i < group.length; i += size) chunks.push(group.slice(i, i + size));
  return chunks;
}

/**
 * Records the customers' new contributions (throws StaleCohorts when one moved since it was
 * read): first contributions in one insert per chunk, changed ones one update (or delete) each,
 * at the version read.
 */
export async function writeCohortStates(trx: Writer, changes: CohortStateChange[]): Promise<void> {
  const created = changes.filter((c) => c.readVersion === undefined && c.next);
  for (const chunk of chunksOf(created)) {
    const result = await trx
      .insertInto('rollup_cohort_customers')
      .values(
        chunk.map((c) => ({
          store_id: c.store_id,
          livemode: c.livemode,
          customer_key: c.customer_key,
          ...c.next,
          version: 1,
        })) as RollupCohortCustomersTable[],
      )
      .onConflict((oc) => oc.columns(['store_id', 'livemode', 'customer_key']).doNothing())
      .executeTakeFirst();
    if (Number(result.numInsertedOrUpdatedRows ?? 0) !== chunk.length) throw new StaleCohorts();
  }
  for (const c of changes) {
    if (c.readVersion === undefined) continue;
    let changed: bigint | number | undefined;
    if (c.next) {
      const result = await trx
        .updateTable('rollup_cohort_customers')
        .set({ ...c.next, version: c.readVersion + 1 })
        .where('store_id', '=', c.store_id)
        .where('livemode', '=', c.livemode)
        .where('customer_key', '=', c.customer_key)
        .where('version', '=', c.readVersion)
        .executeTakeFirst();
      changed = result.numUpdatedRows;
    } else {
      const result = await trx
        .deleteFrom('rollup_cohort_customers')
        .where('store_id', '=', c.store_id)
        .where('livemode', '=', c.livemode)
        .where('customer_key', '=', c.customer_key)
        .where('version', '=', c.readVersion)
        .executeTakeFirst();
      changed = result.numDeletedRows;
    }
    if (Number(changed ?? 0) !== 1) throw new StaleCohorts();
  }
}

/**
 * Takes the queued customers that are still queued at the version read (one queued again
 * stays queued): one delete per store, mode and chunk, by `(key, version)` pairs.
 */
export async function takeCohortQueue(trx: Writer, queued: QueuedCustomer[]): Promise<void> {
  for (const chunk of chunksOf(queued)) {
    const { store_id, livemode } = chunk[0] as QueuedCustomer;
    // The version cast: PostgreSQL reads an untyped VALUES parameter as text.
    const pairs = sql.join(chunk.map((q) => sql`(${q.customer_key}, cast(${q.version} as integer))`));
    await sql`delete from rollup_cohort_queue where store_id = ${store_id} and livemode = ${livemode}
      and (customer_key, version) in (values ${pairs})`.execute(trx);
  }
}

/** Adds cohort deltas per first day (and, summed per month, per first month). */
export async function addCohortRows(trx: Writer, days: RollupCohortDaysTable[]): Promise<void> {
  const sorted = [...days].sort(cellOrder((r) => r.first_date));
  await addDays(trx, sorted);
  const months = new Map<string, RollupCohortMonthsTable>();
  for (const { first_date, ...row } of sorted) {
    const first_month = first_date.slice(0, 7);
    const key = [row.store_id, row.livemode, first_month, row.channel, row.day_offset, row.currency].join('\u0001');
    const month = months.get(key);
    if (month) {
      month.net_minor += row.net_minor;
      month.net_fx_minor += row.net_fx_minor;
      month.customers += row.customers;
    } else months.set(key, { ...row, first_month });
  }
  await addMonths(trx, [...months.values()].sort(cellOrder((r) => r.first_month)));
}

/** Rows in key order: store, mode, period, channel, day, currency. */
function cellOrder<R extends Omit<RollupCohortDaysTable, 'first_date'>>(period: (row: R) => string) {
  return (a: R, b: R) => {
    const x = [a.store_id, a.livemode, period(a), a.channel, a.day_offset, a.currency];
    const y = [b.store_id, b.livemode, period(b), b.channel, b.day_offset, b.currency];
    for (let i = 0; i < x.length; i++) {
      if (x[i] !== y[i]) return (x[i] as string | number) < (y[i] as string | number) ? -1 : 1;
    }
    return 0;
  };
}

const CELL = ['store_id', 'livemode', 'channel', 'day_offset', 'currency'] as const;
const SUMS = ['net_minor', 'net_fx_minor', 'customers'] as const;

const addDays = chunkedUpsert(['first_date', ...CELL, ...SUMS], (db, rows: RollupCohortDaysTable[]) =>
  db
    .insertInto('rollup_cohort_days')
    .values(rows)
    .onConflict((oc) =>
      oc
        .columns(['store_id', 'livemode', 'first_date', 'channel', 'day_offset', 'currency'])
        .doUpdateSet(addingUp('rollup_cohort_days', SUMS)),
    ),
);

const addMonths = chunkedUpsert(['first_month', ...CELL, ...SUMS], (db, rows: RollupCohortMonthsTable[]) =>
  db
    .insertInto('rollup_cohort_months')
    .values(rows)
    .onConflict((oc) =>
      oc
        .columns(['store_id', 'livemode', 'first_month', 'channel', 'day_offset', 'currency'])
        .doUpdateSet(addingUp('rollup_cohort_months', SUMS)),
    ),
);
