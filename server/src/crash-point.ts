import { writeSync } from 'node:fs';

/**
 * Test-only hooks for the end-to-end durability checks (server/test/e2e/crash-loop.test.ts,
 * server/test/e2e/durability.test.ts; see docs/durability.md). Each is a no-op unless its
 * environment variable is set, and is read here only: never set them on a real server.
 *
 * WAYTRACK_TEST_CRASH_AT=<point>[:<n>] — the process kills itself with SIGKILL (what kill -9
 * does) the n-th time (default: the first) one thread reaches `point`:
 *   commit      db/sqlite/database.ts — a group commit's transaction is committed (its log
 *               frames are in the page cache) but neither synced nor answered
 *   checkpoint  db/sqlite/worker.ts — a step of a log checkpoint has copied the log into the
 *               database file (and synced it); the log has not been restarted
 *   fold        analytics/rollups.ts — a rollup fold's deltas are written inside its write
 *               transaction, which is not committed
 *   forward     destinations/delivery.ts — jobs are claimed (leased in the database) and their
 *               request to the platform (Meta's Graph API, Google Ads, TikTok) is about to be sent
 *   shop-webhook  shops/webhooks.ts — a shop webhook's conversion or refunds are durable, its
 *               delivery is neither recorded nor answered
 *   spend       spend/sync.ts — a spend source's report has been fetched (the source leased to
 *               this process), nothing of it recorded yet (another instance takes it over)
 *   webhook     webhooks/dispatcher.ts — a webhook endpoint has answered an attempt, which is
 *               not recorded yet (the message is sent again, with the same webhook-id)
 * It writes one line to stderr first (`crash point <point> reached`): the evidence that the kill
 * landed there. Counts are per thread (checkpoints run on their own worker thread).
 *
 * WAYTRACK_TEST_MAX_PAGE_COUNT=<n> — see testMaxPageCount below.
 *
 * WAYTRACK_TEST_LEASE_MS=<n> — see testLeaseMs below.
 *
 * WAYTRACK_TEST_CHECKPOINT_BYTES=<n> — SQLite log checkpoints start once the log reaches n bytes
 * (instead of 4 MiB), with no least interval between two and at most 20 ms of waiting for a
 * quiet moment before the last step, so that a short test under load sees many checkpoints and
 * log restarts.
 */
/**
 * WAYTRACK_TEST_MAX_PAGE_COUNT=<n> — every SQLite connection opens with `max_page_count = n` (SQLite
 * raises it to the database's size then, so `1` means "as large as it is now"): a write that
 * needs the file to grow fails with SQLITE_FULL, as on a full disk, without needing one
 * (server/test/db/write-health.test.ts).
 */
export function testMaxPageCount(): number | undefined {
  const pages = Number(process.env.WAYTRACK_TEST_MAX_PAGE_COUNT);
  return pages > 0 ? pages : undefined;
}

/**
 * WAYTRACK_TEST_LEASE_MS=<n> — the outbox dispatchers (the destinations' and the webhooks') and
 * the spend sync lease what they claim for n ms instead of 15 s, 20 s and 5 min: a test that kills a process mid-delivery
 * then sees the killed process's jobs taken again after a few seconds, the same path as in
 * production, without waiting out a production lease (server/test/e2e/crash-loop.test.ts and the
 * restart tests). It must stay longer than one request to a fake platform and its recording.
 */
export function testLeaseMs(): number | undefined {
  const ms = Number(process.env.WAYTRACK_TEST_LEASE_MS);
  return ms > 0 ? ms : undefined;
}

const [armed, nth] = parseCrashAt(process.env.WAYTRACK_TEST_CRASH_AT);
let reached = 0;

function parseCrashAt(raw: string | undefined): [string | undefined, number] {
  if (!raw) return [undefined, 0];
  const [point, n] = raw.split(':');
  return [point, n ? Number(n) : 1];
}

/** Kills the process here when WAYTRACK_TEST_CRASH_AT names this point (see above); else nothing. */
export function crashPoint(point: 'commit' | 'checkpoint' | 'fold' | 'forward' | 'shop-webhook' | 'spend' | 'webhook'): void {
  if (point !== armed || ++reached < nth) return;
  writeSync(2, `crash point ${point} reached (${reached}): SIGKILL\n`);
  process.kill(process.pid, 'SIGKILL');
}

/** WAYTRACK_TEST_CHECKPOINT_BYTES as SQLite log options (see above); empty when unset. */
export function testWalOptions(): { checkpointBytes?: number; checkpointIntervalMs?: number; finishWaitMs?: number } {
  const bytes = Number(process.env.WAYTRACK_TEST_CHECKPOINT_BYTES);
  return bytes > 0 ? { checkpointBytes: bytes, checkpointIntervalMs: 0, finishWaitMs: 20 } : {};
}
