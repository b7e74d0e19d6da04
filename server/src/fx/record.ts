import { addDays, dateIn } from '../calendar/dates.js';
import type { Reader } from '../db/database.js';
import { type FxColumns, ratesBetween } from '../db/repositories/fx.js';
import { fromMinorUnits } from '../money.js';
import { convertMinor, crossRate } from './rates.js';

/** How far back a missing day's rate may come from (weekends and holidays have no published rate). */
export const FX_LOOKBACK_DAYS = 7;

export const NO_FX: FxColumns = { fx_currency: null, fx_rate_date: null, fx_rate: null, fx_value_minor: null };

/**
 * The rate recorded with a conversion in another currency than its store's: the rates of the
 * conversion's own day in the store's time zone, else of the latest earlier day (at most 7 days
 * before) on which both currencies have one; none → nothing recorded (NO_FX).
 */
export async function fxFor(
  db: Reader,
  conversion: { event_time: number; value_minor: number; currency: string },
  store: { currency: string; timezone: string },
): Promise<FxColumns> {
  if (conversion.currency === store.currency) return NO_FX;
  const day = dateIn(conversion.event_time, store.timezone);
  const rows = await ratesBetween(db, [conversion.currency, store.currency], addDays(day, -FX_LOOKBACK_DAYS), day);
  const byDate = new Map<string, Map<string, string>>();
  const baseOf = new Map<string, string>();
  for (const row of rows) {
    if (!byDate.has(row.date)) byDate.set(row.date, new Map());
    byDate.get(row.date)?.set(row.currency, row.rate);
    baseOf.set(row.date, row.base);
  }
  for (const [date, rates] of byDate) {
    // Newest day first (the query's order); the base's own rate is 1.
    const base = baseOf.get(date);
    const rateOf = (currency: string) => (currency === base ? '1' : rates.get(currency));
    const from = rateOf(conversion.currency);
    const to = rateOf(store.currency);
    if (!from || !to) continue;
    return {
      fx_currency: store.currency,
      fx_rate_date: date,
      fx_rate: crossRate(from, to),
      fx_value_minor: convertMinor(conversion.value_minor, conversion.currency, from, store.currency, to),
    };
  }
  return NO_FX;
}

/** `fx` of a conversion item: the rate recorded with it and its value in the store currency then. */
export function presentFx(row: FxColumns) {
  return {
    currency: row.fx_currency as string,
    rate: row.fx_rate as string,
    rateDate: row.fx_rate_date as string,
    value: fromMinorUnits(Number(row.fx_value_minor), row.fx_currency as string),
  };
}
