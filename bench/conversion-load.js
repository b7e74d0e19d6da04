// The conversion runs of bench/attribution.js: POST /v1/track/conversion open loop (or, with
// --burst, the older burst method), with the CPU per conversion of the server, PostgreSQL and
// the client, and how a run is reported.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { recentFbclids } from './attribution-store.js';
import { benchConversion, benchEngine, cannon, openLoop, withCpu } from './lib.js';

const WRITE_SECONDS = Number(process.env.BENCH_WRITE_SECONDS ?? 10);
export const RATE = Number(process.env.BENCH_CONVERSION_RATE ?? 500);
const BURST = process.argv.includes('--burst');
/** PostgreSQL's CPU is reported on PostgreSQL only (on SQLite it is other processes' database). */
const ON_POSTGRES = benchEngine().name === 'postgres';

/**
 * POST /v1/track/conversion at RATE/s for WRITE_SECONDS after a 2 s warm-up; each names a recent
 * click (fbclid) and carries the buyer's IP and user agent, and with `allSignals` also a
 * fingerprint and an email (bench/lib.js benchConversion). Open loop by default (bench/open-loop.js
 * in a process of its own: Poisson arrivals, latency from the scheduled time, up to 64
 * connections); with --burst autocannon in this process, 10 connections, each second's
 * requests sent at once (the method of the figures before 2026-11-27). With `readEveryMs`, a
 * dashboard reads the store's metrics meanwhile (each read first folds the rows stored since).
 * Returns `exact` percentiles (ms), `rate` (answered/s), non-2xx, errors, `statuses`, how many
 * answers were attributed (open loop), the dashboard's read times, and `cost`: CPU µs per
 * conversion of the server (all threads), PostgreSQL (all its processes) and the client.
 */
export async function conversionLatency(server, data, label, { allSignals = true, readEveryMs = 0 } = {}) {
  const { url } = server;
  const headers = { authorization: `Bearer ${data.key}`, 'content-type': 'application/json' };
  const recent = recentFbclids(data);
  const dir = mkdtempSync(path.join(tmpdir(), 'waytrack-attr-load-'));
  const recentFile = path.join(dir, 'recent.json');
  writeFileSync(recentFile, JSON.stringify(recent));
  const open = (runLabel, duration) =>
    openLoop({
      url,
      kind: 'conversion',
      rate: RATE,
      duration,
      key: data.key,
      storeId: data.storeId,
      recentFile,
      label: runLabel,
      allSignals,
      // BENCH_SLOW_FILE=PREFIX: each run's requests of 20 ms or more, for matching with a profile (bench/README.md).
      ...(process.env.BENCH_SLOW_FILE && { slowFile: `${process.env.BENCH_SLOW_FILE}-${runLabel}.json` }),
    });
  let n = 0;
  const request = {
    method: 'POST',
    headers,
    setupRequest: (req) => ({
      ...req,
      body: JSON.stringify(benchConversion({ storeId: data.storeId, recent, label, allSignals, i: n++ })),
    }),
  };
  const burst = (duration) =>
    cannon({ url: `${url}/v1/track/conversion`, connections: 10, duration, overallRate: RATE, requests: [request] });
  try {
    // warm-up: compiled statements, caches, JIT
    await (BURST ? burst(2) : open(`${label}_warm`, 2));
    const reads = [];
    let measuring = true;
    const dashboard = (async () => {
      while (readEveryMs > 0 && measuring) {
        await new Promise((resolve) => setTimeout(resolve, readEveryMs));
        const started = performance.now();
        const response = await fetch(`${url}/v1/analytics/metrics?storeId=${data.storeId}`, { headers });
        if (response.status !== 200) throw new Error(`${label}: metrics read ${response.status}`);
        reads.push(performance.now() - started);
      }
    })();
    const pids = BURST ? { server: server.child.pid, client: process.pid } : { server: server.child.pid };
    const { value, cpu, wallMs } = await withCpu(pids, () => (BURST ? burst(WRITE_SECONDS) : open(label, WRITE_SECONDS)), {
      database: server.database,
    });
    measuring = false;
    await dashboard;
    reads.sort((a, b) => a - b);
    // Non-2xx answers are reported in the table (latencyNote), not hidden: a 503 under load is a finding.
    const result = BURST
      ? {
          exact: value.exact,
          rate: value.requests.average,
          answered: value.requests.total,
          non2xx: value.non2xx,
          errors: value.errors + value.timeouts,
          statuses: Object.fromEntries(Object.entries(value.statusCodeStats ?? {}).map(([code, { count }]) => [code, count])),
        }
      : {
          exact: { p50: value.p50, p90: value.p90, p99: value.p99, p999: value.p999, max: value.max },
          rate: value.achieved,
          answered: value.answered,
          non2xx: value.non2xx,
          errors: value.errors,
          statuses: value.statuses,
          attributed: value.attributed,
          maxLagMs: value.maxLagMs,
          serverP99: value.serverTime.p99,
        };
    // CPU per conversion, µs: a share of one core (%) over the run's wall time ÷ answers.
    const perConversion = (share) => Math.round((share * wallMs * 10) / Math.max(1, result.answered));
    const cost = {
      server: perConversion(cpu.server),
      postgres: ON_POSTGRES ? perConversion(cpu.postgres) : 0,
      // The bench database's backends alone: steadier than all of PostgreSQL on a shared machine.
      backends: ON_POSTGRES ? Math.round((cpu.postgresDbMs * 1000) / Math.max(1, result.answered)) : 0,
      client: BURST ? perConversion(cpu.client) : Math.round((value.cpuMs * 1000) / Math.max(1, result.answered)),
    };
    return { ...result, reads, cpu, cost };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const latencyNote = (r) =>
  `p99 ${r.exact.p99} ms${r.exact.p999 !== undefined ? `, p99.9 ${r.exact.p999} ms` : ''}, ${r.rate.toFixed(0)} req/s` +
  `${r.attributed !== undefined ? `, ${r.attributed} of ${r.answered} attributed` : ''}` +
  `${r.maxLagMs !== undefined ? `, generator lag ≤ ${r.maxLagMs} ms` : ''}` +
  `${r.serverP99 !== undefined ? `, p99 from send to answer ${r.serverP99} ms` : ''}` +
  `${r.non2xx ? `, ${r.non2xx} NON-2XX (${statusList(r)})` : ''}` +
  `${r.errors ? `, ${r.errors} errors/timeouts` : ''}${r.cost ? `; CPU/conversion ${costNote(r.cost)}` : ''}`;

/** CPU per request, µs: the server's, PostgreSQL's (when it runs) and the client's. */
const costNote = (cost) =>
  `server ${cost.server} µs${cost.postgres > 0 ? `, PostgreSQL ${cost.postgres} µs (its backends ${cost.backends} µs)` : ''}, client ${cost.client} µs`;

/** The status codes of a run, e.g. "200×4990 503×10". */
const statusList = (r) =>
  Object.entries(r.statuses ?? {})
    .map(([code, count]) => `${code}×${count}`)
    .join(' ');

/** The method of the conversion runs, for the report. */
export const METHOD = BURST
  ? `burst: autocannon, 10 connections, each second's ${RATE} conversions sent at once`
  : `open loop: Poisson arrivals at ${RATE}/s, latency from the scheduled time (bench/open-loop.js)`;
