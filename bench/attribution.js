// node bench/attribution.js — attribution cost vs data size, and analytics over a large store.
//
// Writes two fresh databases directly (fast bulk insert, bypassing the API; bench/bulk-load.js):
// 10,000 clicks and 1,000,000 clicks / 100,000 conversions over 90 days, with a realistic shape
// (a few sources, 10 campaigns × 3 ad sets × 3 ads, 20 landing pages, 2 % bots, 60 % of
// conversions attributed with 1–3 touchpoints, daily spend per campaign). Then it starts the
// real server (compiled, HTTPS) on each and drives it:
//   - POST /v1/track/conversion open loop (bench/open-loop.js, a process of its own): Poisson
//     arrivals at 500/s (BENCH_CONVERSION_RATE), latency from each request's scheduled time,
//     each conversion naming a stored click so it is attributed; p50/p99 on the small and the
//     large store, CPU per conversion of the server, PostgreSQL and the client;
//   - GET metrics, timeseries (day) and breakdown (campaign_id; last_click and linear) over
//     90 days: p50 each (autocannon, 4 connections).
// Prints one table; figures are recorded in bench/README.md.
//
//   node bench/attribution.js                         embedded SQLite (it builds the server first)
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node bench/attribution.js
//                                                     PostgreSQL: two fresh databases
//                                                     waytrack_bench_attr_… on that server, dropped at the end
//   … --engine sqlite|postgres                        choose explicitly
//   … --clicks 200000                                 a smaller large store (conversions: a tenth)
//   … --store DIR                                     keep the large store in DIR: built (and folded)
//                                                     on the first run, copied for every later run
//   … --burst                                         the older method: autocannon sending each
//                                                     second's conversions in one burst (10 connections)
//   node bench/attribution.js conversions DIR [RUNS]  only the conversion runs, RUNS times, on copies
//                                                     of the store kept in DIR (built if missing)
//   node bench/attribution.js generate DIR [CLICKS]   only build the kept store in DIR
//   node bench/attribution.js fold [CLICKS]           only the initial rollup build (default 200,000 clicks)

import { benchTarget, DAY_MS, generate, settle, size, slowGet, startBenchServer, timed } from './attribution-store.js';
import { conversionLatency, latencyNote, METHOD, RATE } from './conversion-load.js';
import { keptStore } from './kept-store.js';
import { argValue, benchEngine, build, cannon, machineContext, postgresContext, waitForQuiet, withCpu } from './lib.js';

const READ_SECONDS = Number(process.env.BENCH_READ_SECONDS ?? 6);

async function readLatency(url, data, pathAndQuery) {
  const headers = { authorization: `Bearer ${data.key}` };
  const target = `${url}${pathAndQuery}`;
  const check = await fetch(target, { headers });
  if (check.status !== 200) throw new Error(`${pathAndQuery}: ${check.status} ${await check.text()}`);
  await cannon({ url: target, headers, connections: 4, duration: 1 });
  const result = await cannon({ url: target, headers, connections: 4, duration: READ_SECONDS });
  const statuses = Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, { count }]) => [code, count]));
  return { exact: result.exact, rate: result.requests.average, non2xx: result.non2xx, errors: result.errors, statuses };
}

async function main() {
  const engine = benchEngine();
  const clicks = Number(argValue('--clicks') ?? 1_000_000);
  const big = size(clicks);
  const code = build();
  process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0'; // the bench talks to its own self-signed servers on 127.0.0.1
  const context = [`server: ${code}`, machineContext()];
  if (engine.name === 'postgres') context.push(await postgresContext(engine.adminUrl));
  const storeDir = argValue('--store');
  context.push(`conversions: ${METHOD}`);
  const small = await benchTarget(engine, 'small');
  let large;
  const rows = [];
  const row = (name, value, note = '') => {
    rows.push([name, value, note]);
    console.log(`  ${name}: ${value} ${note}`);
  };
  const quietNote = async (runs) => {
    const quiet = await waitForQuiet();
    context.push(
      quiet.quiet
        ? `machine quiet before the ${runs} (${quiet.busy} % of a core busy; waited ${quiet.waited} s)`
        : `machine NOT quiet before the ${runs}: ${quiet.busy} % of a core busy after waiting ${quiet.waited} s (other processes)`,
    );
  };
  let server;
  try {
    console.log('generating 10,000 clicks / 1,000 conversions …');
    const smallData = await generate(small, { clicks: 10_000, conversions: 1_000 });
    console.log(`generating ${clicks.toLocaleString('en')} clicks / ${(clicks / 10).toLocaleString('en')} conversions …`);
    let largeData;
    let kept;
    if (storeDir) {
      // A kept store: built and folded once (timed then), copied for this run.
      kept = await keptStore(engine, storeDir, clicks);
      large = await kept.copy('large');
      largeData = kept.meta.data;
      row(
        `data generation (${big} clicks)`,
        `${kept.meta.generateSeconds} s`,
        `kept store ${storeDir} built ${kept.meta.builtAt}; this run's copy ${large.copySeconds} s`,
      );
    } else {
      large = await benchTarget(engine, 'large');
      const gen = await timed(() => generate(large, { clicks, conversions: clicks / 10 }));
      largeData = gen.value;
      row(`data generation (${big} clicks)`, `${(gen.ms / 1000).toFixed(1)} s`, 'bulk load, bypassing the API');
    }

    server = await startBenchServer(small);
    // As for the large store below: the first read folds the imported rows into the rollups, and
    // `settle` restarts the server, so the conversion runs pay for neither.
    await fetch(`${server.url}/v1/analytics/metrics?storeId=${smallData.storeId}&startDate=2000-01-01&endDate=2000-01-01`, {
      headers: { authorization: `Bearer ${smallData.key}` },
    });
    server = await settle(small, server);
    await quietNote('10k-store runs');
    const smallRun = await conversionLatency(server, smallData, 'small');
    const smallPlain = await conversionLatency(server, smallData, 'small_plain', { allSignals: false });
    await server.stop();

    server = await startBenchServer(large);
    const days = (n) => new Date(Date.now() - n * DAY_MS).toISOString().slice(0, 10);
    const range = `storeId=${largeData.storeId}&startDate=${days(89)}&endDate=${days(0)}`;
    const headers = { authorization: `Bearer ${largeData.key}` };
    // The first read folds the existing rows into the rollups (the refresher may have begun).
    const first = await timed(() => fetch(`${server.url}/v1/analytics/metrics?${range}`, { headers }).then((r) => r.json()));
    row(
      'initial rollup build (first read)',
      `${kept ? kept.meta.foldSeconds : (first.ms / 1000).toFixed(1)} s`,
      `${size(clicks * 1.1)} rows, once after import${kept ? ' (when the kept store was built)' : ''}`,
    );
    const totals = first.value.data;
    if (!totals) throw new Error(`first metrics read failed: ${JSON.stringify(first.value)}`);
    row('90-day totals', `${totals.totalClicks} clicks, ${totals.totalConversions} conversions`);
    server = await settle(large, server);
    await quietNote(`${big}-store runs`);

    const largeRun = await conversionLatency(server, largeData, 'large');
    const ratio = largeRun.exact.p50 / smallRun.exact.p50;
    row('conversion p50, 10k clicks', `${smallRun.exact.p50} ms`, latencyNote(smallRun));
    row(`conversion p50, ${big} clicks`, `${largeRun.exact.p50} ms`, latencyNote(largeRun));
    row(`conversion p50 ratio ${big} ÷ 10k`, ratio.toFixed(2), 'target ≤ 1.5');
    row(`conversion p99 at ${RATE}/s, 10k clicks`, `${smallRun.exact.p99} ms`, `max ${smallRun.exact.max} ms`);
    row(
      `conversion p99 at ${RATE}/s, ${big} clicks`,
      `${largeRun.exact.p99} ms`,
      `target ≤ 20 ms (max ${largeRun.exact.max} ms)`,
    );
    // The same while a dashboard reads the store's metrics twice a second.
    const withReads = await conversionLatency(server, largeData, 'large_dash', { readEveryMs: 500 });
    const readsP50 = withReads.reads[Math.floor(withReads.reads.length / 2)] ?? Number.NaN;
    row(
      `conversion p99 at ${RATE}/s, ${big}, metrics read 2×/s`,
      `${withReads.exact.p99} ms`,
      `${withReads.reads.length} reads, p50 ${readsP50.toFixed(1)} ms, max ${(withReads.reads.at(-1) ?? Number.NaN).toFixed(1)} ms`,
    );
    // The same with fbclid, IP and user agent only (no fingerprint, no customer data).
    const plainLarge = await conversionLatency(server, largeData, 'large_plain', { allSignals: false });
    row('fbclid+ip+ua only: conversion p50, 10k', `${smallPlain.exact.p50} ms`, latencyNote(smallPlain));
    row(`fbclid+ip+ua only: conversion p50, ${big}`, `${plainLarge.exact.p50} ms`, latencyNote(plainLarge));
    row(`fbclid+ip+ua only: p50 ratio ${big} ÷ 10k`, (plainLarge.exact.p50 / smallPlain.exact.p50).toFixed(2), 'target ≤ 1.5');

    for (const [name, query] of [
      ['metrics 90 days', `/v1/analytics/metrics?${range}`],
      ['timeseries day 90 days', `/v1/analytics/timeseries?${range}&interval=day`],
      [
        'timeseries hour 31 days',
        `/v1/analytics/timeseries?storeId=${largeData.storeId}&startDate=${days(30)}&endDate=${days(0)}&interval=hour`,
      ],
      ['breakdown campaign_id last_click', `/v1/analytics/breakdown?${range}&by=campaign_id&model=last_click`],
      ['breakdown campaign_id linear', `/v1/analytics/breakdown?${range}&by=campaign_id&model=linear`],
      ['breakdown ad_id time_decay', `/v1/analytics/breakdown?${range}&by=ad_id&model=time_decay&limit=100`],
    ]) {
      const result = await readLatency(server.url, largeData, query);
      row(
        `${name} p50`,
        `${result.exact.p50} ms`,
        `${name === 'metrics 90 days' ? 'target ≤ 20 ms; ' : ''}${latencyNote(result)} (4 conn)`,
      );
    }

    // A time zone change: the store's rollups are rebuilt by the next read.
    const patch = await fetch(`${server.url}/v1/stores/${largeData.storeId}`, {
      method: 'PATCH',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ timezone: 'Europe/Berlin' }),
    });
    if (patch.status !== 200) throw new Error(`PATCH store: ${patch.status}`);
    const rebuilt = await timed(() => slowGet(`${server.url}/v1/analytics/metrics?${range}`, headers));
    if (rebuilt.value.status === 200) {
      row('rollup rebuild after a time zone change', `${(rebuilt.ms / 1000).toFixed(1)} s`, '(first read after PATCH)');
    } else {
      row(
        'rollup rebuild after a time zone change',
        `HTTP ${rebuilt.value.status}`,
        `after ${(rebuilt.ms / 1000).toFixed(1)} s: ${rebuilt.value.body.slice(0, 160)}`,
      );
    }
    console.log(`\nWaytrack attribution and analytics bench — ${engine.label}, HTTPS`);
    for (const line of context) console.log(line);
    for (const [name, value, note] of rows) console.log(`${name.padEnd(44)} ${String(value).padStart(26)}   ${note}`);
  } finally {
    await server?.stop();
    await small.remove();
    await large?.remove();
  }
}

/**
 * `node bench/attribution.js conversions DIR [RUNS]`: the conversion runs alone (all signals, then
 * fbclid + IP + user agent), RUNS times, each on a fresh copy of the store kept in DIR (built
 * first if DIR holds none) and a fresh server whose rollups were brought up to date and settled
 * first, as in the full bench. For comparing changes to the write path without building a
 * million clicks each time.
 */
async function conversionRuns(dir, runs) {
  const engine = benchEngine();
  const code = build();
  process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
  const clicks = argValue('--clicks');
  const kept = await keptStore(engine, dir, clicks === undefined ? undefined : Number(clicks));
  const data = kept.meta.data;
  console.log(
    `${engine.label}, server ${code}; kept store ${dir}: ${size(kept.meta.clicks)} clicks, built ${kept.meta.builtAt} ` +
      `(generated in ${kept.meta.generateSeconds} s, folded in ${kept.meta.foldSeconds} s); conversions: ${METHOD}`,
  );
  for (let run = 1; run <= runs; run++) {
    const copy = await kept.copy(`run${run}`);
    let server;
    try {
      server = await startBenchServer(copy);
      // Nothing to fold unless the rollup code changed since the store was built.
      await slowGet(`${server.url}/v1/analytics/metrics?storeId=${data.storeId}&startDate=2000-01-01&endDate=2000-01-01`, {
        authorization: `Bearer ${data.key}`,
      });
      server = await settle(copy, server);
      const quiet = await waitForQuiet();
      const all = await conversionLatency(server, data, `run${run}`);
      const plain = await conversionLatency(server, data, `run${run}_plain`, { allSignals: false });
      console.log(
        `run ${run} (copy ${copy.copySeconds} s; machine ${quiet.quiet ? 'quiet' : `NOT quiet, ${quiet.busy} % of a core busy`}): ` +
          `all signals p50 ${all.exact.p50} ms, ${latencyNote(all)}, max ${all.exact.max} ms; ` +
          `fbclid+ip+ua p50 ${plain.exact.p50} ms, ${latencyNote(plain)}, max ${plain.exact.max} ms`,
      );
    } finally {
      await server?.stop();
      await copy.remove();
    }
  }
}

/** The initial rollup build alone: generate CLICKS clicks (and a tenth as many conversions), time the first read. */
async function foldRun(clicks) {
  const engine = benchEngine();
  const code = build();
  process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
  const target = await benchTarget(engine, 'fold');
  let server;
  try {
    const data = await generate(target, { clicks, conversions: clicks / 10 });
    server = await startBenchServer(target);
    const { value, cpu, wallMs } = await withCpu({ server: server.child.pid }, () =>
      slowGet(`${server.url}/v1/analytics/metrics?storeId=${data.storeId}&startDate=2000-01-01&endDate=2000-01-01`, {
        authorization: `Bearer ${data.key}`,
      }),
    );
    if (value.status !== 200) throw new Error(`first read: ${value.status} ${value.body.slice(0, 200)}`);
    const shares =
      engine.name === 'postgres' ? `instance ${cpu.server} %, PostgreSQL ${cpu.postgres} %` : `server ${cpu.server} %`;
    console.log(
      `${engine.label}, server ${code}: initial rollup build of ${size(clicks * 1.1)} rows in ${(wallMs / 1000).toFixed(1)} s ` +
        `(CPU, % of a core: ${shares})`,
    );
  } finally {
    await server?.stop();
    await target.remove();
  }
}

if (process.argv[2] === 'generate') {
  // `node bench/attribution.js generate DIR [CLICKS]`: only build the kept store in DIR (the
  // engine as for the full bench), for `--store DIR` and `conversions DIR`.
  const [dir, clicks = '1000000'] = process.argv.slice(3);
  if (!dir || dir.startsWith('--')) throw new Error('usage: node bench/attribution.js generate DIR [CLICKS]');
  const kept = await keptStore(benchEngine(), dir, Number(clicks));
  const { data, ...meta } = kept.meta;
  console.log(JSON.stringify({ ...meta, storeId: data.storeId }));
} else if (process.argv[2] === 'fold') {
  // `node bench/attribution.js fold [CLICKS]`: only the initial rollup build (the first read after
  // a bulk import) on a fresh data set of the configured engine, for work on the fold path.
  await foldRun(Number(process.argv[3] ?? 200_000));
} else if (process.argv[2] === 'conversions') {
  const [dir, runs = '1'] = process.argv.slice(3);
  if (!dir) throw new Error('usage: node bench/attribution.js conversions DIR [RUNS]');
  await conversionRuns(dir, Number(runs));
} else {
  await main();
}
