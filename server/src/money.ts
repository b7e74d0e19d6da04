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

/**
 * Converts a non-negative JSON number to integer minor units. The number is read through its
 * shortest decimal representation (what the client wrote), then rounded half-up to the
 * currency's exponent, so 19.99 → 1999 and 1.005 USD → 101 without binary float error.
 */
export function toMinorUnits(value: number, currency: string): number {
  const exp = currencyExponent(currency);
  const match = /^(\d+)(?:\.(\d+))?(?:e([+-]?\d+))?$/.exec(String(value));
  if (!match) throw new RangeError(`not a non-negative finite number: ${value}`);
  const [, intPart, fracPart = '', expPart = '0'] = match;
  const digits = BigInt(`${intPart}${fracPart}`);
  const scale = Number(expPart) - fracPart.length + exp; // value × 10^exp = digits × 10^scale
  const minor = scale >= 0 ? digits * 10n ** BigInt(scale) : roundDiv(digits, 10n ** BigInt(-scale));
  return Number(minor);
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
