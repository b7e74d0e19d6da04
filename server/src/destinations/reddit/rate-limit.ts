/**
 * Reddit documents 10 Conversions API calls a second per ad account: every request to one ad
 * account goes through this process-wide limiter. Each key has `limit` tokens; a request takes
 * one before it starts and gives it back when its answer (or error) is in, and a token given back
 * is usable again only `windowMs` later. So no two requests `limit` apart are less than
 * `windowMs` apart — counted from the earlier one's answer, which came after Reddit received it,
 * to the later one's start, before Reddit receives it — and no window of `windowMs` at Reddit
 * ever holds more than `limit` of them, whatever the network's delays.
 */
export interface RateLimiter {
  /** Resolves with the release to call once the request is answered, when the next request for `key` may start. */
  acquire(key: string): Promise<() => void>;
}

export function tokenLimiter(
  limit: number,
  windowMs: number,
  options: { now?: () => number; sleep?: (ms: number) => Promise<void> } = {},
): RateLimiter {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  /** Per key: when each token is usable again (Infinity while a request holds it); at most `limit` numbers an ad account. */
  const buckets = new Map<string, { tokens: number[]; waiters: Array<() => void> }>();
  return {
    async acquire(key) {
      let bucket = buckets.get(key);
      if (!bucket) {
        bucket = { tokens: Array(limit).fill(0), waiters: [] };
        buckets.set(key, bucket);
      }
      const { tokens, waiters } = bucket;
      for (;;) {
        const at = now();
        const ready = Math.min(...tokens);
        const index = tokens.indexOf(ready);
        if (ready <= at) {
          tokens[index] = Number.POSITIVE_INFINITY;
          let released = false;
          return () => {
            if (released) return;
            released = true;
            tokens[index] = now() + windowMs;
            for (const wake of waiters.splice(0)) wake();
          };
        }
        // Every token is held: wait for one to come back; else for the first to be usable.
        if (ready === Number.POSITIVE_INFINITY) await new Promise<void>((resolve) => waiters.push(resolve));
        else await sleep(ready - at);
      }
    },
  };
}

/** Reddit's limit, shared by every Reddit destination of this process (keyed by ad account). */
export const REDDIT_CALLS_PER_SECOND = 10;
export const redditLimiter = tokenLimiter(REDDIT_CALLS_PER_SECOND, 1000);
