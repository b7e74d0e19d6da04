import { PLANNED_PER_VALUES, type Reader, type Writer } from '../database.js';
import type { ConversionsTable, FxRatesTable } from '../schema.js';

/** Storage of dated exchange rates and of the rates recorded with conversions (migration 0015). */

/** The base of the rates loaded so far, or undefined before the first load. */
export async function loadedBase(db: Reader): Promise<string | undefined> {
  const row = await db.selectFrom('fx_rates').select('base').limit(1).executeTakeFirst();
  return row?.base;
}

/** The rates held for some currencies between the first and last of `sortedDates`, to compare a reload with. */
export async function ratesOn(db: Reader, currencies: string[], sortedDates: string[]): Promise<FxRatesTable[]> {
  const first = sortedDates[0];
  const last = sortedDates[sortedDates.length - 1];
  if (currencies.length === 0 || first === undefined || last === undefined) return [];
  return db
    .selectFrom('fx_rates')
    .selectAll()
    .where('currency', 'in', currencies)
    .where('date', '>=', first)
    .where('date', '<=', last)
    .execute();
}

/** Inserts or replaces each rate (by currency and date). */
export async function upsertRates(trx: Writer, rates: FxRatesTable[]): Promise<void> {
  for (let i = 0; i < rates.length; i += 500) {
    await trx
      .insertInto('fx_rates')
      .values(rates.slice(i, i + 500))
      .onConflict((oc) =>
        oc.columns(['currency', 'date']).doUpdateSet((eb) => ({
          rate: eb.ref('excluded.rate'),
          base: eb.ref('excluded.base'),
          loaded_at: eb.ref('excluded.loaded_at'),
        })),
      )
      .execute();
  }
}

/** The rates of some currencies on the days from..to (inclusive), newest day first. */
export async function ratesBetween(db: Reader, currencies: string[], from: string, to: string): Promise<FxRatesTable[]> {
  return db
    .selectFrom('fx_rates')
    .selectAll()
    .where('currency', 'in', currencies)
    .where('date', '>=', from)
    .where('date', '<=', to)
    .orderBy('date', 'desc')
    .execute();
}

export type FxColumns = Pick<ConversionsTable, 'fx_currency' | 'fx_rate_date' | 'fx_rate' | 'fx_value_minor'>;

export type RestateCandidate = Pick<
  ConversionsTable,
  'id' | 'store_id' | 'event_time' | 'value_minor' | 'currency' | 'fx_currency' | 'fx_rate_date' | 'fx_rate' | 'fx_value_minor'
> & { store_currency: string; timezone: string };

/** Conversions with event time in [from, to) whose currency is not their store's, oldest first. */
export async function foreignConversions(db: Reader, from: number, to: number, storeId?: string): Promise<RestateCandidate[]> {
  let query = db
    .selectFrom('conversions')
    .innerJoin('stores', 'stores.id', 'conversions.store_id')
    .select([
      'conversions.id',
      'conversions.store_id',
      'conversions.event_time',
      'conversions.value_minor',
      'conversions.currency',
      'conversions.fx_currency',
      'conversions.fx_rate_date',
      'conversions.fx_rate',
      'conversions.fx_value_minor',
      'stores.currency as store_currency',
      'stores.timezone as timezone',
    ])
    .where('conversions.event_time', '>=', from)
    .where('conversions.event_time', '<', to)
    .whereRef('conversions.currency', '<>', 'stores.currency');
  if (storeId) query = query.where('conversions.store_id', '=', storeId);
  return query.orderBy('conversions.event_time').orderBy('conversions.id').execute();
}

/** Rewrites the recorded rate of one conversion (found by id and event time: one partition on PostgreSQL). */
export async function setConversionFx(trx: Writer, id: string, eventTime: number, columns: FxColumns): Promise<void> {
  await trx.updateTable('conversions').set(columns).where('id', '=', id).where('event_time', '=', eventTime).execute();
}

export interface ConvertedSums {
  /** Purchases converted at their recorded rate into `currency`, in its minor units. */
  revenueMinor: number;
  attributedRevenueMinor: number;
  /** Purchases in other currencies with no recorded rate, per currency, in their minor units. */
  unconverted: { currency: string; revenueMinor: number }[];
}

/**
 * Purchase conversions of a store and mode in `foreign` currencies (not the store's `currency`)
 * with event time in [from, to): ranges of `conversions_store_currency`, one per currency.
 */
export async function sumConverted(
  db: Reader,
  storeId: string,
  livemode: number,
  currency: string,
  foreign: string[],
  range: { from: number; to: number },
): Promise<ConvertedSums> {
  const others = foreign.filter((c) => c !== currency);
  const rows =
    others.length === 0
      ? []
      : await db
          .selectFrom('conversions')
          .select(['currency', 'fx_currency', 'fx_value_minor', 'value_minor', 'attributed'])
          .where('store_id', '=', storeId)
          .where('livemode', '=', livemode)
          .where('currency', 'in', others)
          .where('event_time', '>=', range.from)
          .where('event_time', '<', range.to)
          .where('event_type', '=', 'Purchase')
          .modifyEnd(PLANNED_PER_VALUES)
          .execute();
  let revenueMinor = 0;
  let attributedRevenueMinor = 0;
  const unconverted = new Map<string, number>();
  for (const row of rows) {
    if (row.fx_currency === currency && row.fx_value_minor != null) {
      const value = Number(row.fx_value_minor);
      revenueMinor += value;
      if (Number(row.attributed) === 1) attributedRevenueMinor += value;
    } else {
      unconverted.set(row.currency, (unconverted.get(row.currency) ?? 0) + Number(row.value_minor));
    }
  }
  return {
    revenueMinor,
    attributedRevenueMinor,
    unconverted: [...unconverted]
      .map(([cur, minor]) => ({ currency: cur, revenueMinor: minor }))
      .sort((a, b) => (a.currency < b.currency ? -1 : 1)),
  };
}
