/**
 * The fbclids this browser has already sent (kept in localStorage): a click is sent once per
 * fbclid per browser, so reloads and returns to the landing page send nothing new.
 */

/** Enough for every ad a person clicks in months; the oldest are forgotten first. */
export const MAX_REMEMBERED = 50;

export function parseSent(stored: string | null): string[] {
  if (!stored) return [];
  try {
    const value: unknown = JSON.parse(stored);
    return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
  } catch {
    return [];
  }
}

/** The list with `fbclid` added last (once), trimmed to the newest MAX_REMEMBERED. */
export function withSent(list: readonly string[], fbclid: string): string[] {
  const next = list.filter((v) => v !== fbclid);
  next.push(fbclid);
  return next.slice(-MAX_REMEMBERED);
}
