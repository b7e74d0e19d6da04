/** Calendar dates (YYYY-MM-DD) in a store's IANA time zone, and the UTC instants they start at. */
import { zoneOf } from './zone.js';

const DAY_MS = 86_400_000;

/** The canonical IANA name of a time zone, or null when the platform does not know it. */
export function canonicalTimeZone(timeZone: string): string | null {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}

export function isValidDate(date: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  if (!match) return false;
  const [y, m, d] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const t = new Date(Date.UTC(y, m - 1, d));
  return t.getUTCFullYear() === y && t.getUTCMonth() === m - 1 && t.getUTCDate() === d;
}

/**
 * The UTC instant at which `date` begins in `timeZone` (handles DST days of 23 or 25 hours, and
 * days whose midnight is skipped, which begin when the clocks jump).
 */
export function startOfDay(date: string, timeZone: string): number {
  return zoneOf(timeZone).dayStart(date);
}

/** The calendar date of an instant in a zone. */
export function dateIn(ms: number, timeZone: string): string {
  return zoneOf(timeZone).date(ms);
}

export function addDays(date: string, days: number): string {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(y, m - 1, d) + days * DAY_MS).toISOString().slice(0, 10);
}

/** Whole days from `start` to `end` (0 when equal). */
export function daysBetween(start: string, end: string): number {
  return Math.round((Date.parse(`${end}T00:00:00Z`) - Date.parse(`${start}T00:00:00Z`)) / DAY_MS);
}
