// npm run bench — click ingest against the health check, on one server, and on PostgreSQL also
// on two servers sharing the database.
//
//   npm run bench                                              embedded SQLite (fsynced commits)
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm run bench
//                                                              PostgreSQL: a fresh database
//                                                              waytrack_bench_run_… on that server,
//                                                              migrated, dropped at the end
//   npm run bench -- --engine sqlite|postgres                  choose explicitly
//   npm run bench -- --instances 1                             PostgreSQL: skip the two-instance part
//
// Every click run has the floor beside it (bench/floor.js: a bare Fastify over the same TLS that
// validates the same click body, no auth, no storage); ratios are to it, taken in the same run.
// Each run prints the CPU per request of the server (all threads), the database and the client.
//
// Environment: BENCH_DURATION (10 s per run), BENCH_CONNECTIONS (50), BENCH_BATCH_EVENTS (100
// clicks a batch request), BENCH_BATCH_CONNECTIONS (a fifth of BENCH_CONNECTIONS), BENCH_OPEN_RATE
// (2000 clicks/s, open loop). REDIS_URL, when set, is
// passed to the servers (rate limits shared through Redis, as in production with several instances).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  argValue,
  benchClick,
  benchEngine,
  build,
  cannon,
  cli,
  createBenchDatabase,
  machineContext,
  openLoop,
  postgresContext,
  startServer,
  waitForQuiet,
  withCpu,
} from './lib.js';
import { findWrk, wrkRun } from './wrk.js';

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const INSTANCES = Number(argValue('--instances') ?? 2);
/** Clicks a request of the batch run. */
const BATCH_EVENTS = Number(process.env.BENCH_BATCH_EVENTS ?? 100);
/** Connections of the batch run: each request carries BATCH_EVENTS clicks, so fewer are enough to saturate. */
const BATCH_CONNECTIONS = Number(process.env.BENCH_BATCH_CONNECTIONS ?? Math.max(2, Math.round(CONNECTIONS / 5)));
/** The open-loop click run: requests/s (Poisson arrivals), for BENCH_DURATION. */
const OPEN_RATE = Number(process.env.BENCH_OPEN_RATE ?? 2000);

/** Peak resident memory of a process, in MB (Linux). */
function peakRssMb(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}

function run(options) {
  return cannon({ connections: CONNECTIONS, duration: DURATION, ...options });
}

/** Runs bench/load.js clients in processes of their own, all at once; resolves with their results. */
function clients(list) {
  return Promise.all(
    list.map(
      (options) =>
        new Promise((resolve, reject) => {
          const child = spawn(process.execPath, [path.join(import.meta.dirname, 'load.js'), JSON.stringify(options)], {
            stdio: ['ignore', 'pipe', 'inherit'],
          });
          let out = '';
          child.stdout.on('data', (d) => {
            out += d;
          });
          child.once('exit', (code) => {
            if (code !== 0) return reject(new Error(`load client exited with ${code}: ${out}`));
            resolve({ ...JSON.parse(out.trim().split('\n').at(-1)), pid: child.pid });
          });
        }),
    ),
  );
}

/** Starts bench/floor.js (a bare Fastify over the server's TLS certificate) and resolves with its origin and process. */
function startFloor(dataDir) {
  const tls = path.join(dataDir, 'tls');
  const options = { cert: path.join(tls, 'localhost-cert.pem'), key: path.join(tls, 'localhost-key.pem') };
  const child = spawn(process.execPath, [path.join(import.meta.dirname, 'floor.js'), JSON.stringify(options)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const match = /listening on (https:\/\/\S+)/.exec(out);
      if (match) resolve({ child, url: match[1], stop: () => child.kill('SIGTERM') });
    });
    child.once('exit', (code) => reject(new Error(`floor server exited with ${code}: ${out}`)));
  });
}

/** Waits (up to 120 s) until the server has folded every stored row into the rollups, then for a quiet machine. */
async function settle(url) {
  const started = performance.now();
  for (;;) {
    const text = await (await fetch(`${url}/metrics`)).text();
    const backlog = [...text.matchAll(/^waytrack_rollup_backlog_rows\{[^}]*\} (\d+)/gm)].reduce((a, m) => a + Number(m[1]), 0);
    if (backlog === 0 || performance.now() - started > 120_000) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const quiet = await waitForQuiet({ maxSeconds: 30 });
  return { waited: Math.round((performance.now() - started) / 1000), busy: quiet.busy };
}

/** CPU per request in µs from a share of one core (%) over a run and its requests per second. */
const perRequest = (share, rate) => (rate > 0 ? Math.round((share * 10_000) / rate) : 0);

/** Where the CPU went (% of one core): the named processes, PostgreSQL, the rest, the machine. */
const cpuNote = (cpu, names) =>
  `CPU % of a core: ${names.map((n) => `${n} ${cpu[n]}`).join(', ')}, postgres ${cpu.postgres}, other ${cpu.other}; ` +
  `machine ${cpu.machine} of ${cpu.machineOf}`;

/** `withCpu` around spawned clients: their own CPU (reported by each) counted apart from "other". */
function withClientCpu(measured) {
  const clientShare = Math.round((100 * sum(measured.value, 'cpuMs')) / measured.wallMs);
  return { ...measured.cpu, clients: clientShare, other: Math.max(0, measured.cpu.other - clientShare) };
}

const sum = (results, field) => results.reduce((a, r) => a + r[field], 0);
const clientNote = (results) =>
  `${results.map((r) => `${r.average.toFixed(0)}`).join(' + ')} req/s; p50 ${results.map((r) => r.p50).join('/')} ms, ` +
  `p99 ${results.map((r) => r.p99).join('/')} ms; non-2xx ${sum(results, 'non2xx')}, errors ${sum(results, 'errors')}`;

async function main() {
  const engine = benchEngine();
  const code = build();
  process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0'; // the bench talks to its own self-signed server on 127.0.0.1
  const context = [`server: ${code}`, machineContext()];
  if (engine.name === 'postgres') context.push(await postgresContext(engine.adminUrl));
  if (process.env.REDIS_URL) context.push('REDIS_URL set: rate limits shared through Redis');
  const dataDir = mkdtempSync(path.join(tmpdir(), 'waytrack-bench-'));
  const env = { DATA_DIR: dataDir, RATE_LIMIT_RPS: '1000000', RATE_LIMIT_BURST: '10000000' };
  const database = engine.name === 'postgres' ? await createBenchDatabase(engine.adminUrl, 'run') : undefined;
  if (database) {
    env.DATABASE_URL = database.url;
    cli(['migrate'], env); // as in production: migrate once, then start the instances
  }
  const servers = [];
  const rows = [];
  const row = (name, value, note = '') => {
    rows.push([name, value, note]);
    console.log(`  ${name}: ${value} ${note}`);
  };
  try {
    const first = await startServer(env, 30_000);
    servers.push(first);
    const { child, url, readyMs } = first;
    const account = JSON.parse(cli(['account', 'create', '--email', 'bench@example.com', '--json'], env));
    const key = account.keys.live;
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const storeRes = await fetch(`${url}/v1/stores`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: 'Bench', domain: 'bench.example.com', platform: 'custom' }),
    });
    const storeId = (await storeRes.json()).data.id;

    const quiet = await waitForQuiet();
    context.push(
      quiet.quiet
        ? `machine quiet before the runs (${quiet.busy} % of a core busy; waited ${quiet.waited} s)`
        : `machine NOT quiet before the runs: ${quiet.busy} % of a core busy after waiting ${quiet.waited} s (other processes)`,
    );
    // The client: wrk when it can be had (it leaves the server the bottleneck), else autocannon
    // in this process. Each run reports the client's CPU and the server's event loop thread's,
    // so the report shows which side was saturated.
    const wrkPath = findWrk();
    context.push(
      wrkPath
        ? `client: wrk (${wrkPath}), 1 thread, in a process of its own`
        : 'client: autocannon in the bench process (wrk not found and could not be installed: the client may be the bottleneck)',
    );
    // The floor (bench/floor.js), beside ours on the same cores, over the same certificate.
    const floor = await startFloor(dataDir);
    servers.push(floor);
    const pids = {
      server: child.pid,
      'server event loop': `${child.pid}/task/${child.pid}`,
      floor: floor.child.pid,
      ...(wrkPath ? {} : { client: process.pid }),
    };
    /** One closed-loop run at saturation: `kind` health, click or batch against `origin`. */
    const drive = async (origin, kind) => {
      const target = { health: `${origin}/healthz`, click: `${origin}/v1/track/click`, batch: `${origin}/v1/track/batch` }[kind];
      if (wrkPath) {
        const result = await wrkRun({
          wrkPath,
          url: target,
          connections: kind === 'batch' ? BATCH_CONNECTIONS : CONNECTIONS,
          duration: DURATION,
          click: kind === 'click' ? { key, storeId } : undefined,
          batch: kind === 'batch' ? { key, storeId, events: BATCH_EVENTS } : undefined,
        });
        return {
          requests: { average: result.average },
          exact: result.exact,
          ok: result.ok,
          non2xx: result.non2xx,
          errors: result.errors,
          clientCpu: result.clientCpuShare,
        };
      }
      let n = 0;
      const fbclid = () => `bench_${process.pid}_${n++}`;
      const body = {
        click: () => JSON.stringify(benchClick(storeId, fbclid())),
        batch: () =>
          JSON.stringify({
            events: Array.from({ length: BATCH_EVENTS }, () => ({ type: 'click', ...benchClick(storeId, fbclid()) })),
          }),
      }[kind];
      const result = await run({
        ...(kind === 'batch' && { connections: BATCH_CONNECTIONS }),
        ...(body
          ? { url: target, method: 'POST', headers, requests: [{ setupRequest: (req) => ({ ...req, body: body() }) }] }
          : { url: target }),
      });
      return { ...result, ok: result['2xx'] };
    };
    const measured = async (origin, kind) => {
      const { value, cpu } = await withCpu(pids, () => drive(origin, kind));
      if (value.clientCpu !== undefined) {
        cpu.client = value.clientCpu;
        cpu.other = Math.max(0, cpu.other - value.clientCpu);
      }
      return { value, cpu };
    };
    const { value: health, cpu: healthCpu } = await measured(url, 'health');
    const { value: floorHealth, cpu: floorHealthCpu } = await measured(floor.url, 'health');
    const { value: clicks, cpu: clickCpu } = await measured(url, 'click');
    const clickRss = peakRssMb(child.pid); // the footprint target is "under the click benchmark"
    const { value: floorClicks, cpu: floorClickCpu } = await measured(floor.url, 'click');
    const { value: batches, cpu: batchCpu } = await measured(url, 'batch');
    // Open loop: clicks at OPEN_RATE/s whatever the answers, latency from the scheduled time, on a
    // settled server: the saturation runs leave a backlog of ~200k rows to fold into the
    // rollups and a long log to checkpoint, work a merchant's server at a steady 2,000 clicks/s
    // does not carry.
    const settled = await settle(url);
    context.push(
      `open loop after the rollup backlog drained (${settled.waited} s) and the machine was quiet (${settled.busy} % of a core busy)`,
    );
    const open = await withCpu({ server: child.pid }, () =>
      openLoop({
        url,
        kind: 'click',
        rate: OPEN_RATE,
        duration: DURATION,
        key,
        storeId,
        prefix: 'open',
        ...(process.env.BENCH_SLOW_FILE && { slowFile: `${process.env.BENCH_SLOW_FILE}-clicks.json` }),
      }),
    );
    const openClientShare = Math.round((100 * open.value.cpuMs) / open.wallMs);
    const rss = peakRssMb(child.pid);
    const ours = engine.name === 'postgres';
    /** CPU per request (µs) of the server (all its threads), the database's processes and the client. */
    const cost = (cpu, rate, server = 'server', per = 'request') =>
      `CPU/${per}: ${server} ${perRequest(cpu[server], rate)} µs` +
      `${ours ? `, PostgreSQL ${perRequest(cpu.postgres, rate)} µs` : ''}, client ${perRequest(cpu.client ?? 0, rate)} µs`;
    const rateOf = (r) => r.requests.average;
    const latency = (r) =>
      `p50 ${r.exact.p50} ms, p99 ${r.exact.p99} ms${r.non2xx ? `, NON-2XX ${r.non2xx}` : ''}${r.errors ? `, errors ${r.errors}` : ''}`;
    row('ready after start', `${readyMs.toFixed(0)} ms`, 'target ≤ 1000 ms');
    row(
      'GET /healthz',
      `${rateOf(health).toFixed(0)} req/s`,
      `${latency(health)}; ${cost(healthCpu, rateOf(health))}; ${cpuNote(healthCpu, ['server', 'server event loop', 'client'])}`,
    );
    row(
      'floor GET /healthz',
      `${rateOf(floorHealth).toFixed(0)} req/s`,
      `${latency(floorHealth)}; ${cost(floorHealthCpu, rateOf(floorHealth), 'floor')}`,
    );
    row('/healthz ÷ floor /healthz', (rateOf(health) / rateOf(floorHealth)).toFixed(2), 'target ≥ 0.9');
    row(
      'POST /v1/track/click',
      `${rateOf(clicks).toFixed(0)} req/s`,
      `${latency(clicks)}; ${cost(clickCpu, rateOf(clicks))}; ${cpuNote(clickCpu, ['server', 'server event loop', 'client'])}`,
    );
    row(
      'floor POST /v1/track/click',
      `${rateOf(floorClicks).toFixed(0)} req/s`,
      `${latency(floorClicks)}; ${cost(floorClickCpu, rateOf(floorClicks), 'floor')}`,
    );
    row(
      'clicks ÷ floor clicks',
      (rateOf(clicks) / rateOf(floorClicks)).toFixed(2),
      `target ≥ ${ours ? '0.45 (PostgreSQL)' : '0.6 (SQLite, every click durable)'}`,
    );
    row('clicks ÷ /healthz', (rateOf(clicks) / rateOf(health)).toFixed(2), 'saturation ratio, for information');
    const events = rateOf(batches) * BATCH_EVENTS;
    row(
      `POST /v1/track/batch (${BATCH_EVENTS} clicks)`,
      `${events.toFixed(0)} events/s`,
      `${rateOf(batches).toFixed(0)} req/s over ${BATCH_CONNECTIONS} connections, ${latency(batches)}; ${cost(batchCpu, events, 'server', 'event')}`,
    );
    row(
      'batch events ÷ floor clicks',
      (events / rateOf(floorClicks)).toFixed(2),
      `target ≥ ${ours ? '1.5 (PostgreSQL)' : '3 (SQLite)'}`,
    );
    const o = open.value;
    row(
      `clicks at ${OPEN_RATE}/s, open loop`,
      `p99 ${o.p99} ms`,
      `p50 ${o.p50} ms, p99.9 ${o.p999} ms, max ${o.max} ms, ${o.achieved} answered/s, non-2xx ${o.non2xx}, errors ${o.errors}, ` +
        `scheduler lag ≤ ${o.maxLagMs} ms, p99 from send to answer ${o.serverTime.p99} ms; ${cost({ ...open.cpu, client: openClientShare }, o.achieved)}; target p99 ≤ 10 ms`,
    );
    row('peak RSS (server), click runs', `${clickRss.toFixed(0)} MB`, 'target ≤ 250 MB under the click benchmark');
    row('peak RSS (server), whole run', `${rss.toFixed(0)} MB`, 'with 100-click batches and the open loop, for information');

    if (database && INSTANCES >= 2) {
      // Several instances on one database: the same 50 connections from two client processes,
      // first both on one instance, then one client per instance.
      const half = Math.ceil(CONNECTIONS / 2);
      const load = (server, kind, prefix) => ({
        url: server.url,
        kind,
        connections: half,
        duration: DURATION,
        key,
        storeId,
        prefix,
      });
      const second = await startServer(env, 30_000);
      servers.push(second);
      const both = { a: first.child.pid, b: second.child.pid };
      const one = await withCpu(both, () => clients([load(first, 'click', 'one_a'), load(first, 'click', 'one_b')]));
      const two = await withCpu(both, () => clients([load(first, 'click', 'two_a'), load(second, 'click', 'two_b')]));
      const twoHealth = await withCpu(both, () => clients([load(first, 'health'), load(second, 'health')]));
      const oneTotal = sum(one.value, 'average');
      const twoTotal = sum(two.value, 'average');
      const twoHealthTotal = sum(twoHealth.value, 'average');
      row(
        'clicks, 1 instance, 2 clients',
        `${oneTotal.toFixed(0)} req/s`,
        `${clientNote(one.value)}; ${cpuNote(withClientCpu(one), ['a', 'clients'])}`,
      );
      row(
        'clicks, 2 instances, 2 clients',
        `${twoTotal.toFixed(0)} req/s`,
        `${clientNote(two.value)}; ${cpuNote(withClientCpu(two), ['a', 'b', 'clients'])}`,
      );
      row('2 instances ÷ 1 instance', (twoTotal / oneTotal).toFixed(2), 'clicks req/s, same machine');
      row(
        'healthz, 2 instances',
        `${twoHealthTotal.toFixed(0)} req/s`,
        `${clientNote(twoHealth.value)}; ${cpuNote(withClientCpu(twoHealth), ['a', 'b', 'clients'])}`,
      );
      row('click ingest ratio, 2 instances', (twoTotal / twoHealthTotal).toFixed(2), 'clicks ÷ healthz, both over 2 instances');
      const client = await database.connect();
      try {
        const stored = Number((await client.query('select count(*) as n from clicks')).rows[0].n);
        const ok = clicks.ok + sum(one.value, 'ok') + sum(two.value, 'ok');
        row(
          'clicks stored',
          `${stored}`,
          `${ok} click requests answered 2xx in all (a few more may be stored unanswered as runs end)`,
        );
      } finally {
        await client.end();
      }
    }

    console.log(`\nWaytrack bench — ${engine.label}, ${CONNECTIONS} connections, ${DURATION} s per run, HTTPS keep-alive`);
    for (const line of context) console.log(line);
    for (const [name, value, note] of rows) console.log(`${name.padEnd(32)} ${String(value).padStart(14)}   ${note}`);
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
