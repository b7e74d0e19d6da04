import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fbclidFromFbc } from '../../src/attribution/evidence.js';
import {
  type AttributionPolicy,
  attribute,
  CLICK_AFTER_CONVERSION_TOLERANCE_MS,
  type ClickFacts,
  type ConversionFacts,
  explainMiss,
  isCandidate,
  SCORE_BANDS,
  SIGNALS,
  type Signal,
  scoreCandidates,
  scoreOf,
  strongestSignal,
} from '../../src/attribution/model.js';

const DAY = 86_400_000;
const MINUTE = 60_000;
const T = Date.UTC(2026, 10, 22, 12, 0, 0);
const POLICY: AttributionPolicy = { windowDays: 7, minConfidence: 50 };

const click = (id: string, clickTime: number, overrides: Partial<ClickFacts> = {}): ClickFacts => ({
  id,
  fbclid: `fb_${id}`,
  storeId: 'st_a',
  livemode: true,
  clickTime,
  isBot: false,
  fingerprint: null,
  derivedFingerprint: null,
  ipAddress: null,
  userAgent: null,
  ...overrides,
});

const conversion = (overrides: Partial<ConversionFacts> = {}): ConversionFacts => ({
  storeId: 'st_a',
  livemode: true,
  time: T,
  fbclids: [],
  identityClickIds: new Set(),
  ...overrides,
});

describe('candidates', () => {
  it('accept clicks up to exactly the window before and 5 minutes after the conversion', () => {
    const conv = conversion();
    expect(isCandidate(click('a', T - 7 * DAY), conv, 7)).toBe(true);
    expect(isCandidate(click('a', T - 7 * DAY - 1), conv, 7)).toBe(false);
    expect(isCandidate(click('a', T - 8 * DAY), conv, 30)).toBe(true);
    expect(CLICK_AFTER_CONVERSION_TOLERANCE_MS).toBe(5 * MINUTE);
    expect(isCandidate(click('a', T + 5 * MINUTE), conv, 7)).toBe(true);
    expect(isCandidate(click('a', T + 5 * MINUTE + 1), conv, 7)).toBe(false);
  });

  it('exclude bots, other stores and the other mode', () => {
    const conv = conversion();
    expect(isCandidate(click('a', T - MINUTE, { isBot: true }), conv, 7)).toBe(false);
    expect(isCandidate(click('a', T - MINUTE, { storeId: 'st_b' }), conv, 7)).toBe(false);
    expect(isCandidate(click('a', T - MINUTE, { livemode: false }), conv, 7)).toBe(false);
  });
});

describe('signals', () => {
  const ip = '203.0.113.7';
  const ua = 'Mozilla/5.0';
  it('recognise each signal, strongest first', () => {
    expect(strongestSignal(click('a', T, { fbclid: 'X' }), conversion({ fbclids: ['X'] }))).toBe('explicit');
    expect(strongestSignal(click('a', T), conversion({ clickId: 'a' }))).toBe('explicit');
    expect(strongestSignal(click('a', T, { fingerprint: 'fp' }), conversion({ fingerprint: 'fp' }))).toBe('fingerprint');
    expect(strongestSignal(click('a', T, { derivedFingerprint: 'd' }), conversion({ fingerprint: 'd' }))).toBe('ip_user_agent');
    expect(strongestSignal(click('a', T, { ipAddress: ip, userAgent: ua }), conversion({ ipAddress: ip, userAgent: ua }))).toBe(
      'ip_user_agent',
    );
    expect(strongestSignal(click('a', T), conversion({ identityClickIds: new Set(['a']) }))).toBe('identity');
    expect(
      strongestSignal(click('a', T, { ipAddress: ip, userAgent: 'other' }), conversion({ ipAddress: ip, userAgent: ua })),
    ).toBe('ip');
    expect(strongestSignal(click('a', T, { ipAddress: ip }), conversion({ ipAddress: '198.51.100.1' }))).toBeNull();
    // A click that matches several signals gets the strongest.
    expect(
      strongestSignal(
        click('a', T, { fingerprint: 'fp', ipAddress: ip, userAgent: ua }),
        conversion({ fingerprint: 'fp', ipAddress: ip, userAgent: ua }),
      ),
    ).toBe('fingerprint');
  });

  it('score within non-overlapping bands that decay with age; only explicit reaches 100', () => {
    expect(scoreOf('explicit', 6 * DAY, 7)).toBe(100);
    expect(scoreOf('fingerprint', 0, 7)).toBe(95);
    expect(scoreOf('fingerprint', 7 * DAY, 7)).toBe(80);
    expect(scoreOf('ip_user_agent', 0, 7)).toBe(79);
    expect(scoreOf('identity', 7 * DAY, 7)).toBe(50);
    expect(scoreOf('ip', 0, 7)).toBe(49);
    expect(scoreOf('ip', 7 * DAY, 7)).toBe(30);
    // The documented worked example: a fingerprint match 2 days into a 7-day window.
    expect(scoreOf('fingerprint', 2 * DAY, 7)).toBe(91);
    for (let i = 0; i < SIGNALS.length - 1; i++) {
      expect(SCORE_BANDS[SIGNALS[i] as Signal].min).toBeGreaterThan(SCORE_BANDS[SIGNALS[i + 1] as Signal].max);
    }
  });

  it('reads the fbclid inside an fbc value', () => {
    expect(fbclidFromFbc('fb.1.1700000000000.IwAR.x-Y_z')).toBe('IwAR.x-Y_z');
    expect(fbclidFromFbc('fb.1.abc.IwAR')).toBeUndefined();
    expect(fbclidFromFbc('IwAR')).toBeUndefined();
  });
});

describe('attribute', () => {
  it('picks the strongest signal, keeps every candidate at or above the threshold as a touchpoint', () => {
    const result = attribute(
      conversion({ fingerprint: 'fp', ipAddress: '1.1.1.1', fbclids: ['fb_old'] }),
      [
        click('fp', T - MINUTE, { fingerprint: 'fp' }),
        click('old', T - 6 * DAY),
        click('ip', T - MINUTE, { ipAddress: '1.1.1.1' }), // ip scores 49 < 50: not a touchpoint
      ],
      POLICY,
    );
    expect(result.winner).toMatchObject({ clickId: 'old', signal: 'explicit', score: 100 });
    expect(result.touchpoints.map((t) => [t.clickId, t.signal])).toEqual([
      ['old', 'explicit'],
      ['fp', 'fingerprint'],
    ]);
  });

  it('attributes nothing below minConfidence', () => {
    const conv = conversion({ ipAddress: '1.1.1.1' });
    const clicks = [click('ip', T - MINUTE, { ipAddress: '1.1.1.1' })];
    expect(attribute(conv, clicks, POLICY).winner).toBeNull();
    expect(attribute(conv, clicks, { windowDays: 7, minConfidence: 30 }).winner).toMatchObject({ clickId: 'ip', signal: 'ip' });
  });

  it('breaks ties toward the most recent click', () => {
    const conv = conversion({ fingerprint: 'fp' });
    const result = attribute(
      conv,
      [click('b', T - 2 * MINUTE, { fingerprint: 'fp' }), click('a', T - MINUTE, { fingerprint: 'fp' })],
      POLICY,
    );
    expect(result.winner?.clickId).toBe('a');
  });
});

// Properties over random click/conversion histories (fast-check).
const ids = ['c0', 'c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7'];
const arbClick = fc.record({
  id: fc.constantFrom(...ids),
  fbclid: fc.constantFrom('f0', 'f1', 'f2', 'f3'),
  storeId: fc.constantFrom('st_a', 'st_b'),
  livemode: fc.boolean(),
  clickTime: fc.integer({ min: T - 40 * DAY, max: T + 10 * MINUTE }),
  isBot: fc.boolean(),
  fingerprint: fc.constantFrom(null, 'fp1', 'fp2'),
  derivedFingerprint: fc.constantFrom(null, 'd1', 'd2'),
  ipAddress: fc.constantFrom(null, '1.1.1.1', '2.2.2.2'),
  userAgent: fc.constantFrom(null, 'ua1', 'ua2'),
});
const arbClicks = fc.uniqueArray(arbClick, { selector: (c) => c.id, maxLength: 8 });
const arbConversion = fc.record({
  storeId: fc.constant('st_a'),
  livemode: fc.boolean(),
  time: fc.constant(T),
  fbclids: fc.subarray(['f0', 'f1', 'f2', 'f3'], { maxLength: 2 }),
  clickId: fc.option(fc.constantFrom(...ids), { nil: undefined }),
  fingerprint: fc.option(fc.constantFrom('fp1', 'fp2', 'd1', 'd2'), { nil: undefined }),
  ipAddress: fc.option(fc.constantFrom('1.1.1.1', '2.2.2.2'), { nil: undefined }),
  userAgent: fc.option(fc.constantFrom('ua1', 'ua2'), { nil: undefined }),
  identityClickIds: fc.subarray(ids, { maxLength: 3 }).map((a) => new Set(a)),
});
const arbPolicy = fc.record({ windowDays: fc.integer({ min: 1, max: 90 }), minConfidence: fc.integer({ min: 0, max: 100 }) });
const rank = (s: Signal) => SIGNALS.indexOf(s);

describe('attribution properties', () => {
  it('a stronger signal always beats a weaker one', () => {
    fc.assert(
      fc.property(arbConversion, arbClicks, arbPolicy, (conv, clicks, policy) => {
        const { winner, touchpoints } = attribute(conv, clicks, policy);
        for (const t of touchpoints) if (winner) expect(rank(winner.signal)).toBeLessThanOrEqual(rank(t.signal));
        for (let i = 1; i < touchpoints.length; i++) {
          const [a, b] = [touchpoints[i - 1], touchpoints[i]] as [NonNullable<typeof winner>, NonNullable<typeof winner>];
          if (rank(a.signal) < rank(b.signal)) expect(a.score).toBeGreaterThan(b.score);
        }
      }),
    );
  });

  it('for equal signals a newer click never scores below an older one', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...SIGNALS),
        fc.integer({ min: 1, max: 90 }),
        fc.nat(),
        fc.nat(),
        (signal, windowDays, x, y) => {
          const [a, b] = [x % (windowDays * DAY + 1), y % (windowDays * DAY + 1)];
          expect(scoreOf(signal, Math.min(a, b), windowDays)).toBeGreaterThanOrEqual(scoreOf(signal, Math.max(a, b), windowDays));
        },
      ),
    );
  });

  it('scores are integers in 0–100, and 100 only for explicit references', () => {
    fc.assert(
      fc.property(arbConversion, arbClicks, arbPolicy, (conv, clicks, policy) => {
        for (const t of attribute(conv, clicks, policy).touchpoints) {
          expect(Number.isInteger(t.score)).toBe(true);
          expect(t.score).toBeGreaterThanOrEqual(Math.max(1, policy.minConfidence));
          expect(t.score).toBeLessThanOrEqual(100);
          expect(t.score === 100).toBe(t.signal === 'explicit');
        }
      }),
    );
  });

  it('never chooses a click outside the window, the store or the mode, nor a bot', () => {
    fc.assert(
      fc.property(arbConversion, arbClicks, arbPolicy, (conv, clicks, policy) => {
        const byId = new Map(clicks.map((c) => [c.id, c]));
        for (const t of attribute(conv, clicks, policy).touchpoints) {
          const c = byId.get(t.clickId) as ClickFacts;
          expect(c.storeId).toBe(conv.storeId);
          expect(c.livemode).toBe(conv.livemode);
          expect(c.isBot).toBe(false);
          expect(c.clickTime).toBeLessThanOrEqual(conv.time + 5 * MINUTE);
          expect(conv.time - c.clickTime).toBeLessThanOrEqual(policy.windowDays * DAY);
        }
      }),
    );
  });

  it('does not depend on the order clicks are found in, and replays identically', () => {
    fc.assert(
      fc.property(arbConversion, arbClicks, arbPolicy, fc.integer(), (conv, clicks, policy, seed) => {
        const shuffled = [...clicks].sort((a, b) => ((a.id.charCodeAt(1) * seed) % 7) - ((b.id.charCodeAt(1) * seed) % 7));
        const first = attribute(conv, clicks, policy);
        expect(attribute(conv, shuffled, policy)).toEqual(first);
        expect(attribute(conv, clicks, policy)).toEqual(first);
      }),
    );
  });

  it('the winner is the best-scored touchpoint, ties to the most recent click', () => {
    fc.assert(
      fc.property(arbConversion, arbClicks, arbPolicy, (conv, clicks, policy) => {
        const { winner, touchpoints } = attribute(conv, clicks, policy);
        expect(winner === null).toBe(touchpoints.length === 0);
        for (const t of touchpoints) {
          if (!winner) continue;
          expect(winner.score).toBeGreaterThanOrEqual(t.score);
          if (t.score === winner.score) expect(winner.clickTime).toBeGreaterThanOrEqual(t.clickTime);
        }
      }),
    );
  });
});

describe('why nothing won (explainMiss)', () => {
  it('no candidate at all → no_candidates', () => {
    const candidates = scoreCandidates(conversion({ ipAddress: '192.0.2.1' }), [click('a', T - DAY)], POLICY.windowDays);
    expect(explainMiss(candidates, POLICY)).toEqual({ reason: 'no_candidates', best: null });
  });

  it('the strongest candidate under minConfidence → below_min_confidence, with its signal and score', () => {
    const ip = { ipAddress: '192.0.2.1' };
    const clicks = [click('old', T - 3 * DAY, ip), click('new', T - MINUTE, ip)];
    const candidates = scoreCandidates(conversion(ip), clicks, POLICY.windowDays);
    expect(attribute(conversion(ip), clicks, POLICY).winner).toBeNull();
    expect(explainMiss(candidates, POLICY)).toMatchObject({
      reason: 'below_min_confidence',
      best: { clickId: 'new', signal: 'ip', score: 49 },
    });
  });

  it('a candidate at or above minConfidence → reattribution_available', () => {
    const conv = conversion({ fingerprint: 'fp' });
    const candidates = scoreCandidates(conv, [click('a', T - DAY, { fingerprint: 'fp' })], POLICY.windowDays);
    expect(explainMiss(candidates, POLICY)).toMatchObject({ reason: 'reattribution_available', best: { clickId: 'a' } });
  });
});
