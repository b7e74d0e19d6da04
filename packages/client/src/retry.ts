/** How failed attempts are retried (network errors, timeouts, 429 and 5xx; never other 4xx). */
export interface RetryPolicy {
  maxRetries: number;
  /** First backoff; each retry doubles it, up to `maxDelayMs`. */
  baseDelayMs: number;
  maxDelayMs: number;
}

/**
 * A Retry-After longer than this is not waited for: the error is thrown instead, so a caller is
 * never silently blocked for minutes (and never retries sooner than the server asked).
 */
export const MAX_RETRY_AFTER_MS = 60_000;

export function isRetryableStatus(status: number): boolean {
  return status === 429 || status >= 500;
}

/** Retry-After in milliseconds: delay-seconds or an HTTP date (RFC 9110 §10.2.3); undefined if absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * Wait before retry number `retry` (0 for the first): exponential backoff with "equal jitter"
 * (half fixed, half random), so clients that failed together do not come back together, yet
 * never retry at once. At least the server's Retry-After when it gave one.
 */
export function retryDelay(retry: number, policy: RetryPolicy, retryAfterMs?: number, random = Math.random): number {
  const exponential = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry);
  const jittered = exponential / 2 + random() * (exponential / 2);
  return Math.max(jittered, retryAfterMs ?? 0);
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
