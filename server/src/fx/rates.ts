import { isValidDate } from '../calendar/dates.js';
import { currencyExponent, normalizeCurrency } from '../money.js';

/**
 * Dated exchange rates (docs/operations.md "Exchange rates"): the CSV an operator loads, and
 * exact conversion. Pure: no database, no files.
 *
 * A rate is a decimal string, `rate` units of `currency` for one unit of `base`, kept as given.
 * Converting multiplies integers only (minor units × rate mantissas × powers of ten) and rounds
 * once, half to even, to the target currency's minor units.
 */

export interface FxRate {
  date: string;
  base: string;
  currency: string;
  rate: string;
}

export const FX_HEADER = ['date', 'base', 'currency', 'rate'] as const;
const DECIMAL = /^(\d{1,12})(?:\.(\d{1,12}))?$/;

export class FxFileError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
  }
}

/** The most line errors one load reports (the first ones, in order); the file is refused either way. */
const MAX_PROBLEMS = 50;

/**
 * Parses and validates a whole rates file: a header naming the columns `date, base, currency,
 * rate` (any order), then one rate per line. Every line is checked; any problem refuses the
 * whole file (FxFileError, each problem with its line number). Blank lines are skipped; one
 * (date, currency) twice with different rates is an error, twice with the same rate is one rate.
 */
export function parseRatesCsv(text: string): FxRate[] {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  const problems: string[] = [];
  const headerIndex = lines.findIndex((l) => l.trim() !== '');
  if (headerIndex < 0) throw new FxFileError(['the file is empty: expected a header line "date,base,currency,rate"']);
  const header = (lines[headerIndex] as string).split(',').map((h) => h.trim().toLowerCase());
  const column = Object.fromEntries(FX_HEADER.map((name) => [name, header.indexOf(name)])) as Record<
    (typeof FX_HEADER)[number],
    number
  >;
  const absent = FX_HEADER.filter((name) => column[name] < 0);
  if (absent.length > 0 || header.length !== FX_HEADER.length) {
    throw new FxFileError([
      `line ${headerIndex + 1}: the header must name the columns date,base,currency,rate (got "${lines[headerIndex]}")`,
    ]);
  }
  const rates = new Map<string, FxRate & { line: number }>();
  let base: string | undefined;
  for (let i = headerIndex + 1; i < lines.length; i++) {
    const raw = lines[i] as string;
    if (raw.trim() === '') continue;
    const lineNo = i + 1;
    const problem = (message: string) => problems.push(`line ${lineNo}: ${message}`);
    const cells = raw.split(',').map((c) => c.trim());
    if (cells.length !== FX_HEADER.length) {
      problem(`expected ${FX_HEADER.length} comma-separated values, got ${cells.length}`);
      continue;
    }
    const date = cells[column.date] as string;
    const lineBase = normalizeCurrency(cells[column.base] as string);
    const currency = normalizeCurrency(cells[column.currency] as string);
    const rate = cells[column.rate] as string;
    const before = problems.length;
    if (!isValidDate(date)) problem(`date "${date}" is not a calendar date YYYY-MM-DD`);
    if (!lineBase) problem(`base "${cells[column.base]}" is not an ISO 4217 currency code`);
    if (!currency) problem(`currency "${cells[column.currency]}" is not an ISO 4217 currency code`);
    if (!isPositiveDecimal(rate)) {
      problem(`rate "${rate}" must be a positive decimal number like 1.0843 (at most 12 digits each side of the point)`);
    }
    if (lineBase && currency && lineBase === currency) problem(`currency ${currency} is the base itself (its rate is 1)`);
    if (lineBase && base && lineBase !== base) problem(`base ${lineBase} differs from ${base} on the lines before`);
    // The first valid base is the file's, even on a line with other problems.
    if (lineBase) base ??= lineBase;
    if (problems.length > before || !lineBase || !currency) continue;
    const key = `${date}|${currency}`;
    const seen = rates.get(key);
    if (seen && !sameDecimal(seen.rate, rate)) {
      problem(`${currency} on ${date} is ${rate} here but ${seen.rate} on line ${seen.line}`);
      continue;
    }
    if (!seen) rates.set(key, { date, base: lineBase, currency, rate: canonicalDecimal(rate), line: lineNo });
  }
  if (problems.length > 0) {
    const shown = problems.slice(0, MAX_PROBLEMS);
    if (problems.length > MAX_PROBLEMS) shown.push(`… and ${problems.length - MAX_PROBLEMS} more problems`);
    throw new FxFileError(shown);
  }
  if (rates.size === 0) throw new FxFileError(['the file has a header but no rates']);
  return [...rates.values()].map(({ line: _line, ...rate }) => rate);
}

function isPositiveDecimal(value: string): boolean {
  const match = DECIMAL.exec(value);
  return match !== null && /[1-9]/.test(value);
}

/** Without insignificant zeros: `01.2300` → `1.23`, `5.0` → `5`. */
export function canonicalDecimal(value: string): string {
  const [int = '0', frac = ''] = value.split('.');
  const i = int.replace(/^0+(?=\d)/, '');
  const f = frac.replace(/0+$/, '');
  return f ? `${i}.${f}` : i;
}

export function sameDecimal(a: string, b: string): boolean {
  return canonicalDecimal(a) === canonicalDecimal(b);
}

/** A decimal string as mantissa and scale: `1.0843` → 10843n / 10^4. */
function decimalParts(value: string): { mantissa: bigint; scale: number } {
  const [int = '0', frac = ''] = value.split('.');
  return { mantissa: BigInt(`${int}${frac}`), scale: frac.length };
}

/** `numerator / denominator` (both > 0 except a zero numerator) rounded half to even. */
export function divideHalfEven(numerator: bigint, denominator: bigint): bigint {
  const quotient = numerator / denominator;
  const twice = (numerator % denominator) * 2n;
  if (twice > denominator || (twice === denominator && quotient % 2n === 1n)) return quotient + 1n;
  return quotient;
}

/**
 * `amountMinor` of `from` in minor units of `to`, given both currencies' rates against the same
 * base (`'1'` for the base itself): amount × rate(to) / rate(from), rounded half to even.
 */
export function convertMinor(amountMinor: number, from: string, fromRate: string, to: string, toRate: string): number {
  const f = decimalParts(fromRate);
  const t = decimalParts(toRate);
  const shift = currencyExponent(to) - currencyExponent(from) + f.scale - t.scale;
  let numerator = BigInt(amountMinor) * t.mantissa;
  let denominator = f.mantissa;
  if (shift >= 0) numerator *= 10n ** BigInt(shift);
  else denominator *= 10n ** BigInt(-shift);
  return Number(divideHalfEven(numerator, denominator));
}

/** The cross rate (units of `to` per unit of `from`) as a decimal string of at most 10 decimals, for display. */
export function crossRate(fromRate: string, toRate: string): string {
  const f = decimalParts(fromRate);
  const t = decimalParts(toRate);
  const places = 10;
  const shift = places + f.scale - t.scale;
  let numerator = t.mantissa;
  let denominator = f.mantissa;
  if (shift >= 0) numerator *= 10n ** BigInt(shift);
  else denominator *= 10n ** BigInt(-shift);
  const scaled = divideHalfEven(numerator, denominator)
    .toString()
    .padStart(places + 1, '0');
  return canonicalDecimal(`${scaled.slice(0, -places)}.${scaled.slice(-places)}`);
}
