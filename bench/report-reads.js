// node bench/report-reads.js DIR [RUNS] [--ref COMMIT] — the reconciliation report and the
// match-quality summary over 90 days on the large store kept in DIR (bench/kept-store.js; built
// first, by the server benched, when DIR holds none): RUNS runs (default 3), each on a fresh copy
// of the store and a fresh server whose rollups were brought up to date and settled first, then
// REQUESTS (default 40) sequential GETs of each endpoint; p50 / p99 / max per run.
// A store built by an older server is migrated by the newer one on its first start (its first
// read then rebuilds the rollups: timed and printed as "first read"). With --upgrade (SQLite),
// that happens once, in DIR itself, before the runs: name a copy of the older store's DIR.
// Only 127.0.0.1; bounded: RUNS × (copy + first read + 2 × REQUESTS requests).
import path from 'node:path';
import { settle, slowGet, startBenchServer, timed } from './attribution-store.js';
import { keptStore } from './kept-store.js';
import { argValue, benchEngine, build, machineContext, waitForQuiet } from './lib.js';

const [dir, runsArg] = process.argv.slice(2).filter((a, i, all) => !a.startsWith('--') && all[i - 1] !== '--ref');
// usage: node bench/report-reads.js DIR [RUNS] [--ref COMMIT] [--upgrade]
if (!dir) throw new Error('usage: node bench/report-reads.js DIR [RUNS] [--ref COMMIT]');
const runs = Number(runsArg ?? 3);
const requests = Number(process.env.REQUESTS ?? 40);
const DAY_MS = 86_400_000;

const engine = benchEngine();
const code = build();
process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
const clicks = argValue('--clicks');
const kept = await keptStore(engine, dir, clicks === undefined ? undefined : Number(clicks));
const data = kept.meta.data;
const headers = { authorization: `Bearer ${data.key}` };
const day = (offset) => new Date(Date.now() + offset * DAY_MS).toISOString().slice(0, 10);
const range = `startDate=${day(-89)}&endDate=${day(0)}`;
const endpoints = [
  ['reconciliation 90 days', `/v1/stores/${data.storeId}/reconciliation?${range}`],
  ['reconciliation meta 90 days', `/v1/stores/${data.storeId}/reconciliation?${range}&destination=meta`],
  ['match-quality 90 days', `/v1/analytics/match-quality?storeId=${data.storeId}&${range}`],
];
if (process.argv.includes('--upgrade')) {
  if (kept.meta.database) throw new Error('--upgrade: SQLite stores only');
  const target = { dataDir: path.join(dir, 'data') };
  let server = await startBenchServer(target);
  const upgrade = await timed(() => slowGet(`${server.url}/v1/analytics/metrics?storeId=${data.storeId}&${range}`, headers));
  if (upgrade.value.status !== 200) throw new Error(`upgrade read: ${upgrade.value.status} ${upgrade.value.body.slice(0, 200)}`);
  server = await settle(target, server);
  await server.stop();
  console.log(`upgraded ${dir} in place: migrated, rollups rebuilt by the first read in ${(upgrade.ms / 1000).toFixed(1)} s`);
}
const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
console.log(`${engine.label}, server ${code}; kept store ${dir}: ${kept.meta.clicks} clicks, built ${kept.meta.builtAt}`);
console.log(machineContext());
for (let run = 1; run <= runs; run++) {
  const copy = await kept.copy(`reports${run}`);
  let server;
  try {
    server = await startBenchServer(copy);
    const first = await timed(() => slowGet(`${server.url}/v1/analytics/metrics?storeId=${data.storeId}&${range}`, headers));
    if (first.value.status !== 200) throw new Error(`first read: ${first.value.status} ${first.value.body.slice(0, 200)}`);
    server = await settle(copy, server);
    const quiet = await waitForQuiet({ maxSeconds: 30 });
    console.log(
      `run ${run}: first read ${(first.ms / 1000).toFixed(1)} s; machine ${quiet.quiet ? 'quiet' : `NOT quiet, ${quiet.busy} % of a core busy`}`,
    );
    for (const [name, url] of endpoints) {
      const times = [];
      let bytes = 0;
      for (let i = 0; i < requests + 3; i++) {
        const { value, ms } = await timed(() => slowGet(`${server.url}${url}`, headers));
        if (value.status !== 200) throw new Error(`${name}: ${value.status} ${value.body.slice(0, 200)}`);
        bytes = value.body.length;
        if (i >= 3) times.push(ms); // the first three warm the caches
      }
      times.sort((a, b) => a - b);
      const f = (ms) => ms.toFixed(1);
      console.log(
        `  ${name.padEnd(30)} p50 ${f(quantile(times, 0.5))} ms  p99 ${f(quantile(times, 0.99))} ms  max ${f(times[times.length - 1])} ms  (${requests} requests, ${bytes} bytes)`,
      );
    }
  } finally {
    await server?.stop();
    await copy.remove();
  }
}
