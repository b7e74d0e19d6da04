/**
 * Worker thread entry (started by fold-thread.ts): the background fold on a connection of its
 * own, so that reading, folding and writing the rows of ~500 conversions a second takes nothing
 * from the event loop that serves requests. It computes a fold when asked (`fold`), keeps it,
 * and writes it when the main thread, having given it the writer, says so (`write`).
 */

import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { sql } from 'kysely';
import { type Executor, openSqliteWorkerConnection } from '../db/database.js';
import type { FoldReply, FoldRequest } from './fold-thread.js';
import { foldPending, type PendingFold, writePendingFold } from './rollups.js';

const port = parentPort;
if (!port) throw new Error('fold-worker.js runs as a worker thread');
lowerThisThreadsPriority();
const db = openSqliteWorkerConnection((workerData as { file: string }).file);
let kept: PendingFold | null = null;

/**
 * On a machine with few cores, a busy fold competes with the event loop for a core (measured:
 * the main thread descheduled for up to 18 ms while the fold ran). The fold can wait; requests
 * cannot: this thread runs at nice 10 (Linux sets priorities per thread; elsewhere, or when not
 * allowed, it keeps the process's priority).
 */
function lowerThisThreadsPriority(): void {
  try {
    const tid = /task\/(\d+)$/.exec(readlinkSync('/proc/thread-self'))?.[1];
    if (tid) setPriority(Number(tid), 10);
  } catch {
    // not Linux, or not permitted: same priority as the rest of the process
  }
}

/** `work` in a write transaction of this connection, taken at once (the main thread's commits are held). */
function immediateTransaction<T>(work: (trx: Executor) => Promise<T>): Promise<T> {
  return db.connection().execute(async (conn) => {
    await sql`begin immediate`.execute(conn);
    try {
      const value = await work(conn);
      await sql`commit`.execute(conn);
      return value;
    } catch (error) {
      await sql`rollback`.execute(conn).catch(() => {});
      throw error;
    }
  });
}

async function handle(request: FoldRequest): Promise<FoldReply> {
  if (request.type === 'fold') {
    kept = await foldPending(db, request.limit);
    return { id: request.id, ok: true, folded: kept && { clicks: kept.clicks, conversions: kept.conversions, more: kept.more } };
  }
  const pending = kept;
  kept = null;
  if (!pending) throw new Error('nothing folded to write');
  return { id: request.id, ok: true, written: await immediateTransaction((trx) => writePendingFold(trx, pending)) };
}

port.on('message', (request: FoldRequest) => {
  handle(request).then(
    (reply) => port.postMessage(reply),
    (error: unknown) =>
      port.postMessage({ id: request.id, ok: false, message: error instanceof Error ? error.message : String(error) }),
  );
});
