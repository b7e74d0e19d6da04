import { describe, expect, it } from 'vitest';
import {
  attemptTimeoutMs,
  type Candidate,
  DEFAULT_TIMEOUTS,
  type FairShare,
  planClaims,
  type Rotation,
} from '../../src/webhooks/fair-share.js';

// Who gets the free request slots (webhooks/fair-share.ts): pure, so every rule is checked exactly.

const SHARE: FairShare = { perEndpoint: 2, perAccount: 8 };
const rotation = (): Rotation => ({ account: '', endpoints: new Map() });
const none = () => 0;

/** `n` endpoints of `account`, named `<account>-<i>`, with nothing in flight. */
const endpoints = (account: string, n: number, inFlight = 0): Candidate[] =>
  Array.from({ length: n }, (_, i) => ({ webhookId: `${account}-${String(i).padStart(2, '0')}`, accountId: account, inFlight }));

const total = (plan: Map<string, number>, prefix = '') =>
  [...plan].filter(([id]) => id.startsWith(prefix)).reduce((sum, [, n]) => sum + n, 0);

describe('planClaims', () => {
  it('gives one account its share of the pool and no more, however many endpoints it has', () => {
    const plan = planClaims(endpoints('a', 20), 32, SHARE, none, rotation());
    expect(total(plan)).toBe(8);
    expect(Math.max(...plan.values())).toBe(1); // spread over its endpoints, one each
  });

  it('serves an account with nothing in flight although another has older messages and more endpoints', () => {
    // A already holds its share in this instance: B gets the slots.
    const inFlight = (account: string) => (account === 'a' ? 8 : 0);
    const plan = planClaims([...endpoints('a', 20), ...endpoints('b', 1)], 5, SHARE, inFlight, rotation());
    expect(total(plan, 'a')).toBe(0);
    expect(plan.get('b-00')).toBe(2); // its endpoint's limit
  });

  it('levels accounts: the next slot goes to the one with the fewest in flight', () => {
    const inFlight = (account: string) => ({ a: 5, b: 1, c: 0 })[account] ?? 0;
    const plan = planClaims([...endpoints('a', 4), ...endpoints('b', 4), ...endpoints('c', 4)], 6, SHARE, inFlight, rotation());
    // c: 0 → 1 → 2 → 3, b: 1 → 2 → 3, the sixth to whichever the ring reaches first at 3 (not a: 5).
    expect(total(plan, 'a')).toBe(0);
    expect(total(plan, 'b') + total(plan, 'c')).toBe(6);
    expect(Math.abs(total(plan, 'b') + 1 - total(plan, 'c'))).toBeLessThanOrEqual(1);
  });

  it('never plans past an endpoint limit, counting what other instances hold', () => {
    const candidates: Candidate[] = [
      { webhookId: 'a-1', accountId: 'a', inFlight: 2 },
      { webhookId: 'a-2', accountId: 'a', inFlight: 1 },
    ];
    const plan = planClaims(candidates, 10, SHARE, none, rotation());
    expect(plan.get('a-1')).toBeUndefined();
    expect(plan.get('a-2')).toBe(1);
  });

  it('takes turns round the accounts from one look to the next, one slot at a time', () => {
    const ring = rotation();
    const candidates = [...endpoints('a', 2), ...endpoints('b', 2), ...endpoints('c', 2)];
    const served = Array.from({ length: 6 }, () => {
      const plan = planClaims(candidates, 1, SHARE, none, ring);
      return [...plan.keys()][0];
    });
    expect(served.map((id) => id?.[0])).toEqual(['a', 'b', 'c', 'a', 'b', 'c']);
    // And round each account's endpoints.
    expect(served.filter((id) => id?.startsWith('a'))).toEqual(['a-00', 'a-01']);
  });

  it('plans nothing without free slots or candidates', () => {
    expect(planClaims(endpoints('a', 3), 0, SHARE, none, rotation()).size).toBe(0);
    expect(planClaims([], 8, SHARE, none, rotation()).size).toBe(0);
  });
});

describe('attempt timeouts', () => {
  it('are 15 s, then 5 s after 3 timeouts in a row, 2 s after 6; a probe gets the full 15 s', () => {
    const at = (n: number, probe = false) => attemptTimeoutMs(DEFAULT_TIMEOUTS, n, probe);
    expect([0, 1, 2, 3, 4, 5, 6, 50].map((n) => at(n))).toEqual([15_000, 15_000, 15_000, 5000, 5000, 5000, 2000, 2000]);
    expect(at(7, true)).toBe(15_000);
  });
});
