// Numbers and times as people read them, in the browser's language.

const locale = typeof navigator === 'undefined' ? 'en-US' : navigator.language;
const integerFormat = new Intl.NumberFormat(locale);
const currencyFormats = new Map<string, Intl.NumberFormat>();

export function formatInteger(value: number): string {
  return integerFormat.format(value);
}

/** A decimal amount as text (`"29.91"`): what exact money arithmetic below returns. */
export type Decimal = `${number}`;

/**
 * `$1,234.50`, `€12.00`, `¥1,200`: the currency's own symbol and decimals. A Decimal string is
 * formatted exactly as written (Intl formats numeric strings without a detour through a double).
 */
export function formatMoney(value: number | Decimal, currency: string): string {
  let format = currencyFormats.get(currency);
  if (!format) {
    try {
      format = new Intl.NumberFormat(locale, { style: 'currency', currency });
    } catch {
      // A code the browser does not know still reads as an amount.
      return `${typeof value === 'number' ? value.toFixed(2) : value} ${currency}`;
    }
    currencyFormats.set(currency, format);
  }
  return format.format(value);
}

/** The currency's minor-unit digits (USD 2, JPY 0, KWD 3), as the browser knows them; 2 otherwise. */
function minorDigits(currency: string): number {
  try {
    return new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
  } catch {
    return 2;
  }
}

/**
 * An amount of the API (exact in the currency's minor units, sent as a JSON number) as an
 * integer count of minor units, read from its decimal text: 49.99 → 4999n, never 49.99 × 100.
 */
export function toMinorUnits(value: number, digits: number): bigint {
  const text = String(value);
  const match = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text);
  if (!match) throw new RangeError(`not a plain decimal amount: ${text}`);
  const [, sign = '', whole = '0', fraction = ''] = match;
  if (fraction.length > digits) throw new RangeError(`${text} has more than ${digits} decimals`);
  return BigInt(`${sign}${whole}${fraction.padEnd(digits, '0')}`);
}

/** Minor units back to decimal text with the currency's digits: 2991n → "29.91". */
export function fromMinorUnits(units: bigint, digits: number): Decimal {
  const negative = units < 0n;
  const text = (negative ? -units : units).toString().padStart(digits + 1, '0');
  const whole = text.slice(0, text.length - digits);
  const fraction = digits > 0 ? `.${text.slice(text.length - digits)}` : '';
  return `${negative ? '-' : ''}${whole}${fraction}` as Decimal;
}

/** `a − b` in `currency`, exactly (in minor units): what is left of an order after its refunds. */
export function subtractMoney(a: number, b: number, currency: string): Decimal {
  const digits = minorDigits(currency);
  return fromMinorUnits(toMinorUnits(a, digits) - toMinorUnits(b, digits), digits);
}

/** The API's percentages are already × 100: 12.5 → `12.5%`. */
export function formatPercent(value: number): string {
  return new Intl.NumberFormat(locale, { style: 'percent', maximumFractionDigits: 2 }).format(value / 100);
}

/** Return on ad spend: `3.25×`, or `—` when no spend was recorded (the API's null). */
export function formatRoas(value: number | null): string {
  return value === null
    ? '—'
    : `${new Intl.NumberFormat(locale, { maximumFractionDigits: 2, minimumFractionDigits: 2 }).format(value)}×`;
}

const dateTime = new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short' });
const dateOnly = new Intl.DateTimeFormat(locale, { dateStyle: 'medium' });

export function formatDateTime(iso: string): string {
  return dateTime.format(new Date(iso));
}

export function formatDate(iso: string): string {
  return dateOnly.format(new Date(iso));
}

/** Today's date (YYYY-MM-DD) in an IANA time zone: a store's "today". */
export function todayIn(timeZone: string, now = new Date()): string {
  try {
    return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(now);
  } catch {
    return now.toISOString().slice(0, 10);
  }
}

/** YYYY-MM-DD plus `days` (negative to go back). */
export function addDays(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}
