import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { allocateCredit, MODELS, TIME_DECAY_HALF_LIFE_MS } from '../../src/attribution/models.js';

const DAY = 86_400_000;
const T = Date.UTC(2026, 10, 22);
const tp = (clickId: string, daysBefore: number) => ({ clickId, clickTime: T - daysBefore * DAY });
const byClick = (credits: ReturnType<typeof allocateCredit>) => Object.fromEntries(credits.map((c) => [c.clickId, c.valueMinor]));

describe('multi-touch models', () => {
  const touchpoints = [tp('c', 1), tp('a', 9), tp('b', 5)]; // chronological: a, b, c

  it('last_click credits the attributed click; first_click the earliest', () => {
    expect(byClick(allocateCredit('last_click', touchpoints, 'b', 10_000, T))).toEqual({ a: 0, b: 10_000, c: 0 });
    expect(byClick(allocateCredit('first_click', touchpoints, 'b', 10_000, T))).toEqual({ a: 10_000, b: 0, c: 0 });
  });

  it('linear splits equally, leftover cents to the latest clicks', () => {
    expect(byClick(allocateCredit('linear', touchpoints, 'c', 100, T))).toEqual({ a: 33, b: 33, c: 34 });
    expect(byClick(allocateCredit('linear', touchpoints, 'c', 101, T))).toEqual({ a: 33, b: 34, c: 34 });
  });

  it('position_based gives 40 / 20 / 40, and 50 / 50 for two touchpoints', () => {
    expect(byClick(allocateCredit('position_based', touchpoints, 'c', 10_000, T))).toEqual({ a: 4_000, b: 2_000, c: 4_000 });
    expect(byClick(allocateCredit('position_based', [tp('a', 3), tp('b', 1)], 'b', 999, T))).toEqual({ a: 499, b: 500 });
    const four = allocateCredit('position_based', [tp('a', 4), tp('b', 3), tp('c', 2), tp('d', 1)], 'd', 10_000, T);
    expect(byClick(four)).toEqual({ a: 4_000, b: 1_000, c: 1_000, d: 4_000 });
  });

  it('time_decay halves the weight every 7 days', () => {
    expect(TIME_DECAY_HALF_LIFE_MS).toBe(7 * DAY);
    // Clicks 0 and 7 days before: weights 1 and 1/2 → 2/3 and 1/3.
    expect(byClick(allocateCredit('time_decay', [tp('new', 0), tp('old', 7)], 'new', 300, T))).toEqual({ new: 200, old: 100 });
  });

  it('a single touchpoint takes everything under every model', () => {
    for (const model of MODELS)
      expect(byClick(allocateCredit(model, [tp('only', 2)], 'only', 4_999, T))).toEqual({ only: 4_999 });
  });

  it('credit always sums exactly to the value, shares to 1, independent of input order', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...MODELS),
        fc.uniqueArray(
          fc.record({ clickId: fc.string({ minLength: 1, maxLength: 4 }), clickTime: fc.integer({ min: T - 90 * DAY, max: T }) }),
          {
            selector: (t) => t.clickId,
            minLength: 1,
            maxLength: 12,
          },
        ),
        fc.integer({ min: 0, max: 1e15 }),
        fc.nat(),
        (model, touchpoints, value, pick) => {
          const winner = (touchpoints[pick % touchpoints.length] as { clickId: string }).clickId;
          const credits = allocateCredit(model, touchpoints, winner, value, T);
          expect(credits.reduce((sum, c) => sum + c.valueMinor, 0)).toBe(value);
          expect(credits.every((c) => Number.isInteger(c.valueMinor) && c.valueMinor >= 0)).toBe(true);
          expect(credits.reduce((sum, c) => sum + c.share, 0)).toBeCloseTo(1, 9);
          expect(allocateCredit(model, [...touchpoints].reverse(), winner, value, T)).toEqual(credits);
        },
      ),
    );
  });
});
