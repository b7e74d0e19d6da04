import { addDays, dateIn, isValidDate, startOfDay } from '../calendar/dates.js';
import type { Database } from '../db/database.js';
import { customersOfConversions, queueCohortCustomers } from '../db/repositories/cohort-rollups.js';
import { type FxColumns, foreignConversions, loadedBase, ratesOn, setConversionFx, upsertRates } from '../db/repositories/fx.js';
import { fromMinorUnits } from '../money.js';
import { type FxRate, parseRatesCsv, sameDecimal } from './rates.js';
import { fxFor } from './record.js';

/** The operator's exchange-rate commands (`waytrack fx load`, `waytrack fx restate`; docs/operations.md). */

export class FxError extends Error {}

export interface LoadResult {
  base: string;
  rates: number;
  added: number;
  changed: { date: string; currency: string; from: string; to: string }[];
  unchanged: number;
  firstDate: string;
  lastDate: string;
}

/**
 * Loads a rates file (see `parseRatesCsv`): all of it or, on any problem, nothing. Loading the
 * same file again changes nothing; a rate that differs from the one held replaces it and is
 * reported — conversions recorded before keep the rate they were recorded with (`restate`).
 */
export async function loadRates(database: Database, csv: string, now = Date.now()): Promise<LoadResult> {
  const rates = parseRatesCsv(csv);
  const base = (rates[0] as FxRate).base;
  const held = await loadedBase(database.read);
  if (held && held !== base) {
    throw new FxError(`the rates loaded so far are against ${held}; this file's base is ${base} (one base per installation)`);
  }
  const dates = rates.map((r) => r.date).sort();
  const existing = await ratesOn(database.read, [...new Set(rates.map((r) => r.currency))], dates);
  const known = new Map(existing.map((r) => [`${r.date}|${r.currency}`, r.rate]));
  const changed: LoadResult['changed'] = [];
  let added = 0;
  const writes = rates.filter((rate) => {
    const before = known.get(`${rate.date}|${rate.currency}`);
    if (before === undefined) added++;
    else if (!sameDecimal(before, rate.rate))
      changed.push({ date: rate.date, currency: rate.currency, from: before, to: rate.rate });
    else return false;
    return true;
  });
  if (writes.length > 0)
    await database.write((trx) =>
      upsertRates(
        trx,
        writes.map((r) => ({ ...r, loaded_at: now })),
      ),
    );
  return {
    base,
    rates: rates.length,
    added,
    changed,
    unchanged: rates.length - writes.length,
    firstDate: dates[0] as string,
    lastDate: dates[dates.length - 1] as string,
  };
}

export interface Restatement {
  conversionId: string;
  storeId: string;
  date: string;
  currency: string;
  before: FxView | null;
  after: FxView | null;
}

interface FxView {
  currency: string;
  rate: string;
  rateDate: string;
  value: number;
}

function view(c: FxColumns): FxView | null {
  if (!c.fx_currency || c.fx_value_minor == null) return null;
  return {
    currency: c.fx_currency,
    rate: c.fx_rate as string,
    rateDate: c.fx_rate_date as string,
    value: fromMinorUnits(Number(c.fx_value_minor), c.fx_currency),
  };
}

function same(a: FxColumns, b: FxColumns): boolean {
  return (
    (a.fx_currency ?? null) === (b.fx_currency ?? null) &&
    (a.fx_rate_date ?? null) === (b.fx_rate_date ?? null) &&
    (a.fx_rate ?? null) === (b.fx_rate ?? null) &&
    (a.fx_value_minor == null ? null : Number(a.fx_value_minor)) === (b.fx_value_minor == null ? null : Number(b.fx_value_minor))
  );
}

/**
 * Re-derives the rate of every foreign-currency conversion whose day (in its store's time zone)
 * is in from..to, from the rates held now and the store's currency now, and rewrites those that
 * differ. Returns every change (before and after); with `dryRun` writes nothing.
 */
export async function restate(
  database: Database,
  options: { from: string; to: string; storeId?: string; dryRun?: boolean },
): Promise<Restatement[]> {
  for (const [name, value] of [
    ['--from', options.from],
    ['--to', options.to],
  ] as const) {
    if (!isValidDate(value)) throw new FxError(`${name} must be a calendar date YYYY-MM-DD (got "${value}")`);
  }
  if (options.from > options.to) throw new FxError('--from must not be after --to');
  // Every zone's day lies within a day of UTC's: read a wider UTC window, keep each store's own days.
  const candidates = await foreignConversions(
    database.read,
    startOfDay(addDays(options.from, -1), 'UTC'),
    startOfDay(addDays(options.to, 2), 'UTC'),
    options.storeId,
  );
  const changes: { id: string; eventTime: number; columns: FxColumns; change: Restatement }[] = [];
  for (const row of candidates) {
    const date = dateIn(row.event_time, row.timezone);
    if (date < options.from || date > options.to) continue;
    const columns = await fxFor(database.read, row, { currency: row.store_currency, timezone: row.timezone });
    if (same(row, columns)) continue;
    changes.push({
      id: row.id,
      eventTime: row.event_time,
      columns,
      change: {
        conversionId: row.id,
        storeId: row.store_id,
        date,
        currency: row.currency,
        before: view(row),
        after: view(columns),
      },
    });
  }
  if (!options.dryRun && changes.length > 0) {
    for (let i = 0; i < changes.length; i += 500) {
      const chunk = changes.slice(i, i + 500);
      await database.write(async (trx) => {
        for (const c of chunk) await setConversionFx(trx, c.id, c.eventTime, c.columns);
        // A cohort counts a foreign-currency purchase at its recorded rate (analytics/cohort-rollups.ts).
        await queueCohortCustomers(
          trx,
          await customersOfConversions(
            trx,
            chunk.map((c) => c.id),
          ),
        );
      });
    }
  }
  return changes.map((c) => c.change);
}
