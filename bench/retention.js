// node bench/retention.js --store DIR — retention of a big store's oldest month while conversions
// keep arriving (issue 41 point 3: "retention of the oldest month ≤ 60 s without stalling writes
// (p99 during it ≤ 50 ms)").
//
// On a copy of a kept bench store (bench/kept-store.js; DIR's bench.json says how many days it
// spans, 90 for bench/attribution.js's store; or a year's store of bench/year.js, 365 days), it first measures conversions at 500/s open loop
// (bench/conversion-load.js) with retention off, then restarts the server with RETENTION_DAYS set
// so that the store's oldest 30 days are expired, and keeps the same conversions running in
// 10-second windows while a reader beside the server counts the expired clicks and conversions
// every 250 ms. It reports how many rows expired, how long the server's retention took to delete
// them (from the first row gone to the last), and each window's p99 while it ran.
//
//   node bench/retention.js --store DIR [--clicks N]
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node bench/retention.js --store DIR
import { existsSync } from 'node:fs';
import path from 'node:path';
import SqliteDriver from 'better-sqlite3';
import pg from 'pg';
import { DAY_MS, startBenchServer } from './attribution-store.js';
import { conversionLatency, latencyNote, RATE } from './conversion-load.js';
import { keptStore } from './kept-store.js';
import { argValue, benchEngine, build, machineContext } from './lib.js';
import { recentClicks, yearStore } from './year-kept.js';

const MAX_WINDOWS = Number(process.env.BENCH_RETENTION_WINDOWS ?? 18);

/** Counts the events older than `before` from outside the server (a read-only connection). */
async function expiredCounter(target, before) {
  const query =
    'select (select count(*) from clicks where click_time < $1) as clicks, (select count(*) from conversions where event_time < $1) as conversions';
  if (target.database) {
    const client = new pg.Client({ connectionString: target.database.url });
    await client.connect();
    return {
      count: async () => {
        const row = (await client.query(query, [before])).rows[0];
        return { clicks: Number(row.clicks), conversions: Number(row.conversions) };
      },
      close: () => client.end(),
    };
  }
  const db = new SqliteDriver(path.join(target.dataDir, 'waytrack.db'), { readonly: true });
  const statement = db.prepare(query.replaceAll('$1', '?'));
  return { count: async () => statement.get(before, before), close: async () => db.close() };
}

async function main() {
  const engine = benchEngine();
  const dir = argValue('--store');
  if (!dir) throw new Error('usage: node bench/retention.js --store DIR [--clicks N]');
  const clicksArg = argValue('--clicks');
  const code = build();
  process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0'; // the bench talks to its own self-signed server on 127.0.0.1
  console.log(`server: ${code}\n${machineContext()}`);
  // A year's store of bench/year.js (365 days), or bench/attribution.js's kept store (90 days).
  const year = existsSync(path.join(dir, 'year.json'));
  const kept = year
    ? await yearStore(engine, dir)
    : await keptStore(engine, dir, clicksArg === undefined ? undefined : Number(clicksArg));
  const spanDays = year ? 365 : (kept.meta.days ?? 90);
  const builtAt = Date.parse(kept.meta.builtAt);
  // RETENTION_DAYS so that the cutoff falls 30 days after the store's oldest events.
  const retentionDays = Math.round((Date.now() - (builtAt - (spanDays - 30) * DAY_MS)) / DAY_MS);
  const copy = await kept.copy('retention');
  console.log(`copied the kept store in ${copy.copySeconds} s`);
  // The year store's conversions name its clicks of the last days, read from the copy.
  // As bench/year.js --writes: fbclid, IP and user agent on the year store's conversions.
  const load = { allSignals: !year };
  const data = year ? { ...kept.meta.data, recent: await recentClicks(copy, kept.meta.data) } : kept.meta.data;
  let server;
  try {
    server = await startBenchServer(copy);
    const baseline = await conversionLatency(server, data, 'ret_base', load);
    console.log(`conversions at ${RATE}/s, retention off: ${latencyNote(baseline)}`);
    await server.stop();
    server = undefined;

    const before = Date.now() - retentionDays * DAY_MS;
    const counter = await expiredCounter(copy, before);
    const expired = await counter.count();
    console.log(
      `RETENTION_DAYS=${retentionDays}: ${expired.clicks.toLocaleString('en')} clicks and ${expired.conversions.toLocaleString('en')} conversions expired (a store of ${spanDays} days)`,
    );
    server = await startBenchServer({ ...copy, env: { RETENTION_DAYS: String(retentionDays) } });
    const started = performance.now();
    let firstGone;
    let allGone;
    let left = expired;
    const watching = (async () => {
      while (allGone === undefined && performance.now() - started < MAX_WINDOWS * 13_000) {
        left = await counter.count();
        const now = performance.now();
        if (firstGone === undefined && left.clicks + left.conversions < expired.clicks + expired.conversions) firstGone = now;
        if (left.clicks + left.conversions === 0) allGone = now;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    })();
    const windows = [];
    for (let i = 0; i < MAX_WINDOWS && allGone === undefined; i++) {
      const run = await conversionLatency(server, data, `ret${i}`, load);
      windows.push(run);
      console.log(`  window ${i + 1} (deleting${firstGone === undefined ? ' not begun' : ''}): ${latencyNote(run)}`);
    }
    await watching;
    await server.stop();
    server = undefined;
    await counter.close();
    if (allGone === undefined) {
      console.log(`retention NOT done after ${MAX_WINDOWS} windows: ${left.clicks} clicks, ${left.conversions} conversions left`);
    } else {
      console.log(
        `retention deleted the oldest month in ${((allGone - firstGone) / 1000).toFixed(1)} s (first row gone ${((firstGone - started) / 1000).toFixed(1)} s after the start; target ≤ 60 s)`,
      );
    }
    const worst = Math.max(...windows.map((w) => w.exact.p99));
    console.log(
      `conversion p99 while deleting: worst window ${worst} ms (target ≤ 50 ms); retention off ${baseline.exact.p99} ms`,
    );
  } finally {
    await server?.stop();
    await copy.remove();
    if (year) await kept.remove();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
