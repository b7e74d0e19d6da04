// Numbers and times as people read them, in the browser's language.

const locale = typeof navigator === 'undefined' ? 'en-US' : navigator.language;
const integerFormat = new Intl.NumberFormat(locale);
const currencyFormats = new Map<string, Intl.NumberFormat>();

export function formatInteger(value: number): string {
  return integerFormat.format(value);
}

/** `$1,234.50`, `€12.00`, `¥1,200`: the currency's own symbol and decimals. */
export function formatMoney(value: number, currency: string): string {
  let format = currencyFormats.get(currency);
  if (!format) {
    try {
      format = new Intl.NumberFormat(locale, { style: 'currency', currency });
    } catch {
      // A code the browser does not know still reads as an amount.
      return `${value.toFixed(2)} ${currency}`;
    }
    currencyFormats.set(currency, format);
  }
  return format.format(value);
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
