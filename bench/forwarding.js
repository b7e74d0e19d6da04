// node bench/forwarding.js (after `npm run build`) — forwarding to Meta's Conversions API.
//
// 1. Delivery: 10,000 conversions are queued in the outbox (recorded through the compiled domain
//    code, with no dispatcher running), then the real `waytrack serve` process starts on that
//    data and delivers them to a local fake Graph API. Timed from the server's ready line until
//    every event is acknowledged by the fake and recorded `sent` in the database.
// 2. Latency: POST /v1/track/conversion driven by autocannon over HTTPS keep-alive, for a store
//    without forwarding and a store forwarding with CAPI_SYNC_WAIT_MS=0 (same server, runs
//    interleaved, BENCH_ROUNDS each), at a fixed rate (BENCH_RATE, default 300/s, latency
//    corrected for coordinated omission) and at the highest rate the server sustains; then the
//    same with the default CAPI_SYNC_WAIT_MS=1500 for reference.
// 3. Every destination (bench/forwarding-every.js): a store with all eight destinations configured
//    (Google on the Data Manager API, the default), 10,000 conversions queued once whose click ids
//    spread them over the seven other platforms (gclid, ttclid, msclkid, epik, ScCid, rdt_cid,
//    li_fat_id; Meta receives every one), delivered to the test suite's own fakes
//    (server/test/destinations/fake-*.ts, loaded through tsx) answering in BENCH_EVERY_LATENCY ms
//    (50), BENCH_ROUNDS times on a copy of the queue. Timed from ready until no job is pending;
//    then each fake must have accepted exactly its expected events, each once. Then conversion
//    latency at BENCH_ALL_RATE (500/s) open loop (bench/open-loop.js: Poisson arrivals, latency
//    from the scheduled time) for a store forwarding to Meta only and one with all eight, every
//    conversion naming all seven other click ids (same server, CAPI_SYNC_WAIT_MS=0, BENCH_DURATION
//    s runs, interleaved in alternating order, BENCH_ROUNDS each): median p99 and the ratio.
// Environment: BENCH_QUEUED (10000), BENCH_DURATION (10 s), BENCH_CONNECTIONS (50), BENCH_RATE, BENCH_ALL_RATE, BENCH_EVERY_LATENCY,
// BENCH_ROUNDS (3); BENCH_ONLY_DELIVERY skips the latency runs.
// BENCH_ONLY_EVERY runs part 3 alone; BENCH_ONLY_EVERY_LATENCY with it, part 3's latency runs alone
// (BENCH_EVERY_STORE=one|all: only that store's, to profile it).
// Embedded SQLite only (it reads the outbox state from the database file).

import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import SqliteDriver from 'better-sqlite3';
import { CLICK_MIX, deliveryEveryDestination, KINDS, latencyEveryDestination } from './forwarding-every.js';

import {
  ALL_RATE,
  CONNECTIONS,
  conversionRun,
  cpuMs,
  createAccount,
  createStore,
  DURATION,
  EVERY_LATENCY,
  loadSecretsKey,
  median,
  openSqlite,
  PIXEL,
  QUEUED,
  RATE,
  ROUNDS,
  SecretBox,
  startFake,
  TOKEN,
  trackConversion,
} from './forwarding-setup.js';
import { bin, startServer } from './lib.js';

const ONLY_EVERY = Boolean(process.env.BENCH_ONLY_EVERY);

async function queue(dataDir, count) {
  const database = openSqlite(dataDir);
  await database.migrate();
  const account = await createAccount(database, { email: 'bench@example.com' });
  const tenant = { accountId: account.accountId, livemode: true };
  const secrets = new SecretBox(loadSecretsKey({ secretsKey: undefined, dataDir }));
  const store = await createStore(
    database,
    tenant,
    { name: 'Bench', domain: 'bench.example.com', platform: 'custom', pixelId: PIXEL, capiAccessToken: TOKEN },
    secrets,
  );
  const started = performance.now();
  for (let start = 0; start < count; start += 500) {
    const chunk = [];
    for (let i = start; i < Math.min(count, start + 500); i++) {
      chunk.push(
        trackConversion(database, tenant, {
          storeId: store.id,
          eventType: 'Purchase',
          orderId: `bench-${i}`,
          eventValue: 49.99,
          currency: 'USD',
          customerData: { email: `buyer${i}@example.com`, phone: `+1 650 555 ${String(i).padStart(4, '0')}`, country: 'US' },
          products: [{ productId: 'sku-1', price: 24.99, quantity: 2 }],
          ipAddress: '203.0.113.9',
          userAgent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0) AppleWebKit/605.1.15 Safari/605.1.15',
          eventSourceUrl: 'https://bench.example.com/thanks',
        }),
      );
    }
    await Promise.all(chunk);
  }
  const queuedMs = performance.now() - started;
  await database.close();
  return queuedMs;
}

/** Starts the server on a copy of the queued data and times delivery of the whole backlog. */
async function delivery(template, latencyMs) {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'waytrack-bench-fwd-'));
  cpSync(template, dataDir, { recursive: true });
  const fake = await startFake(latencyMs);
  try {
    const reader = new SqliteDriver(path.join(dataDir, 'waytrack.db'), { readonly: true });
    const pending = reader.prepare("select count(*) as n from conversions where capi_status != 'sent'");
    const server = await startServer({ DATA_DIR: dataDir, META_GRAPH_URL: fake.url });
    let ackedMs;
    let recordedMs;
    const deadline = performance.now() + 60_000;
    while (recordedMs === undefined && performance.now() < deadline) {
      if (ackedMs === undefined && fake.acked.size >= QUEUED) ackedMs = performance.now() - server.readyAt;
      if (ackedMs !== undefined && pending.get().n === 0) recordedMs = performance.now() - server.readyAt;
      await new Promise((r) => setTimeout(r, 5));
    }
    await server.stop();
    reader.close();
    if (recordedMs === undefined) throw new Error(`backlog not delivered within 60 s (${fake.acked.size} acknowledged)`);
    return { latencyMs, ackedMs, recordedMs, startupMs: server.readyAt - server.startedAt, ...fake.stats() };
  } finally {
    await fake.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function latency(syncWaitMs, rounds) {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'waytrack-bench-lat-'));
  const fake = await startFake(0);
  const env = {
    DATA_DIR: dataDir,
    META_GRAPH_URL: fake.url,
    CAPI_SYNC_WAIT_MS: String(syncWaitMs),
    RATE_LIMIT_RPS: '1000000',
    RATE_LIMIT_BURST: '1000000',
  };
  const server = await startServer(env);
  try {
    const account = JSON.parse(
      execFileSync(process.execPath, [bin, 'account', 'create', '--email', 'lat@example.com', '--json'], {
        env: { ...process.env, LOG_LEVEL: 'silent', ...env },
        encoding: 'utf8',
      }),
    );
    const headers = { authorization: `Bearer ${account.keys.live}`, 'content-type': 'application/json' };
    const makeStore = async (extra) => {
      const res = await fetch(`${server.url}/v1/stores`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ name: 'Bench', domain: 'bench.example.com', platform: 'custom', ...extra }),
      });
      return (await res.json()).data.id;
    };
    const off = await makeStore({});
    const on = await makeStore({ pixelId: PIXEL, capiAccessToken: TOKEN });
    await conversionRun(server.url, headers, off, { duration: 3 }); // warm-up, not reported
    const results = [];
    for (const load of ['fixed', 'max']) {
      const options = load === 'fixed' ? { overallRate: RATE } : {};
      for (let i = 0; i < rounds; i++) {
        let cpu = cpuMs(server.child.pid);
        const plain = await conversionRun(server.url, headers, off, options);
        results.push({
          load,
          forwarding: 'off',
          cpuPerRequest: (cpuMs(server.child.pid) - cpu) / plain.requests.total,
          ...plain,
        });
        const before = fake.stats().requests;
        cpu = cpuMs(server.child.pid);
        const result = await conversionRun(server.url, headers, on, options);
        results.push({
          load,
          forwarding: 'on',
          graphRequests: fake.stats().requests - before,
          cpuPerRequest: (cpuMs(server.child.pid) - cpu) / result.requests.total,
          ...result,
        });
      }
    }
    return { results, fakeAcked: fake.acked.size };
  } finally {
    await server.stop();
    await fake.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main() {
  process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0'; // the bench talks to its own self-signed server on 127.0.0.1
  console.log(
    `\nWaytrack forwarding bench — ${QUEUED} queued conversions; ${CONNECTIONS} connections, ${DURATION} s per latency run`,
  );

  const template = mkdtempSync(path.join(tmpdir(), 'waytrack-bench-queue-'));
  try {
    if (ONLY_EVERY) return everyDestination();
    const queuedMs = await queue(template, QUEUED);
    console.log(`queued ${QUEUED} conversions with their outbox jobs in ${queuedMs.toFixed(0)} ms (no dispatcher running)`);
    for (const latencyMs of [0, 150]) {
      const d = await delivery(template, latencyMs);
      console.log(
        `delivery, fake answering in ${String(latencyMs).padStart(3)} ms: all acknowledged ${d.ackedMs.toFixed(0)} ms and ` +
          `recorded sent ${d.recordedMs.toFixed(0)} ms after the server was ready (target ≤ 5000 ms); ` +
          `${d.requests} requests, largest batch ${d.largest}; ready ${d.startupMs.toFixed(0)} ms after spawn`,
      );
    }
  } finally {
    rmSync(template, { recursive: true, force: true });
  }
  await everyDestination();
  if (process.env.BENCH_ONLY_DELIVERY) return;
  await metaLatency();
}

/** Part 3: all eight destinations (bench/forwarding-every.js). */
async function everyDestination() {
  if (!process.env.BENCH_ONLY_EVERY_LATENCY) await everyDelivery();
  if (process.env.BENCH_ONLY_DELIVERY) return;
  await everyLatency();
}

async function everyDelivery() {
  const { queuedMs, results: every } = await deliveryEveryDestination(EVERY_LATENCY, ROUNDS);
  const last = every.at(-1);
  console.log(
    `\nevery destination (${KINDS.length}), fakes answering in ${EVERY_LATENCY} ms: ${QUEUED} conversions ` +
      `(queued in ${(queuedMs / 1000).toFixed(0)} s, no dispatcher running), ` +
      `${Object.values(last.jobs).reduce((a, b) => a + b, 0)} jobs; each fake received exactly its events, once each:\n  ` +
      KINDS.map((k) => `${k} ${last.got[k]}`).join(', '),
  );
  for (const d of every) {
    console.log(
      `  all recorded sent ${d.recordedMs.toFixed(0)} ms after the server was ready (target ≤ 5000 ms); ` +
        `${d.requests} requests (Reddit ${d.redditRequests}, at most ${d.redditPeak} in any second)`,
    );
  }
  console.log(
    `  median ${median(every.map((d) => d.recordedMs)).toFixed(0)} ms, load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
}

async function everyLatency() {
  const perDestinations = await latencyEveryDestination(ROUNDS, DURATION);
  console.log(
    `\nPOST /v1/track/conversion at ${ALL_RATE} req/s open loop, Meta only vs all eight configured, every conversion ` +
      `with ${CLICK_MIX === 'one' ? "one other platform's click id (the next of the seven each time)" : 'the seven other click ids'}` +
      ` (CAPI_SYNC_WAIT_MS=0, ${DURATION} s runs interleaved):`,
  );
  for (const r of perDestinations.results) {
    console.log(
      `  round ${r.round} ${r.destinations === 'one' ? 'Meta only ' : 'all eight '} ${String(r.achieved).padStart(5)} req/s  ` +
        `p50 ${r.p50} ms  p90 ${r.p90} ms  p99 ${r.p99} ms  ` +
        `server CPU ${(r.cpuPerRequest * 1000).toFixed(0)} µs/req (bench and fakes ${(r.benchCpuPerRequest * 1000).toFixed(0)})  non-2xx ${r.non2xx}  errors ${r.errors}`,
    );
  }
  for (const [name, f] of process.env.BENCH_EVERY_STORE
    ? []
    : [
        ['p50', (r) => r.p50],
        ['p99', (r) => r.p99],
        ['CPU/request', (r) => r.cpuPerRequest],
      ]) {
    const of = (kind) => perDestinations.results.filter((r) => r.destinations === kind).map(f);
    const one = median(of('one'));
    const all = median(of('all'));
    const ratios = perDestinations.results
      .filter((r) => r.destinations === 'all')
      .map((r) => f(r) / f(perDestinations.results.find((o) => o.destinations === 'one' && o.round === r.round)));
    console.log(
      `  median ${name}: Meta only ${one.toFixed(2)}, all eight ${all.toFixed(2)}: ratio ${(all / one).toFixed(2)}` +
        ` (per round ${ratios.map((x) => x.toFixed(2)).join(' / ')})${name === 'p99' ? '; target ≤ 1.1' : ''}`,
    );
  }
  console.log(
    `  delivered during the runs: ${KINDS.map((k) => `${k} ${perDestinations.delivered[k]}`).join(', ')}; load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
}

/** Part 2: Meta's forwarding on and off. */
async function metaLatency() {
  const { results } = await latency(0, ROUNDS);
  console.log('\nPOST /v1/track/conversion, CAPI_SYNC_WAIT_MS=0 (one server, runs interleaved):');
  for (const r of results) {
    const load = r.load === 'fixed' ? `${RATE} req/s fixed` : 'max rate';
    console.log(
      `  ${load.padEnd(16)} forwarding ${r.forwarding.padEnd(3)}  ${r.requests.average.toFixed(0).padStart(6)} req/s  ` +
        `p50 ${r.latency.p50} ms  p90 ${r.latency.p90} ms  p99 ${r.latency.p99} ms  ` +
        `server CPU ${(r.cpuPerRequest * 1000).toFixed(0)} µs/req (bench and fakes ${(r.benchCpuPerRequest * 1000).toFixed(0)})  non-2xx ${r.non2xx}  errors ${r.errors}` +
        (r.graphRequests === undefined ? '' : `  (${r.graphRequests} Graph API requests)`),
    );
  }
  for (const load of ['fixed', 'max']) {
    const p99 = (f) =>
      results
        .filter((r) => r.load === load && r.forwarding === f)
        .map((r) => r.latency.p99)
        .join(' / ');
    const rps = (f) =>
      results
        .filter((r) => r.load === load && r.forwarding === f)
        .map((r) => r.requests.average.toFixed(0))
        .join(' / ');
    console.log(
      `  ${load === 'fixed' ? `${RATE} req/s` : 'max rate'}: p99 off ${p99('off')} ms, on ${p99('on')} ms; ` +
        `req/s off ${rps('off')}, on ${rps('on')}`,
    );
  }

  const waiting = await latency(1500, 1);
  for (const load of ['fixed', 'max']) {
    const on = waiting.results.find((r) => r.load === load && r.forwarding === 'on');
    console.log(
      `Reference, CAPI_SYNC_WAIT_MS=1500 (default), fake answering at once, ${load === 'fixed' ? `${RATE} req/s` : 'max rate'}: ` +
        `forwarding on ${on.requests.average.toFixed(0)} req/s, p50 ${on.latency.p50} ms, p99 ${on.latency.p99} ms`,
    );
  }
}

await main();
