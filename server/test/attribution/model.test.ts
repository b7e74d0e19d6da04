import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fbclidFromFbc } from '../../src/attribution/evidence.js';
import {
  type AttributionPolicy,
  attribute,
  CLICK_AFTER_CONVERSION_TOLERANCE_MS,
  type ClickFacts,
  type ConversionFacts,
  evidenceKinds,
  explainMiss,
  isCandidate,
  platformOf,
  SIGNALS,
  scoreCandidates,
} from '../../src/attribution/model.js';
import {
  ageBucket,
  confidenceOf,
  PARAMS,
  SAME_BROWSER_CONFIDENCE,
  shareOf,
  weightOf,
} from '../../src/attribution/probability.js';

// The §13 model as pure functions: evidence, the probability, the bounds the contract puts on it.
const DAY = 86_400_000;
const HOUR = 3_600_000;
const MINUTE = 60_000;
const T = Date.UTC(2026, 10, 22, 12, 0, 0);
const POLICY: AttributionPolicy = { windowDays: 7, minConfidence: 50 };
const IPHONE_SAFARI =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1';
const IPHONE_FACEBOOK =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/489.0.0.45.108]';
const WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

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
  // Each click its own browser unless a test says otherwise.
  visitorId: `vid_${id}`,
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

describe('evidence', () => {
  const ip = '203.0.113.7';
  it('recognises each kind, strongest first', () => {
    expect(evidenceKinds(click('a', T, { fbclid: 'X' }), conversion({ fbclids: ['X'] }))).toEqual(['explicit']);
    expect(evidenceKinds(click('a', T), conversion({ clickId: 'a' }))).toEqual(['explicit']);
    expect(evidenceKinds(click('a', T), conversion({ explicitClickIds: new Set(['a']) }))).toEqual(['explicit']);
    expect(evidenceKinds(click('a', T, { visitorId: 'v1' }), conversion({ visitorId: 'v1' }))).toEqual(['same_browser']);
    expect(evidenceKinds(click('a', T, { fbp: 'fb.1.1.2' }), conversion({ fbp: 'fb.1.1.2' }))).toEqual(['same_browser']);
    expect(evidenceKinds(click('a', T, { ttp: 't1' }), conversion({ ttp: 't1' }))).toEqual(['same_browser']);
    expect(evidenceKinds(click('a', T), conversion({ identityClickIds: new Set(['a']) }))).toEqual(['identity']);
    expect(evidenceKinds(click('a', T, { visitorId: 'v9' }), conversion({ identityBrowsers: new Set(['v:v9']) }))).toEqual([
      'identity',
    ]);
    expect(evidenceKinds(click('a', T, { derivedFingerprint: 'd' }), conversion({ fingerprint: 'd' }))).toEqual([
      'ip_user_agent',
    ]);
    expect(evidenceKinds(click('a', T, { fingerprint: 'fp' }), conversion({ fingerprint: 'fp' }))).toEqual(['fingerprint']);
    expect(
      evidenceKinds(
        click('a', T, { ipAddress: ip, userAgent: WINDOWS, fingerprint: 'fp' }),
        conversion({ ipAddress: ip, userAgent: WINDOWS, fingerprint: 'fp' }),
      ),
    ).toEqual(['ip_user_agent', 'fingerprint', 'ip']);
    expect(
      evidenceKinds(click('a', T, { ipAddress: ip, userAgent: WINDOWS }), conversion({ ipAddress: ip, userAgent: 'x' })),
    ).toEqual(['ip']);
    expect(evidenceKinds(click('a', T, { ipAddress: ip }), conversion({ ipAddress: '198.51.100.1' }))).toEqual([]);
    // A browser id of the conversion that no click shares is no evidence.
    expect(evidenceKinds(click('a', T, { visitorId: null }), conversion({ visitorId: 'v1' }))).toEqual([]);
  });

  it('IP + device: the same network and device platform in another browser (in-app browser, then Safari)', () => {
    expect(platformOf(IPHONE_SAFARI)).toBe('iPhone; CPU iPhone OS 18_1 like Mac OS X');
    expect(platformOf(IPHONE_FACEBOOK)).toBe(platformOf(IPHONE_SAFARI));
    expect(platformOf('curl/8.0')).toBeNull();
    const inApp = click('a', T - HOUR, { ipAddress: ip, userAgent: IPHONE_FACEBOOK });
    expect(evidenceKinds(inApp, conversion({ ipAddress: ip, userAgent: IPHONE_SAFARI }))).toEqual(['ip_device', 'ip']);
    expect(evidenceKinds(inApp, conversion({ ipAddress: ip, userAgent: WINDOWS }))).toEqual(['ip']);
  });

  it('compares IPv6 addresses by their /64: a phone changes its interface id, not its network', () => {
    const earlier = click('a', T - HOUR, { ipAddress: '2001:db8:1:2:aaaa::1', userAgent: WINDOWS });
    expect(evidenceKinds(earlier, conversion({ ipAddress: '2001:db8:1:2:bbbb::2', userAgent: WINDOWS }))).toEqual([
      'ip_user_agent',
      'ip',
    ]);
    expect(evidenceKinds(earlier, conversion({ ipAddress: '2001:db8:1:3:aaaa::1' }))).toEqual([]);
    // An IPv4-mapped address is its IPv4 address.
    expect(evidenceKinds(click('b', T, { ipAddress: ip }), conversion({ ipAddress: `::ffff:${ip}` }))).toEqual(['ip']);
  });

  it('reads the fbclid inside an fbc value', () => {
    expect(fbclidFromFbc('fb.1.1700000000000.IwAR.x-Y_z')).toBe('IwAR.x-Y_z');
    expect(fbclidFromFbc('fb.1.abc.IwAR')).toBeUndefined();
    expect(fbclidFromFbc('IwAR')).toBeUndefined();
  });
});

describe('confidence', () => {
  const ip = { ipAddress: '203.0.113.7' };

  it('an explicit reference is 100, whatever else the other candidates show', () => {
    const result = attribute(
      conversion({ fbclids: ['fb_old'], visitorId: 'v-new', ...ip }),
      [click('old', T - 6 * DAY), click('new', T - MINUTE, { visitorId: 'v-new', ...ip })],
      POLICY,
    );
    expect(result.winner).toMatchObject({ clickId: 'old', signal: 'explicit', score: 100 });
    expect(result.candidates.find((c) => c.clickId === 'new')?.score).toBe(0);
  });

  it("same-browser evidence: that browser's most recent click is at least 90; its older clicks are touchpoints", () => {
    expect(SAME_BROWSER_CONFIDENCE).toBeGreaterThanOrEqual(90);
    expect(SAME_BROWSER_CONFIDENCE).toBeLessThan(100);
    const browser = { visitorId: 'v1' };
    const result = attribute(
      conversion({ visitorId: 'v1' }),
      [click('older', T - 3 * DAY, browser), click('recent', T - DAY, browser)],
      POLICY,
    );
    expect(result.winner).toMatchObject({ clickId: 'recent', signal: 'same_browser', score: SAME_BROWSER_CONFIDENCE });
    expect(result.candidates).toHaveLength(1);
    expect(result.touchpoints.map((t) => t.clickId)).toEqual(['recent', 'older']);
  });

  it('a piece of evidence counts as much as it is rare in the store: more browsers sharing it, lower confidence', () => {
    const conv = (ipShared: number) => conversion({ ...ip, shared: { ip: ipShared } });
    const scores = [1, 2, 5, 20].map((n) => scoreCandidates(conv(n), [click('a', T - 2 * HOUR, ip)], 7)[0]?.score ?? 0);
    for (let i = 1; i < scores.length; i++) expect(scores[i]).toBeLessThanOrEqual(scores[i - 1] as number);
    expect(scores[3]).toBeLessThan(scores[0] as number);
    expect(scoreCandidates(conv(5), [click('a', T - 2 * HOUR, ip)], 7)[0]?.evidence).toEqual([{ kind: 'ip', sharedBy: 5 }]);
  });

  it('never counts fewer sharers than the candidates that show the evidence', () => {
    const clicks = [click('a', T - 2 * HOUR, ip), click('b', T - 3 * HOUR, ip)];
    const [best] = scoreCandidates(conversion({ ...ip, shared: { ip: 1 } }), clicks, 7);
    expect(best?.evidence).toEqual([{ kind: 'ip', sharedBy: 2 }]);
  });

  it('k browsers with exactly the same evidence each get at most 100 ÷ k', () => {
    for (const k of [1, 2, 3, 4, 7]) {
      const clicks = Array.from({ length: k }, (_, i) => click(`c${i}`, T - 2 * HOUR, { ...ip, userAgent: WINDOWS }));
      const scored = scoreCandidates(conversion({ ...ip, userAgent: WINDOWS }), clicks, 7);
      expect(scored).toHaveLength(k);
      for (const c of scored) expect(c.score).toBeLessThanOrEqual(Math.floor(100 / k));
    }
  });

  it('clicks of different ages do not share their evidence equally: the 100 ÷ k bound counts the same age bucket only', () => {
    // Two browsers on the conversion's network and device (Meta's in-app browser, then Safari).
    const conv = conversion({ ...ip, userAgent: IPHONE_SAFARI });
    const inApp = (id: string, age: number) => click(id, T - age, { ...ip, userAgent: IPHONE_FACEBOOK, fbp: `fb.1.1.${id}` });
    const [best] = scoreCandidates(conv, [inApp('recent', 30 * MINUTE), inApp('old', 4 * DAY)], 7);
    const evidence = best?.evidence ?? [];
    const [recent, old] = [30 * MINUTE, 4 * DAY].map((age) => weightOf(evidence, 2, age)) as [number, number];
    expect(best).toMatchObject({ clickId: 'recent', score: confidenceOf(shareOf([recent, old], 0)[0] as number) });
    expect(best?.score).toBeGreaterThan(50);
    // Within the same bucket the two are equal: 50 at most each.
    const same = scoreCandidates(conv, [inApp('recent', 30 * MINUTE), inApp('also-recent', 40 * MINUTE)], 7);
    expect(same).toHaveLength(2);
    for (const c of same) expect(c.score).toBeLessThanOrEqual(50);
  });

  it('the estimate is the calibrated share of the weights, as probability.ts documents', () => {
    const conv = conversion({ ...ip, shared: { ip: 1 } });
    const [best] = scoreCandidates(conv, [click('a', T - 2 * HOUR, ip)], 7);
    const weight = weightOf([{ kind: 'ip', sharedBy: 1 }], 1, 2 * HOUR);
    expect(weight).toBeCloseTo(PARAMS.odds.ip[ageBucket(2 * HOUR)], 10);
    expect(best?.score).toBe(confidenceOf(weight / (1 + weight)));
  });

  it('attributes nothing below minConfidence', () => {
    const conv = conversion({ fingerprint: 'common', shared: { fingerprint: 40 } });
    const clicks = [click('fp', T - 3 * DAY, { fingerprint: 'common' })];
    const best = scoreCandidates(conv, clicks, 7)[0];
    expect(best?.score).toBeLessThan(50);
    expect(attribute(conv, clicks, POLICY).winner).toBeNull();
    expect(attribute(conv, clicks, { windowDays: 7, minConfidence: 0 }).winner).toMatchObject({ clickId: 'fp' });
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
  ipAddress: fc.constantFrom(null, '1.1.1.1', '2.2.2.2', '2001:db8::1', '2001:db8::2'),
  userAgent: fc.constantFrom(null, IPHONE_SAFARI, IPHONE_FACEBOOK, WINDOWS),
  visitorId: fc.constantFrom(null, 'v1', 'v2', 'v3'),
  fbp: fc.constantFrom(null, 'fb.1.1.1', 'fb.1.1.2'),
});
const arbClicks = fc.uniqueArray(arbClick, { selector: (c) => c.id, maxLength: 8 });
const arbConversion = fc.record({
  storeId: fc.constant('st_a'),
  livemode: fc.boolean(),
  time: fc.constant(T),
  fbclids: fc.subarray(['f0', 'f1', 'f2', 'f3'], { maxLength: 2 }),
  clickId: fc.option(fc.constantFrom(...ids), { nil: undefined }),
  fingerprint: fc.option(fc.constantFrom('fp1', 'fp2', 'd1', 'd2'), { nil: undefined }),
  ipAddress: fc.option(fc.constantFrom('1.1.1.1', '2.2.2.2', '2001:db8::9'), { nil: undefined }),
  userAgent: fc.option(fc.constantFrom(IPHONE_SAFARI, WINDOWS), { nil: undefined }),
  visitorId: fc.option(fc.constantFrom('v1', 'v2'), { nil: undefined }),
  fbp: fc.option(fc.constantFrom('fb.1.1.1'), { nil: undefined }),
  identityClickIds: fc.subarray(ids, { maxLength: 3 }).map((a) => new Set(a)),
  shared: fc.record({ ip: fc.nat(30), ip_user_agent: fc.nat(10), fingerprint: fc.nat(60) }),
});
const arbPolicy = fc.record({ windowDays: fc.integer({ min: 1, max: 90 }), minConfidence: fc.integer({ min: 0, max: 100 }) });
const kinds = (t: { evidence: { kind: string }[] }) => new Set(t.evidence.map((e) => e.kind));
const probabilistic = (t: { evidence: { kind: string }[] }) =>
  !kinds(t).has('explicit') && !kinds(t).has('same_browser') && !kinds(t).has('identity');

describe('attribution properties', () => {
  it('confidences are integers in 0–100, 100 only for explicit references, and together at most about 100', () => {
    fc.assert(
      fc.property(arbConversion, arbClicks, arbPolicy, (conv, clicks, policy) => {
        const { candidates } = attribute(conv, clicks, policy);
        for (const c of candidates) {
          expect(Number.isInteger(c.score)).toBe(true);
          expect(c.score).toBeGreaterThanOrEqual(0);
          expect(c.score === 100).toBe(c.signal === 'explicit');
        }
        // Probabilities of exclusive hypotheses: several explicit references aside, they add up to at most 1
        // (each rounded down; the calibration map may move each by a few points).
        const explicit = candidates.filter((c) => c.signal === 'explicit').length;
        if (explicit === 0) expect(candidates.reduce((a, c) => a + c.score, 0)).toBeLessThanOrEqual(100 + 5 * candidates.length);
      }),
    );
  });

  it('same-browser evidence beats any probabilistic evidence', () => {
    fc.assert(
      fc.property(arbConversion, arbClicks, arbPolicy, (conv, clicks, policy) => {
        const { candidates } = attribute(conv, clicks, policy);
        // (An explicit reference takes it all: then every other candidate is 0.)
        if (candidates.some((c) => kinds(c).has('explicit'))) {
          for (const c of candidates) if (!kinds(c).has('explicit')) expect(c.score).toBe(0);
          return;
        }
        const same = candidates.filter((c) => kinds(c).has('same_browser'));
        for (const s of same) {
          expect(s.score).toBeGreaterThanOrEqual(90);
          for (const p of candidates.filter(probabilistic)) expect(s.score).toBeGreaterThan(p.score);
        }
      }),
    );
  });

  it('the winner is the most probable candidate, ties to the most recent click, and only at or above minConfidence', () => {
    fc.assert(
      fc.property(arbConversion, arbClicks, arbPolicy, (conv, clicks, policy) => {
        const { winner, candidates } = attribute(conv, clicks, policy);
        const best = candidates[0];
        expect(winner).toEqual(best && best.score >= policy.minConfidence ? best : null);
        for (const c of candidates) {
          if (!best) continue;
          expect(best.score).toBeGreaterThanOrEqual(c.score);
          if (c.score === best.score) expect(best.clickTime).toBeGreaterThanOrEqual(c.clickTime);
        }
      }),
    );
  });

  it('for the same evidence a more recent click never scores below an older one within an age bucket', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...(['ip_user_agent', 'ip_device', 'ip', 'fingerprint'] as const)),
        fc.nat(3),
        (kind, bucket) => {
          const bounds = [0, HOUR, DAY, 3 * DAY, 7 * DAY];
          const [from, to] = [bounds[bucket] as number, (bounds[bucket + 1] as number) - 1];
          expect(weightOf([{ kind, sharedBy: 1 }], 1, from)).toBe(weightOf([{ kind, sharedBy: 1 }], 1, to));
        },
      ),
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

  it('each piece of evidence is listed in strength order with its sharers', () => {
    fc.assert(
      fc.property(arbConversion, arbClicks, arbPolicy, (conv, clicks, policy) => {
        for (const c of attribute(conv, clicks, policy).candidates) {
          const order = c.evidence.map((e) => SIGNALS.indexOf(e.kind));
          expect(order).toEqual([...order].sort((a, b) => a - b));
          expect(c.signal).toBe(c.evidence[0]?.kind);
          for (const e of c.evidence) expect(e.sharedBy).toBeGreaterThanOrEqual(1);
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

  it('the best candidate under minConfidence → below_min_confidence, with its signal and score', () => {
    const fp = { fingerprint: 'common' };
    const clicks = [click('old', T - 3 * DAY, fp), click('new', T - 2 * DAY, fp)];
    const conv = conversion({ ...fp, shared: { fingerprint: 30 } });
    const candidates = scoreCandidates(conv, clicks, POLICY.windowDays);
    expect(attribute(conv, clicks, POLICY).winner).toBeNull();
    expect(explainMiss(candidates, POLICY)).toMatchObject({
      reason: 'below_min_confidence',
      best: { clickId: 'new', signal: 'fingerprint' },
    });
  });

  it('a candidate at or above minConfidence → reattribution_available', () => {
    const conv = conversion({ visitorId: 'v1' });
    const candidates = scoreCandidates(conv, [click('a', T - DAY, { visitorId: 'v1' })], POLICY.windowDays);
    expect(explainMiss(candidates, POLICY)).toMatchObject({ reason: 'reattribution_available', best: { clickId: 'a' } });
  });
});
