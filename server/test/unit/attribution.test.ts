import { describe, expect, it } from 'vitest';
import { fbclidFromFbc } from '../../src/attribution/evidence.js';
import {
  type AttributionPolicy,
  attribute,
  type CandidateClick,
  CLICK_AFTER_CONVERSION_TOLERANCE_MS,
  type Evidence,
  isCandidate,
  type Signal,
  scoreOf,
} from '../../src/attribution/model.js';

const DAY = 86_400_000;
const MINUTE = 60_000;
const CONVERSION = Date.UTC(2026, 10, 22, 12, 0, 0);
const POLICY: AttributionPolicy = { windowDays: 7, minConfidence: 50 };

const click = (id: string, clickTime: number, overrides: Partial<CandidateClick> = {}): CandidateClick => ({
  id,
  fbclid: `fb_${id}`,
  clickTime,
  isBot: false,
  ...overrides,
});

const ev = (c: CandidateClick, signal: Signal = 'explicit'): Evidence => ({ click: c, signal });

function permutations<T>(items: T[]): T[][] {
  if (items.length <= 1) return [items];
  return items.flatMap((item, i) => permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]));
}

describe('isCandidate', () => {
  it('accepts a click exactly windowDays before the conversion and rejects one 1 ms older', () => {
    expect(isCandidate(click('a', CONVERSION - 7 * DAY), CONVERSION, 7)).toBe(true);
    expect(isCandidate(click('a', CONVERSION - 7 * DAY - 1), CONVERSION, 7)).toBe(false);
    expect(isCandidate(click('a', CONVERSION - 30 * DAY), CONVERSION, 30)).toBe(true);
    expect(isCandidate(click('a', CONVERSION - 30 * DAY - 1), CONVERSION, 30)).toBe(false);
    expect(isCandidate(click('a', CONVERSION - 1 * DAY), CONVERSION, 1)).toBe(true);
    expect(isCandidate(click('a', CONVERSION - 1 * DAY - 1), CONVERSION, 1)).toBe(false);
  });

  it('uses the store window, not a fixed one', () => {
    const eightDaysBefore = click('a', CONVERSION - 8 * DAY);
    expect(isCandidate(eightDaysBefore, CONVERSION, 7)).toBe(false);
    expect(isCandidate(eightDaysBefore, CONVERSION, 30)).toBe(true);
    expect(isCandidate(click('a', CONVERSION - 90 * DAY), CONVERSION, 90)).toBe(true);
  });

  it('accepts a click up to 5 minutes after the conversion and rejects one 1 ms later', () => {
    expect(CLICK_AFTER_CONVERSION_TOLERANCE_MS).toBe(5 * MINUTE);
    expect(isCandidate(click('a', CONVERSION), CONVERSION, 7)).toBe(true);
    expect(isCandidate(click('a', CONVERSION + 5 * MINUTE), CONVERSION, 7)).toBe(true);
    expect(isCandidate(click('a', CONVERSION + 5 * MINUTE + 1), CONVERSION, 7)).toBe(false);
    expect(isCandidate(click('a', CONVERSION + DAY), CONVERSION, 7)).toBe(false);
  });

  it('never accepts a bot click', () => {
    expect(isCandidate(click('a', CONVERSION - MINUTE, { isBot: true }), CONVERSION, 7)).toBe(false);
    expect(isCandidate(click('a', CONVERSION, { isBot: true }), CONVERSION, 90)).toBe(false);
  });
});

describe('scoreOf', () => {
  it('scores an explicit reference 100 and every other signal lower', () => {
    const c = click('a', CONVERSION - MINUTE);
    expect(scoreOf(ev(c, 'explicit'))).toBe(100);
    for (const signal of ['fingerprint', 'ip_user_agent', 'identity', 'ip'] as const) {
      const score = scoreOf(ev(c, signal));
      expect(Number.isInteger(score)).toBe(true);
      expect(score).toBeGreaterThanOrEqual(0);
      expect(score).toBeLessThan(100);
    }
  });
});

describe('attribute', () => {
  it('attributes an explicit reference with confidence 100', () => {
    const c = click('clk_1', CONVERSION - 2 * DAY);
    const result = attribute(CONVERSION, [ev(c)], POLICY);
    expect(result.winner).toEqual({
      clickId: 'clk_1',
      fbclid: 'fb_clk_1',
      signal: 'explicit',
      score: 100,
      clickTime: CONVERSION - 2 * DAY,
    });
    expect(result.touchpoints).toEqual([result.winner]);
  });

  it('attributes nothing without evidence', () => {
    expect(attribute(CONVERSION, [], POLICY)).toEqual({ winner: null, touchpoints: [] });
  });

  it('still attributes an explicit reference when minConfidence is 100', () => {
    const result = attribute(CONVERSION, [ev(click('clk_1', CONVERSION - DAY))], { windowDays: 7, minConfidence: 100 });
    expect(result.winner?.clickId).toBe('clk_1');
    expect(result.winner?.score).toBe(100);
  });

  it('drops evidence scoring below minConfidence', () => {
    const weak = ev(click('clk_weak', CONVERSION - MINUTE), 'ip');
    const score = scoreOf(weak);
    expect(score).toBeLessThan(100);
    const result = attribute(CONVERSION, [weak], { windowDays: 7, minConfidence: score + 1 });
    expect(result).toEqual({ winner: null, touchpoints: [] });
  });

  it('keeps only candidates at or above the threshold as touchpoints', () => {
    const strong = ev(click('clk_strong', CONVERSION - 3 * DAY));
    const weak = ev(click('clk_weak', CONVERSION - MINUTE), 'fingerprint');
    const result = attribute(CONVERSION, [weak, strong], { windowDays: 7, minConfidence: 100 });
    expect(result.touchpoints.map((t) => t.clickId)).toEqual(['clk_strong']);
    expect(result.winner?.clickId).toBe('clk_strong');
  });

  it('lets a stronger signal beat a weaker one on a more recent click', () => {
    const older = ev(click('clk_old', CONVERSION - 5 * DAY), 'explicit');
    const newer = ev(click('clk_new', CONVERSION - MINUTE), 'fingerprint');
    const result = attribute(CONVERSION, [newer, older], { windowDays: 7, minConfidence: 0 });
    expect(result.winner?.clickId).toBe('clk_old');
    expect(result.winner?.score).toBe(100);
  });

  it('breaks a tie in score towards the most recent click', () => {
    const older = ev(click('clk_z_old', CONVERSION - 3 * DAY));
    const newer = ev(click('clk_a_new', CONVERSION - 1 * DAY));
    const result = attribute(CONVERSION, [older, newer], POLICY);
    expect(result.winner?.clickId).toBe('clk_a_new');
    expect(result.touchpoints.map((t) => t.clickId)).toEqual(['clk_a_new', 'clk_z_old']);
  });

  it('gives the same result whatever the order of the evidence', () => {
    const evidence = [
      ev(click('clk_1', CONVERSION - 3 * DAY)),
      ev(click('clk_2', CONVERSION - 1 * DAY)),
      ev(click('clk_3', CONVERSION - 1 * DAY)), // same time as clk_2: decided by id, not by order
      ev(click('clk_4', CONVERSION + 2 * MINUTE)),
      ev(click('clk_2', CONVERSION - 1 * DAY), 'ip'),
    ];
    const expected = attribute(CONVERSION, evidence, POLICY);
    expect(expected.winner?.clickId).toBe('clk_4');
    for (const order of permutations(evidence)) {
      expect(attribute(CONVERSION, order, POLICY)).toEqual(expected);
    }
  });

  it('keeps each click once, with its strongest signal', () => {
    const c = click('clk_1', CONVERSION - DAY);
    const result = attribute(CONVERSION, [ev(c, 'ip'), ev(c, 'explicit'), ev(c, 'explicit'), ev(c, 'fingerprint')], {
      windowDays: 7,
      minConfidence: 0,
    });
    expect(result.touchpoints).toHaveLength(1);
    expect(result.touchpoints[0]).toMatchObject({ clickId: 'clk_1', signal: 'explicit', score: 100 });
  });

  it('never credits a click outside the window, after the tolerance, or from a bot', () => {
    const evidence = [
      ev(click('clk_old', CONVERSION - 7 * DAY - 1)),
      ev(click('clk_late', CONVERSION + 5 * MINUTE + 1)),
      ev(click('clk_bot', CONVERSION - MINUTE, { isBot: true })),
    ];
    expect(attribute(CONVERSION, evidence, { windowDays: 7, minConfidence: 0 })).toEqual({ winner: null, touchpoints: [] });
  });

  it('credits the valid click when invalid ones are also referenced', () => {
    const evidence = [
      ev(click('clk_bot', CONVERSION - MINUTE, { isBot: true })),
      ev(click('clk_ok', CONVERSION - 6 * DAY)),
      ev(click('clk_late', CONVERSION + 10 * MINUTE)),
    ];
    const result = attribute(CONVERSION, evidence, POLICY);
    expect(result.winner?.clickId).toBe('clk_ok');
    expect(result.touchpoints.map((t) => t.clickId)).toEqual(['clk_ok']);
  });
});

describe('fbclidFromFbc', () => {
  it('extracts the fbclid verbatim, case kept', () => {
    expect(fbclidFromFbc('fb.1.1554763741205.AbCdEfGhIjKlMnOpQrStUvWxYz1234567890')).toBe('AbCdEfGhIjKlMnOpQrStUvWxYz1234567890');
    expect(fbclidFromFbc('fb.1.1596403881668.IwAR2F4-dbP0l7Mn1IawQQGCINEz7PYXQvwjNwB_qa2ofrHyiLjcbCRxTDMgk')).toBe(
      'IwAR2F4-dbP0l7Mn1IawQQGCINEz7PYXQvwjNwB_qa2ofrHyiLjcbCRxTDMgk',
    );
  });

  it('keeps dots inside the fbclid', () => {
    expect(fbclidFromFbc('fb.1.1700000000000.abc.def')).toBe('abc.def');
  });

  it('accepts other subdomain indexes', () => {
    expect(fbclidFromFbc('fb.0.1700000000000.abc')).toBe('abc');
    expect(fbclidFromFbc('fb.2.1700000000000.abc')).toBe('abc');
  });

  it('returns undefined for anything that is not an fbc', () => {
    expect(fbclidFromFbc('')).toBeUndefined();
    expect(fbclidFromFbc('abc')).toBeUndefined();
    expect(fbclidFromFbc('fb.1.1700000000000.')).toBeUndefined();
    expect(fbclidFromFbc('fb.1.notatime.abc')).toBeUndefined();
    expect(fbclidFromFbc('fb.1..abc')).toBeUndefined();
    expect(fbclidFromFbc('fx.1.1700000000000.abc')).toBeUndefined();
    expect(fbclidFromFbc('xfb.1.1700000000000.abc')).toBeUndefined();
    expect(fbclidFromFbc('fb.1.1700000000000.a b')).toBeUndefined();
    expect(fbclidFromFbc('fb.1.1700000000000.abc+def')).toBeUndefined();
    expect(fbclidFromFbc(`fb.1.1700000000000.${'a'.repeat(501)}`)).toBeUndefined();
    expect(fbclidFromFbc(`fb.1.1700000000000.${'a'.repeat(500)}`)).toBe('a'.repeat(500));
  });
});
