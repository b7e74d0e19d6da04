/**
 * When a failed message is tried again (api.md §9): 5 s, 30 s, 2 min, 10 min, 1 h after the
 * attempts 1–5, then every 6 h, until 3 days after the event; every figure times
 * WEBHOOK_RETRY_SCALE. No jitter: the schedule is the documented one.
 */
const FIRST_DELAYS_MS = [5_000, 30_000, 120_000, 600_000, 3_600_000];
const LATER_DELAY_MS = 6 * 3_600_000;
export const RETRY_LIMIT_MS = 3 * 24 * 3_600_000;

/** The delay after the `attempt`-th failed attempt (1-based). */
export function retryDelayMs(attempt: number, scale: number): number {
  return Math.round((FIRST_DELAYS_MS[attempt - 1] ?? LATER_DELAY_MS) * scale);
}

/** The next attempt's time, or undefined when it would fall after the limit (give up). */
export function nextAttemptAt(createdAt: number, attempt: number, now: number, scale: number): number | undefined {
  const next = now + retryDelayMs(attempt, scale);
  return next > createdAt + Math.round(RETRY_LIMIT_MS * scale) ? undefined : next;
}
