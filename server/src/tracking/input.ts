import { isIP } from 'node:net';
import { isValidDate } from '../calendar/dates.js';
import { invalid } from '../http/errors.js';

/** Field checks shared by the tracking endpoints, beyond what the JSON schemas express. */

export const FUTURE_TOLERANCE_MS = 5 * 60 * 1000;
const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;

/** An ISO 8601 date-time with an explicit offset → epoch ms; at most 5 minutes in the future. */
export function parseEventTime(field: string, value: string | undefined, now: number): number {
  if (value === undefined) return now;
  // Date.parse rolls impossible days over (2026-02-30 → March 2); refuse them instead.
  const ms = ISO_8601.test(value) && isValidDate(value.slice(0, 10)) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms)) {
    throw invalid(field, 'invalid_format', `${field} must be an ISO 8601 date-time with a time zone, like 2026-11-22T10:00:00Z`);
  }
  if (ms > now + FUTURE_TOLERANCE_MS) throw invalid(field, 'out_of_range', `${field} is more than 5 minutes in the future`);
  return ms;
}

/** An absolute http(s) URL. */
/** The URL, parsed once, when it is an absolute http(s) URL; else `invalid_url` on `field`. */
export function checkHttpUrl(field: string, value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalid(field, 'invalid_url', `${field} must be an absolute http(s) URL`);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || !url.hostname) {
    throw invalid(field, 'invalid_url', `${field} must be an absolute http(s) URL`);
  }
  return url;
}

export function checkIpAddress(field: string, value: string): void {
  if (isIP(value) === 0) throw invalid(field, 'invalid_format', `${field} must be a valid IPv4 or IPv6 address`);
}
