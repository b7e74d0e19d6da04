import { addDays, dateIn, daysBetween, isValidDate, startOfDay } from '../calendar/dates.js';
import { invalid } from '../http/errors.js';

export const DEFAULT_RANGE_DAYS = 30;
export const MAX_RANGE_DAYS = 731;

export interface ResolvedRange {
  startDate: string;
  endDate: string;
  timezone: string;
  from: number; // UTC ms, inclusive
  to: number; // UTC ms, exclusive (start of the day after endDate)
}

/**
 * Inclusive `startDate`..`endDate` in a store's zone → UTC instants. Defaults to the 30 days
 * ending today (in that zone); a missing start is 29 days before the end.
 */
export function resolveRange(
  input: { startDate?: string; endDate?: string },
  timezone: string,
  now: number,
  maxDays = MAX_RANGE_DAYS,
): ResolvedRange {
  checkDates(input, maxDays);
  const endDate =
    input.endDate ?? (input.startDate ? maxDate(input.startDate, dateIn(now, timezone), maxDays) : dateIn(now, timezone));
  // Defaulted ranges are in order and within maxDays by construction; given ones were checked above.
  const startDate = input.startDate ?? addDays(endDate, -(DEFAULT_RANGE_DAYS - 1));
  return { startDate, endDate, timezone, from: startOfDay(startDate, timezone), to: startOfDay(addDays(endDate, 1), timezone) };
}

/**
 * The date checks that need no store, so a request is validated before its store is looked up
 * (api.md: validation → resource lookup): calendar dates, and order and span when both are given.
 */
export function checkDates(input: { startDate?: string; endDate?: string }, maxDays = MAX_RANGE_DAYS): void {
  for (const field of ['startDate', 'endDate'] as const) {
    const value = input[field];
    if (value !== undefined && !isValidDate(value)) {
      throw invalid(field, 'invalid_format', `${field} must be a calendar date YYYY-MM-DD`);
    }
  }
  const { startDate, endDate } = input;
  if (startDate === undefined || endDate === undefined) return;
  if (startDate > endDate) throw invalid('startDate', 'out_of_range', 'startDate must not be after endDate');
  if (daysBetween(startDate, endDate) + 1 > maxDays) {
    throw invalid('endDate', 'out_of_range', `the range may cover at most ${maxDays} days`);
  }
}

/** With only a start given, the range runs to today, or to the longest range allowed, whichever is first. */
function maxDate(startDate: string, today: string, maxDays: number): string {
  const limit = addDays(startDate, maxDays - 1);
  return today < startDate ? startDate : today < limit ? today : limit;
}
