// A WriteJob for test/db/wal.test.ts: a module of its own, as the writer thread imports the jobs it runs.
import { threadId } from 'node:worker_threads';
import { type Writer, writeJob } from '../../src/db/database.js';

export async function note(db: Writer, arg: { n: number; fail?: boolean; table?: string }): Promise<{ threadId: number }> {
  await db
    .insertInto((arg.table ?? 'notes') as never)
    .values({ n: arg.n } as never)
    .execute();
  if (arg.fail) throw new Error(`job ${arg.n} failed after its insert`);
  return { threadId };
}

// Named by its path from the code root (server/src), as the writer thread resolves it.
export const NOTE = writeJob('../test/db/write-job.fixture', 'note', note);
