import { describe, expect, it } from 'vitest';
import { nextBatchSize, RETENTION_BATCH } from '../../src/retention.js';

describe('retention batch sizes (SQLite: batches short enough for requests’ writes to slip between)', () => {
  it('scales a batch that held the writer too long down towards the budget', () => {
    // 1,000 events in 120 ms (the slow machine of bench/README.md), budget 10 ms: 83 next.
    expect(nextBatchSize(1000, 120, RETENTION_BATCH, 10)).toBe(83);
    expect(nextBatchSize(1000, 20, RETENTION_BATCH, 10)).toBe(500);
  });

  it('grows a quick batch at most twofold, up to the maximum', () => {
    expect(nextBatchSize(100, 1, RETENTION_BATCH, 10)).toBe(200);
    expect(nextBatchSize(800, 1, RETENTION_BATCH, 10)).toBe(RETENTION_BATCH);
    expect(nextBatchSize(100, 0, RETENTION_BATCH, 10)).toBe(200);
  });

  it('never goes below 50 events, nor above a smaller maximum', () => {
    expect(nextBatchSize(60, 5000, RETENTION_BATCH, 10)).toBe(50);
    expect(nextBatchSize(2, 5000, 2, 10)).toBe(2);
    expect(nextBatchSize(2, 0, 2, 10)).toBe(2);
  });

  it('keeps the maximum where requests do not wait for retention (PostgreSQL: no budget)', () => {
    expect(nextBatchSize(1000, 500, RETENTION_BATCH, undefined)).toBe(RETENTION_BATCH);
  });
});
