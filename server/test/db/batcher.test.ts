import { describe, expect, it } from 'vitest';
import { Batcher, type BatchPolicy } from '../../src/db/postgres/batcher.js';

/**
 * A batcher whose database is a list of calls the test answers by hand. By default a second
 * batch goes beside the first at once (`besideQueued: 1`); the tests of that rule set it.
 */
function harness(maxInFlight: number, maxBatch = 200, beside: Partial<BatchPolicy> = { besideQueued: 1 }) {
  const sent: Array<{ args: number[]; alone: boolean; answer: (fail?: unknown) => void }> = [];
  const send = (args: number[], alone: boolean) =>
    new Promise<number[]>((resolve, reject) => {
      sent.push({ args, alone, answer: (fail) => (fail ? reject(fail) : resolve(args.map((a) => a * 10))) });
    });
  const batcher = new Batcher<number, number>(
    (args) => send(args, false),
    async (arg) => {
      if (arg < 0) throw new Error(`bad ${arg}`);
      return (await send([arg], true))[0] as number;
    },
    { maxInFlight, maxBatch, ...beside },
  );
  return { batcher, sent };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('Batcher (PostgreSQL write batches)', () => {
  it('sends the first call at once, alone; calls arriving while the slots are taken go together, answered in order', async () => {
    const { batcher, sent } = harness(1);
    const first = batcher.run(1);
    await settle();
    expect(sent.map((s) => [s.args, s.alone])).toEqual([[[1], true]]);
    const rest = [2, 3, 4].map((n) => batcher.run(n));
    await settle();
    expect(sent).toHaveLength(1); // the one slot is taken
    sent[0]?.answer();
    expect(await first).toBe(10);
    await settle();
    expect(sent.map((s) => [s.args, s.alone])).toEqual([
      [[1], true],
      [[2, 3, 4], false],
    ]);
    sent[1]?.answer();
    expect(await Promise.all(rest)).toEqual([20, 30, 40]);
  });

  it('sends the calls made together as one batch: a batch request is one statement, not its first call alone', async () => {
    const { batcher, sent } = harness(2);
    const all = [1, 2, 3, 4, 5].map((n) => batcher.run(n));
    await settle();
    expect(sent.map((s) => [s.args, s.alone])).toEqual([[[1, 2, 3, 4, 5], false]]);
    sent[0]?.answer();
    expect(await Promise.all(all)).toEqual([10, 20, 30, 40, 50]);
  });

  it('keeps at most maxInFlight batches out, each at most maxBatch calls', async () => {
    const { batcher, sent } = harness(2, 3);
    const all = Array.from({ length: 9 }, (_, i) => batcher.run(i + 1));
    await settle();
    // Two slots of three calls: six go at once; the other three wait.
    expect(sent.map((s) => s.args)).toEqual([
      [1, 2, 3],
      [4, 5, 6],
    ]);
    sent[0]?.answer();
    await settle();
    expect(sent.map((s) => s.args)).toEqual([
      [1, 2, 3],
      [4, 5, 6],
      [7, 8, 9],
    ]);
    sent[1]?.answer();
    sent[2]?.answer();
    expect(await Promise.all(all)).toEqual([10, 20, 30, 40, 50, 60, 70, 80, 90]);
  });

  it('with a batch at the database, the next goes beside it only once enough calls wait', async () => {
    const { batcher, sent } = harness(2, 200, { besideQueued: 3, besideAfterMs: 60_000 });
    const all = [batcher.run(1)];
    await settle();
    all.push(batcher.run(2), batcher.run(3));
    await settle();
    expect(sent.map((s) => s.args)).toEqual([[1]]); // 2 and 3 wait for the first
    all.push(batcher.run(4));
    await settle();
    expect(sent.map((s) => s.args)).toEqual([[1], [2, 3, 4]]); // three waiting: beside it
    all.push(batcher.run(5));
    await settle();
    expect(sent).toHaveLength(2); // both slots taken
    sent[0]?.answer();
    await settle();
    expect(sent).toHaveLength(2); // a slot is free, but [2, 3, 4] is out and one call waits
    sent[1]?.answer();
    await settle();
    expect(sent.map((s) => s.args)).toEqual([[1], [2, 3, 4], [5]]);
    sent[2]?.answer();
    expect(await Promise.all(all)).toEqual([10, 20, 30, 40, 50]);
  });

  it('the calls waiting for a batch go together when it ends, or beside it once it is slow', async () => {
    const { batcher, sent } = harness(2, 200, { besideQueued: 16, besideAfterMs: 30 });
    const first = batcher.run(1);
    await settle();
    const second = [batcher.run(2), batcher.run(3)];
    await settle();
    expect(sent).toHaveLength(1);
    sent[0]?.answer();
    await first;
    await settle();
    // The first ended before the wait ran out: the two waiting went at once, together.
    expect(sent.map((s) => s.args)).toEqual([[1], [2, 3]]);
    const third = batcher.run(4);
    await settle();
    expect(sent).toHaveLength(2);
    // [2, 3] is still out; after 30 ms the waiting call goes beside it.
    await new Promise((r) => setTimeout(r, 60));
    expect(sent.map((s) => s.args)).toEqual([[1], [2, 3], [4]]);
    sent[1]?.answer();
    sent[2]?.answer();
    expect(await Promise.all([...second, third])).toEqual([20, 30, 40]);
  });

  it('a batch that fails runs again call by call: the bad call fails alone', async () => {
    const { batcher, sent } = harness(1);
    const first = batcher.run(1);
    await settle();
    const calls = [2, -3, 4].map((n) =>
      batcher.run(n).then(
        (value) => ({ value }),
        (error: Error) => ({ error: error.message }),
      ),
    );
    await settle();
    sent[0]?.answer();
    await first;
    await settle();
    sent[1]?.answer(Object.assign(new Error('value too long'), { code: '22001' }));
    await settle();
    const alone = sent.slice(2);
    expect(alone.map((s) => [s.args, s.alone])).toEqual([
      [[2], true],
      [[4], true],
    ]);
    for (const s of alone) s.answer();
    expect(await Promise.all(calls)).toEqual([{ value: 20 }, { error: 'bad -3' }, { value: 40 }]);
  });

  it('a database that cannot be reached fails the whole batch at once, without running it again', async () => {
    const { batcher, sent } = harness(1);
    const first = batcher.run(1);
    await settle();
    const calls = [2, 3].map((n) => batcher.run(n).catch((error: { code?: string }) => error.code));
    await settle();
    sent[0]?.answer();
    await first;
    await settle();
    sent[1]?.answer(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
    expect(await Promise.all(calls)).toEqual(['ECONNREFUSED', 'ECONNREFUSED']);
    expect(sent).toHaveLength(2);
  });
});
