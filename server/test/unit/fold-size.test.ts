import { describe, expect, it } from 'vitest';
import { FoldSize } from '../../src/analytics/fold-size.js';

describe('FoldSize: the next fold step after a stale one', () => {
  it('quarters on a stale step down to one event, then says to wait; doubles back up to the most', () => {
    const size = new FoldSize(1_000);
    const stale = [];
    while (size.after('stale')) stale.push(size.value);
    expect(stale).toEqual([250, 62, 15, 3, 1]);
    expect(size.value).toBe(1);
    const written = [];
    for (let i = 0; i < 12; i++) {
      size.after(i % 2 ? 'done' : 'more');
      written.push(size.value);
    }
    expect(written).toEqual([2, 4, 8, 16, 32, 64, 128, 256, 512, 1_000, 1_000, 1_000]);
  });

  it('never goes below one event, however small the most is', () => {
    const size = new FoldSize(1);
    expect(size.after('stale')).toBe(false);
    expect(size.value).toBe(1);
    expect(size.after('more')).toBe(true);
    expect(size.value).toBe(1);
  });
});
