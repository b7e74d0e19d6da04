import { describe, expect, it } from 'vitest';
import { newId } from '../../src/ids.js';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const decodeTime = (id: string) => [...(id.split('_')[1] ?? '').slice(0, 10)].reduce((ms, c) => ms * 32 + ALPHABET.indexOf(c), 0);

describe('ids', () => {
  it('are the prefix, 10 characters of time and 16 random ones, in Crockford base32', () => {
    expect(newId('click')).toMatch(/^clk_[0-9a-hjkmnp-tv-z]{26}$/);
    expect(newId('request')).toMatch(/^req_[0-9a-hjkmnp-tv-z]{26}$/);
  });

  it('encode the millisecond they are made in, and sort by it', () => {
    const times = [0, 1, 31, 32, 1_764_000_000_000, 1_764_000_000_001, 2 ** 45];
    const ids = times.map((ms) => newId('store', ms));
    expect(ids.map(decodeTime)).toEqual(times);
    expect([...ids].sort()).toEqual(ids);
    // The same millisecond again, after others: its time part is computed, not left over.
    expect(decodeTime(newId('store', 31))).toBe(31);
  });

  it('differ within one millisecond, and their random part uses the whole alphabet', () => {
    const ids = Array.from({ length: 50_000 }, () => newId('click', 1_764_000_000_000));
    expect(new Set(ids).size).toBe(ids.length);
    const counts = new Map<string, number>();
    for (const id of ids) for (const c of id.slice(-16)) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect(counts.size).toBe(32);
    // 800,000 characters: each of the 32 appears ~25,000 times; a bias of a bit would halve or double some.
    for (const n of counts.values()) expect(Math.abs(n - 25_000)).toBeLessThan(1_500);
  });
});
