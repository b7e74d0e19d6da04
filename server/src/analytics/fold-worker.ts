/**
 * Worker thread entry (started by fold-thread.ts): computes background folds (`foldPending`) on
 * a read-only connection of its own, so that reading and folding the rows of ~500 conversions a
 * second takes nothing from the event loop that serves requests. Writing a fold stays with the
 * main thread, whose group committer serializes every write.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openSqliteReader } from '../db/database.js';
import type { FoldReply, FoldRequest } from './fold-thread.js';
import { foldPending } from './rollups.js';

const port = parentPort;
if (!port) throw new Error('fold-worker.js runs as a worker thread');
const db = openSqliteReader((workerData as { file: string }).file);

port.on('message', async ({ id, limit }: FoldRequest) => {
  let reply: FoldReply;
  try {
    reply = { id, ok: true, pending: await foldPending(db, limit) };
  } catch (error) {
    reply = { id, ok: false, message: error instanceof Error ? error.message : String(error) };
  }
  port.postMessage(reply);
});
