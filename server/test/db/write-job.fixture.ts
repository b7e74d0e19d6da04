// WriteJobs for test/db/wal.test.ts, which the service's table of jobs does not list: the test's
// databases start their worker threads from write-job.worker.ts, whose table does.
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
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

// Run by a worker thread whose table lists them (write-job.worker.ts).
export const NOTE = writeJob('note', note);
/** The same as a background write (a delivery's outcome is one): requests' writes go first. */
export const BACKGROUND_NOTE = writeJob('backgroundNote', note, { background: true });

// The writer thread's log syncs, recorded (for the duplicate-conversion test): node:fs's
// fdatasync is wrapped in that thread and its ES module binding updated, so the thread's own
// `import { fdatasync }` sees the wrapper. Times are the thread's clock (timeOrigin + now, ms).
const traced: Array<{ started: number; finished: number }> = [];
let original: typeof fs.fdatasync | undefined;
const clock = () => performance.timeOrigin + performance.now();

export async function traceSyncs(
  _db: Writer,
  arg: { on: boolean },
): Promise<{ threadId: number; syncs: Array<{ started: number; finished: number }> }> {
  if (arg.on && !original) {
    const fdatasync = fs.fdatasync;
    original = fdatasync;
    traced.length = 0;
    fs.fdatasync = ((fd: number, callback: (error: NodeJS.ErrnoException | null) => void) => {
      const started = clock();
      fdatasync(fd, (error) => {
        traced.push({ started, finished: clock() });
        callback(error);
      });
    }) as typeof fs.fdatasync;
    syncBuiltinESMExports();
  } else if (!arg.on && original) {
    fs.fdatasync = original;
    original = undefined;
    syncBuiltinESMExports();
  }
  return { threadId, syncs: [...traced] };
}

export const TRACE_SYNCS = writeJob('traceSyncs', traceSyncs);
