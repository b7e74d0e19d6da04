/**
 * Who gets the dispatcher's free request slots (docs/operations.md "Webhooks out: fairness").
 * Pure functions: the dispatcher gives them what the database said and what it has in flight.
 */

export interface FairShare {
  /** Requests in flight to one endpoint at most, across every instance (counted in the database). */
  perEndpoint: number;
  /** Requests in flight for one account at most, in this instance's pool. */
  perAccount: number;
}

/** An endpoint with at least one due message. */
export interface Candidate {
  webhookId: string;
  accountId: string;
  /** Its requests in flight now (leased messages, every instance's). */
  inFlight: number;
}

/** Where the last look stopped: ties go to the next account (and endpoint) after these. */
export interface Rotation {
  account: string;
  /** Per account, the endpoint last given a slot. */
  endpoints: Map<string, string>;
}

/** `ids` sorted, those after `after` first, then the rest from the start (a ring). */
function ringOrder(ids: string[], after: string | undefined): string[] {
  const sorted = [...ids].sort();
  if (after === undefined) return sorted;
  const start = sorted.findIndex((id) => id > after);
  return start <= 0 ? sorted : [...sorted.slice(start), ...sorted.slice(0, start)];
}

/**
 * Hands `free` slots out one at a time, each to the account with the fewest requests in flight
 * (this instance's, plus those handed out in this plan) that is under its share and has an
 * endpoint under its limit; within it, to its endpoint with the fewest in flight. Ties go round
 * the ring from where the last plan stopped, so accounts (and an account's endpoints) take turns
 * however their messages' due times compare. An account that floods or hangs gets its share and
 * no more; one with nothing in flight is served first.
 *
 * Returns how many messages to claim per endpoint; `rotation` is moved on to where this plan stopped.
 */
export function planClaims(
  candidates: Candidate[],
  free: number,
  share: FairShare,
  accountInFlight: (accountId: string) => number,
  rotation: Rotation,
): Map<string, number> {
  const byAccount = new Map<string, Candidate[]>();
  for (const candidate of candidates) {
    const list = byAccount.get(candidate.accountId) ?? [];
    list.push(candidate);
    byAccount.set(candidate.accountId, list);
  }
  const accounts = ringOrder([...byAccount.keys()], rotation.account).map((accountId) => {
    const endpoints = byAccount.get(accountId) as Candidate[];
    const order = ringOrder(
      endpoints.map((e) => e.webhookId),
      rotation.endpoints.get(accountId),
    );
    const byId = new Map(endpoints.map((e) => [e.webhookId, e]));
    return {
      accountId,
      load: accountInFlight(accountId),
      endpoints: order.map((id) => ({ id, load: (byId.get(id) as Candidate).inFlight })),
    };
  });
  const plan = new Map<string, number>();
  for (let left = free; left > 0; left--) {
    let chosen: { account: (typeof accounts)[number]; endpoint: { id: string; load: number } } | undefined;
    for (const account of accounts) {
      if (account.load >= share.perAccount || (chosen && account.load >= chosen.account.load)) continue;
      let best: { id: string; load: number } | undefined;
      for (const endpoint of account.endpoints) {
        if (endpoint.load < share.perEndpoint && (!best || endpoint.load < best.load)) best = endpoint;
      }
      if (best) chosen = { account, endpoint: best };
    }
    if (!chosen) break;
    chosen.account.load++;
    chosen.endpoint.load++;
    plan.set(chosen.endpoint.id, (plan.get(chosen.endpoint.id) ?? 0) + 1);
    // The next tie goes to the one after: move the chosen to the back of its ring.
    accounts.push(...accounts.splice(accounts.indexOf(chosen.account), 1));
    const endpoints = chosen.account.endpoints;
    endpoints.push(...endpoints.splice(endpoints.indexOf(chosen.endpoint), 1));
    rotation.account = chosen.account.accountId;
    rotation.endpoints.set(chosen.account.accountId, chosen.endpoint.id);
  }
  return plan;
}

/** Attempt timeouts: the full one, then shorter for an endpoint that keeps timing out. */
export interface TimeoutLadder {
  /** 15 s: api.md §9's. */
  fullMs: number;
  /** After SHORTER_AFTER timeouts in a row. */
  shortMs: number;
  /** After SHORTEST_AFTER timeouts in a row. */
  shortestMs: number;
  /** While shortened, one attempt this often gets the full timeout (a slow endpoint can recover). */
  probeEveryMs: number;
}

export const SHORTER_AFTER = 3;
export const SHORTEST_AFTER = 6;

export const DEFAULT_TIMEOUTS: TimeoutLadder = {
  fullMs: 15_000,
  shortMs: 5_000,
  shortestMs: 2_000,
  probeEveryMs: 10 * 60_000,
};

/** The timeout of an attempt to an endpoint whose last `timeoutsInRow` attempts timed out. */
export function attemptTimeoutMs(ladder: TimeoutLadder, timeoutsInRow: number, probe: boolean): number {
  if (probe || timeoutsInRow < SHORTER_AFTER) return ladder.fullMs;
  return timeoutsInRow < SHORTEST_AFTER ? ladder.shortMs : ladder.shortestMs;
}
