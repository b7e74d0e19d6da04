// node bench/year.js — a year's store and every report read on it (issue 40 point 9, issue 41 points 1–2).
//
// Builds a store of 365 days (bench/year-store.js: 2,000,000 clicks by default, a tenth as many
// conversions, 200 campaigns' daily spend, refunds, destination jobs, customers) through the
// engine's bulk path, lets the server fold it into its rollups and cohorts (the first reads), restarts it
// (bench/attribution-store.js `settle`), then reads every analytics endpoint and the API calls
// behind each dashboard page over 30, 90 and 365 days, and the conversions and clicks lists at
// shallow, middle and last cursors: each one `--requests` times one after another, then as many
// from 4 concurrent clients; p50, p99 and max of each. Prints one table (and `--json FILE`).
//
//   node bench/year.js                              embedded SQLite, 2M clicks, a store removed at the end
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node bench/year.js   PostgreSQL
//   … --engine sqlite|postgres --clicks 20000000 --requests 200
//   … --store DIR        keep the store: built on the first run (SQLite in DIR/data; PostgreSQL a
//                        database waytrack_bench_year_<hash of DIR>), read as it is by later runs
//   … --only REGEX       only the reads whose name matches (e.g. 'channels|cohorts')
//   … --seconds S        at most S seconds per phase of one read (default 40; fewer requests then, said so)
//   … --writes           then conversions at 500/s open loop on the store (bench/conversion-load.js; each
//                        names a click of the store's last 5 days): issue 41 point 3 at this size. It
//                        adds ~6,000 conversions to a kept store per run.
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { size, slowGet, startBenchServer, timed } from './attribution-store.js';
import { conversionLatency, latencyNote, METHOD } from './conversion-load.js';
import { argValue, benchEngine, build, machineContext, postgresContext, source } from './lib.js';
import { recentClicks, yearStore } from './year-kept.js';
import { DAY_MS } from './year-shape.js';

const REQUESTS = Number(argValue('--requests') ?? 200);
const PHASE_SECONDS = Number(argValue('--seconds') ?? 40);
const CONCURRENCY = 4;
const only = argValue('--only') ? new RegExp(argValue('--only')) : undefined;

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
const round = (ms) => Math.round(ms * 10) / 10;

/** One read: its calls (a page's, in parallel), checked for 200; the time until the last answered. */
async function once(url, headers, calls) {
  const started = performance.now();
  const responses = await Promise.all(calls.map((call) => fetch(`${url}${call}`, { headers })));
  const ms = performance.now() - started;
  for (const [i, response] of responses.entries()) {
    const body = await response.text();
    if (response.status !== 200) throw new Error(`${calls[i]}: ${response.status} ${body.slice(0, 300)}`);
  }
  return ms;
}

/** `REQUESTS` reads one after another, then `REQUESTS` from 4 clients; each phase stops after PHASE_SECONDS. */
async function measure(url, headers, calls) {
  await once(url, headers, calls); // warm: the first read of a report may compile its statements
  const phase = async (clients) => {
    const times = [];
    const until = performance.now() + PHASE_SECONDS * 1000;
    let issued = 0;
    await Promise.all(
      Array.from({ length: clients }, async () => {
        while (issued < REQUESTS && performance.now() < until) {
          issued++;
          times.push(await once(url, headers, calls));
        }
      }),
    );
    times.sort((a, b) => a - b);
    return { n: times.length, p50: round(percentile(times, 50)), p99: round(percentile(times, 99)), max: round(times.at(-1)) };
  };
  return { sequential: await phase(1), concurrent: await phase(CONCURRENCY) };
}

/** The reads: each analytics endpoint and dashboard page over `days`, as [name, calls]. */
function reads(storeId, days, now) {
  const date = (n) => new Date(now - n * DAY_MS).toISOString().slice(0, 10);
  const range = `storeId=${storeId}&startDate=${date(days - 1)}&endDate=${date(0)}`;
  const dates = `startDate=${date(days - 1)}&endDate=${date(0)}`;
  const a = (what, extra = '') => `/v1/analytics/${what}?${range}${extra}`;
  const list = [
    ['metrics', [a('metrics')]],
    ['timeseries day', [a('timeseries', '&interval=day')]],
    ...(days <= 31 ? [['timeseries hour', [a('timeseries', '&interval=hour')]]] : []),
    ['breakdown utm_campaign', [a('breakdown', '&by=utm_campaign')]],
    ...['last_click', 'first_click', 'linear', 'time_decay', 'position_based'].map((model) => [
      `breakdown campaign_id ${model}`,
      [a('breakdown', `&by=campaign_id&model=${model}&limit=100`)],
    ]),
    ['match quality', [a('match-quality')]],
    ['reconciliation', [`/v1/stores/${storeId}/reconciliation?${dates}`]],
    ['channels last_click', [a('channels', '&model=last_click')]],
    ...(days === 365
      ? ['first_click', 'linear', 'time_decay', 'position_based'].map((model) => [
          `channels ${model}`,
          [a('channels', `&model=${model}`)],
        ])
      : []),
    ['tracking health', [a('tracking-health')]],
    ['cohorts by month', [a('cohorts', '&by=month')]],
    ['cohorts by channel', [a('cohorts', '&by=channel')]],
    // The dashboard's pages: the calls each makes at once (dashboard/src/pages; the same handlers under /dashboard/api).
    ['page: overview', [a('metrics'), a('timeseries', '&interval=day'), '/v1/stores?limit=100']],
    [
      'page: channels',
      [
        a('channels', '&model=last_click'),
        a('timeseries', '&interval=day'),
        a('tracking-health'),
        `/v1/stores/${storeId}/spend-sources`,
        '/v1/stores?limit=100',
      ],
    ],
    ['page: customers', [a('cohorts', '&by=month'), '/v1/stores?limit=100']],
    ['page: reconciliation', [`/v1/stores/${storeId}/reconciliation?${dates}`, '/v1/stores?limit=100']],
    ['page: match quality', [a('match-quality'), '/v1/stores?limit=100']],
  ];
  return list.map(([name, calls]) => [`${name} ${days}d`, calls]);
}

/**
 * The lists at a shallow, a middle and the last cursor: signed as the server signs them (its
 * `cursor_secret` setting, http/pagination.ts), checked against the cursor the server itself
 * returns after the first page.
 */
async function listReads(target, server, data, headers) {
  const { openDatabase } = await source('db/open.ts');
  const { CursorCodec, listContext } = await source('http/pagination.ts');
  const database = openDatabase({ databaseUrl: target.database?.url, dataDir: target.dataDir });
  const out = [];
  try {
    const secret = await database.read
      .selectFrom('settings')
      .select('value')
      .where('name', '=', 'cursor_secret')
      .executeTakeFirstOrThrow();
    const codec = new CursorCodec(secret.value);
    const auth = { accountId: data.accountId, livemode: true };
    for (const [list, table, time] of [
      ['conversions', 'conversions', 'event_time'],
      ['clicks', 'clicks', 'click_time'],
    ]) {
      const context = listContext(list, auth, { storeId: data.storeId });
      const base = `/v1/${list}?storeId=${data.storeId}&limit=100`;
      const [{ total }] = await database.read
        .selectFrom(table)
        .select((eb) => eb.fn.countAll().as('total'))
        .execute();
      const at = async (depth) => {
        const row = await database.read
          .selectFrom(table)
          .select([time, 'id'])
          .where('store_id', '=', data.storeId)
          .where('livemode', '=', 1) // the list's index order (on PostgreSQL, without it: a sort of every row, past the timeout)
          .orderBy(time, 'desc')
          .orderBy('id', 'desc')
          .offset(depth - 1)
          .limit(1)
          .executeTakeFirstOrThrow();
        return codec.encode({ time: Number(row[time]), id: row.id }, context);
      };
      const first = await (await fetch(`${server.url}${base}`, { headers })).json();
      if (first.data.nextCursor !== (await at(100))) throw new Error(`${list}: the signed cursor differs from the server's`);
      const depths = [
        ['first page', 0],
        ['page at 100', 100],
        ['middle page', Math.floor(Number(total) / 2)],
        ['last page', Number(total) - 50],
      ];
      for (const [name, depth] of depths) {
        out.push([
          `list ${list}: ${name} (${depth.toLocaleString('en')} deep)`,
          [depth === 0 ? base : `${base}&cursor=${await at(depth)}`],
        ]);
      }
    }
  } finally {
    await database.close();
  }
  return out;
}

async function main() {
  const engine = benchEngine();
  const clicks = Number(argValue('--clicks') ?? 2_000_000);
  const code = build();
  process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0'; // the bench talks to its own self-signed server on 127.0.0.1
  const context = [`server: ${code}`, machineContext()];
  if (engine.name === 'postgres') context.push(await postgresContext(engine.adminUrl));
  const store = await yearStore(engine, argValue('--store'), clicks);
  const { meta } = store;
  const data = meta.data;
  context.push(
    `store: ${size(meta.clicks)} clicks, ${JSON.stringify(data.counts)}; built ${meta.builtAt} in ${meta.generateSeconds} s, ` +
      `first fold ${meta.foldSeconds} s`,
  );
  let server;
  const rows = [];
  try {
    server = await startBenchServer(store.target);
    const headers = { authorization: `Bearer ${data.key}` };
    // Anything left to fold (rollup code changed since the store was built) is done before measuring.
    const settleRead = await timed(() => slowGet(`${server.url}/v1/analytics/metrics?storeId=${data.storeId}`, headers));
    context.push(
      `first read of this run ${Math.round(settleRead.ms)} ms; load before reads ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    const now = Date.now();
    const all = [...[30, 90, 365].flatMap((days) => reads(data.storeId, days, now))];
    if (!only || only.test('list')) all.push(...(await listReads(store.target, server, data, headers)));
    for (const [name, calls] of all) {
      if (only && !only.test(name)) continue;
      let result;
      try {
        result = await measure(server.url, headers, calls);
      } catch (error) {
        // A read so slow that the server stops accepting connections (its event loop held): said, and the next one.
        console.log(`${name.padEnd(52)} failed: ${error.cause?.code ?? error.message} | load ${loadavg()[0].toFixed(2)}`);
        rows.push({ name, failed: String(error.cause?.code ?? error.message), load: loadavg()[0] });
        await new Promise((resolve) => setTimeout(resolve, 30_000)); // the reads still running end first
        continue;
      }
      const { sequential: s, concurrent: c } = result;
      rows.push({ name, ...result, load: loadavg()[0] });
      console.log(
        `${name.padEnd(52)} seq p50 ${String(s.p50).padStart(7)} p99 ${String(s.p99).padStart(7)} max ${String(s.max).padStart(7)} (n ${s.n})` +
          ` | 4 clients p50 ${String(c.p50).padStart(7)} p99 ${String(c.p99).padStart(7)} (n ${c.n}) | load ${loadavg()[0].toFixed(2)}`,
      );
    }
    if (process.argv.includes('--writes')) {
      const recent = await recentClicks(store.target, data);
      const result = await conversionLatency(server, { ...data, recent }, 'year', { allSignals: false });
      rows.push({ name: 'conversions at 500/s', ...result, load: loadavg()[0] });
      console.log(
        `conversions (${METHOD}): p50 ${result.exact.p50} ms, ${latencyNote(result)} | load ${loadavg()[0].toFixed(2)}`,
      );
    }
  } finally {
    await server?.stop();
    await store.remove();
  }
  console.log(`\nWaytrack year bench — ${engine.label}, HTTPS, ms`);
  for (const line of context) console.log(line);
  const json = argValue('--json');
  if (json) writeFileSync(json, JSON.stringify({ engine: engine.name, context, rows }, null, 1));
}

await main();
