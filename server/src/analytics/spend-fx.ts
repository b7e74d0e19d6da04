import { addDays } from '../calendar/dates.js';
import type { Reader } from '../db/database.js';
import { ratesBetween } from '../db/repositories/fx.js';
import { convertMinor } from '../fx/rates.js';
import { FX_LOOKBACK_DAYS } from '../fx/record.js';
import { fromMinorUnits } from '../money.js';

/** Spend of one currency on one day, in its minor units. */
export interface DaySpend {
  currency: string;
  date: string;
  total: number;
  entries: number;
}

/** Spend that has no rate to the store currency: per currency, its sum and its days. */
export interface UnconvertedSpend {
  currency: string;
  minor: number;
  days: string[];
}

export interface ConvertedSpend {
  /** Store-currency spend plus every other currency's converted at its day's rate, in minor units. */
  totalMinor: number;
  /** Entries counted into totalMinor (ROAS is null without any). */
  entries: number;
  unconverted: UnconvertedSpend[];
  /** Each other currency's day that had a rate: its total and that total converted (the channel report splits it). */
  convertedDays: Array<{ currency: string; date: string; minor: number }>;
}

/**
 * Spend in the store currency (api.md §11 "Currencies"): each other currency's day converted with
 * the rates `waytrack fx load` keeps for that day (else the latest earlier day within 7 days, as a
 * conversion's rate is chosen: fx/record.ts), exactly (minor units, half to even); a day with no
 * rate is left out and reported.
 */
export async function convertSpend(db: Reader, storeCurrency: string, days: DaySpend[]): Promise<ConvertedSpend> {
  let totalMinor = 0;
  let entries = 0;
  const foreign = days.filter((d) => d.currency !== storeCurrency && d.total !== 0);
  for (const d of days) {
    if (d.currency !== storeCurrency) continue;
    totalMinor += d.total;
    entries += d.entries;
  }
  const unconverted = new Map<string, UnconvertedSpend>();
  const convertedDays: ConvertedSpend['convertedDays'] = [];
  if (foreign.length > 0) {
    const dates = foreign.map((d) => d.date).sort();
    const currencies = [...new Set([storeCurrency, ...foreign.map((d) => d.currency)])];
    const rows = await ratesBetween(
      db,
      currencies,
      addDays(dates[0] as string, -FX_LOOKBACK_DAYS),
      dates[dates.length - 1] as string,
    );
    const byDate = new Map<string, { base: string; rates: Map<string, string> }>();
    for (const row of rows) {
      const day = byDate.get(row.date) ?? { base: row.base, rates: new Map<string, string>() };
      day.rates.set(row.currency, row.rate);
      byDate.set(row.date, day);
    }
    for (const d of foreign) {
      let converted: number | undefined;
      for (let back = 0; back <= FX_LOOKBACK_DAYS && converted === undefined; back++) {
        const day = byDate.get(addDays(d.date, -back));
        if (!day) continue;
        const rateOf = (currency: string) => (currency === day.base ? '1' : day.rates.get(currency));
        const from = rateOf(d.currency);
        const to = rateOf(storeCurrency);
        if (from && to) converted = convertMinor(d.total, d.currency, from, storeCurrency, to);
      }
      if (converted !== undefined) {
        totalMinor += converted;
        entries += d.entries;
        convertedDays.push({ currency: d.currency, date: d.date, minor: converted });
        continue;
      }
      const u = unconverted.get(d.currency) ?? { currency: d.currency, minor: 0, days: [] };
      u.minor += d.total;
      u.days.push(d.date);
      unconverted.set(d.currency, u);
    }
  }
  // A foreign day of zero spend still counts as spend recorded (ROAS 0 spend → null anyway).
  for (const d of days) if (d.currency !== storeCurrency && d.total === 0) entries += d.entries;
  const list = [...unconverted.values()].sort((a, b) => (a.currency < b.currency ? -1 : 1));
  for (const u of list) u.days.sort();
  return { totalMinor, entries, unconverted: list, convertedDays };
}

/** `warnings` entries of spend left out of ROAS: one per currency, naming its days. */
export function spendWarnings(unconverted: UnconvertedSpend[], storeCurrency: string) {
  return unconverted.map((u) => ({
    code: 'spend_not_converted' as const,
    currency: u.currency,
    days: u.days,
    amount: fromMinorUnits(u.minor, u.currency),
    message: `${fromMinorUnits(u.minor, u.currency)} ${u.currency} of ad spend on ${u.days.join(', ')} has no exchange rate to ${storeCurrency} for its day (load rates with waytrack fx load); it is listed under spendByCurrency and left out of adSpend and ROAS`,
  }));
}
