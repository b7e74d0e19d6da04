import { describe, expect, it } from 'vitest';
import { FoldProgress } from '../../src/analytics/fold-progress.js';
import type { Database } from '../../src/db/database.js';
import { QUEUE_SIZE } from '../../src/db/repositories/rollup-queue.js';

/**
 * A database whose only use here is counting the queue as a background job: each count answers
 * the next of `queued` and is recorded. Reading on the event loop (`read`) throws.
 */
function countingDatabase(queued: number[]) {
  const counts: string[] = [];
  const database = {
    background: async (job: { name: string }) => {
      counts.push(job.name);
      const click = queued.shift();
      if (click === undefined) throw new Error('counted more often than expected');
      return { click, conversion: 0, refund: 0 };
    },
    get read(): never {
      throw new Error('the queue is counted on the event loop');
    },
  };
  return { database: database as unknown as Database, counts };
}

describe('FoldProgress: how far a long fold got', () => {
  it('counts the queue off the event loop, once, and again only when the fold has passed that total', async () => {
    // 10 queued at the first report (after 2 folded); 5 more recorded meanwhile, counted once 12 are folded.
    const { database, counts } = countingDatabase([10, 5, 0]);
    const lines: Array<[object, string]> = [];
    const progress = new FoldProgress(database, { info: (obj, msg) => lines.push([obj, msg]) }, 0);
    for (let i = 0; i < 9; i++) await progress.folded(2);
    expect(counts).toEqual([QUEUE_SIZE.name, QUEUE_SIZE.name, QUEUE_SIZE.name]);
    expect(lines.map(([, msg]) => msg.replace(/ rows folded.*/, ''))).toEqual([
      'analytics rollups: 2 of 12',
      'analytics rollups: 4 of 12',
      'analytics rollups: 6 of 12',
      'analytics rollups: 8 of 12',
      'analytics rollups: 10 of 12',
      'analytics rollups: 12 of 17', // passed 12: counted again (5 queued)
      'analytics rollups: 14 of 17',
      'analytics rollups: 16 of 17',
      'analytics rollups: 18 of 18', // passed 17: counted again (none queued)
    ]);
    expect(lines[0]?.[1]).toBe('analytics rollups: 2 of 12 rows folded (16%)');
  });

  it('counts nothing before the reporting interval has passed', async () => {
    const { database, counts } = countingDatabase([]);
    const progress = new FoldProgress(database, { info: () => undefined }, 60_000);
    await progress.folded(1_000);
    progress.finished();
    expect(counts).toEqual([]);
  });
});
