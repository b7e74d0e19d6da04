/**
 * Exact money. Amounts are stored as integer minor units of their currency (cents for USD,
 * yen for JPY, fils for KWD); arithmetic happens on integers, and a JSON number is produced
 * only at the edge, by one division by a power of ten (which prints as the exact decimal).
 */

const CURRENCIES = new Set(Intl.supportedValuesOf('currency'));
const exponents = new Map<string, number>();

/** Upper-cased ISO 4217 code, or null when the platform does not know it. */
export function normalizeCurrency(input: string): string | null {
  const code = input.trim().toUpperCase();
  return /^[A-Z]{3}$/.test(code) && CURRENCIES.has(code) ? code : null;
}

/** Number of minor-unit digits (2 for USD, 0 for JPY, 3 for KWD). */
export function currencyExponent(currency: string): number {
  let exp = exponents.get(currency);
  if (exp === undefined) {
    exp = new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
    exponents.set(currency, exp);
  }
  return exp;
}

/** Rounds `numerator / denominator` half away from zero, both non-negative bigints. */
function roundDiv(numerator: bigint, denominator: bigint): bigint {
  return (numerator * 2n + denominator) / (denominator * 2n);
}

/** The largest amount the API takes (api.md §2: `eventValue` 0 ≤ v ≤ 1e12), the shop webhooks' totals too. */
export const MAX_AMOUNT = 1e12;

/** A decimal exactly as written: `digits × 10^-scale` (scale < 0 for a positive exponent). */
export interface Decimal {
  negative: boolean;
  digits: bigint;
  scale: number;
}

const DECIMAL = /^(-)?(\d{1,40})(?:\.(\d{1,40}))?(?:[eE]([+-]?\d{1,3}))?$/;

/**
 * The one decimal parser of money (the API's JSON numbers, by their text, and the shops'
 * amounts, `"49.99"`): a JSON number or plain decimal text → its exact value, or null. Never
 * through a binary double, so `999999999.99949999` stays itself instead of becoming …9995.
 */
export function parseDecimal(text: string): Decimal | null {
  const match = DECIMAL.exec(text.trim());
  if (!match) return null;
  const [, sign, intPart = '', fracPart = '', expPart = '0'] = match;
  return { negative: sign === '-', digits: BigInt(`${intPart}${fracPart}`), scale: fracPart.length - Number(expPart) };
}

/** Whether |d| is above `limit` (an integer), compared exactly. */
export function decimalExceeds(d: Decimal, limit: number): boolean {
  const bound = BigInt(limit);
  return d.scale >= 0 ? d.digits > bound * 10n ** BigInt(d.scale) : d.digits * 10n ** BigInt(-d.scale) > bound;
}

/** |d| in the currency's minor units, rounded half away from zero (1.005 USD → 101). */
export function decimalToMinor(d: Decimal, currency: string): bigint {
  const shift = currencyExponent(currency) - d.scale; // |d| × 10^exp = digits × 10^shift
  return shift >= 0 ? d.digits * 10n ** BigInt(shift) : roundDiv(d.digits, 10n ** BigInt(-shift));
}

/**
 * A non-negative amount → integer minor units, rounded half-up to the currency's exponent, so
 * 19.99 → 1999 and 1.005 USD → 101. A number is read through its shortest decimal text (what
 * the client wrote, when the JSON reader has no exact text of it: json-reader.ts); a string is
 * decimal text, read exactly.
 */
export function toMinorUnits(value: number | string, currency: string): number {
  const parsed = parseDecimal(typeof value === 'number' ? String(value) : value);
  if (!parsed || parsed.negative) throw new RangeError(`not a non-negative finite amount: ${value}`);
  return Number(decimalToMinor(parsed, currency));
}

/** Integer minor units → JSON number in major units (exact decimal). */
export function fromMinorUnits(minor: number, currency: string): number {
  return minor / 10 ** currencyExponent(currency);
}

/** `numerator / denominator` rounded half-up to 2 decimals; 0 when the denominator is 0. */
export function ratio2(numerator: number | bigint, denominator: number | bigint): number {
  const den = BigInt(denominator);
  if (den === 0n) return 0;
  return Number(roundDiv(BigInt(numerator) * 100n, den)) / 100;
}

/** Average of `totalMinor` over `count` items, in major units rounded to 2 decimals. */
export function averageMajor(totalMinor: number, count: number, currency: string): number {
  if (count === 0) return 0;
  return ratio2(totalMinor, BigInt(count) * 10n ** BigInt(currencyExponent(currency)));
}

/** `a / b` of two minor-unit amounts of the same currency, 2 decimals; null when b is 0. */
export function moneyRatio(a: number, b: number): number | null {
  return b === 0 ? null : ratio2(a, b);
}
