// node bench/cpu-ab.js [--ref COMMIT] — CPU per click and per batched event of the server, by
// thread, for A/B comparisons of a change (run it alternately on the working tree and on
// `--ref HEAD`, a few times each: CPU per request is steadier than throughput on a shared
// machine). SQLite; wrk, BENCH_CONNECTIONS (50) for clicks, a fifth of them for batches of
// BENCH_BATCH_EVENTS (100), BENCH_DURATION (6) s per run after a 2 s warm-up of clicks.
// Threads are told apart by their name in /proc (the event loop is the process's own id).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { build, cli, startServer } from './lib.js';
import { findWrk, wrkRun } from './wrk.js';

const DURATION = Number(process.env.BENCH_DURATION ?? 6);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const EVENTS = Number(process.env.BENCH_BATCH_EVENTS ?? 100);

/** CPU ms of each thread of `pid`, by thread (main, or its name and id). */
function threadsCpu(pid) {
  const out = {};
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const fields = stat.split(') ')[1].split(' ');
      const name = tid === String(pid) ? 'main' : `${stat.slice(stat.indexOf('(') + 1, stat.indexOf(') '))}:${tid}`;
      const ms = ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
      out[name] = (out[name] ?? 0) + ms;
    } catch {}
  }
  return out;
}

const code = build();
process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
const dataDir = mkdtempSync(path.join(tmpdir(), 'waytrack-ab-'));
const env = { DATA_DIR: dataDir, RATE_LIMIT_RPS: '1000000', RATE_LIMIT_BURST: '10000000' };
const server = await startServer(env, 30_000);
try {
  const key = JSON.parse(cli(['account', 'create', '--email', 'ab@example.com', '--json'], env)).keys.live;
  const response = await fetch(`${server.url}/v1/stores`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'AB', domain: 'bench.example.com', platform: 'custom' }),
  });
  const storeId = (await response.json()).data.id;
  const wrkPath = findWrk();
  const url = `${server.url}/v1/track`;
  await wrkRun({ wrkPath, url: `${url}/click`, connections: CONNECTIONS, duration: 2, click: { key, storeId } });
  const measure = async (label, options, per) => {
    const before = threadsCpu(server.child.pid);
    const result = await wrkRun({ wrkPath, duration: DURATION, ...options });
    const after = threadsCpu(server.child.pid);
    const n = result.ok * per;
    const parts = Object.keys(after)
      .map((t) => [t, after[t] - (before[t] ?? 0)])
      .filter(([, ms]) => ms > 0)
      .sort((a, b) => b[1] - a[1]);
    const total = parts.reduce((a, [, ms]) => a + ms, 0);
    const us = (ms) => ((1000 * ms) / n).toFixed(0);
    console.log(
      `${label}: ${us(total)} µs/${per === 1 ? 'click' : 'event'} (${parts.map(([t, ms]) => `${t} ${us(ms)}`).join(', ')}); ` +
        `${Math.round(result.average * per)}/s, non-2xx ${result.non2xx}`,
    );
  };
  await measure('click', { url: `${url}/click`, connections: CONNECTIONS, click: { key, storeId } }, 1);
  await measure(
    'batch',
    { url: `${url}/batch`, connections: Math.max(2, Math.round(CONNECTIONS / 5)), batch: { key, storeId, events: EVENTS } },
    EVENTS,
  );
  const peak = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${server.child.pid}/status`, 'utf8'))?.[1];
  console.log(`peak RSS ${Math.round(Number(peak) / 1024)} MB (${code})`);
} finally {
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
