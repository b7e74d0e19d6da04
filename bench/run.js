import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { build, cannon, cli, startServer } from './lib.js';

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);

/** Peak resident memory of a process, in MB (Linux). */
function peakRssMb(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}

function run(options) {
  return cannon({ connections: CONNECTIONS, duration: DURATION, ...options });
}

async function main() {
  build();
  process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0'; // the bench talks to its own self-signed server on 127.0.0.1
  const dataDir = mkdtempSync(path.join(tmpdir(), 'waytrack-bench-'));
  const env = { DATA_DIR: dataDir, RATE_LIMIT_RPS: '1000000', RATE_LIMIT_BURST: '10000000' };
  const { child, url, readyMs } = await startServer(env, 30_000);
  try {
    const account = JSON.parse(cli(['account', 'create', '--email', 'bench@example.com', '--json'], env));
    const headers = { authorization: `Bearer ${account.keys.live}`, 'content-type': 'application/json' };
    const storeRes = await fetch(`${url}/v1/stores`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: 'Bench', domain: 'bench.example.com', platform: 'custom' }),
    });
    const storeId = (await storeRes.json()).data.id;

    const health = await run({ url: `${url}/healthz` });
    let n = 0;
    const clicks = await run({
      url: `${url}/v1/track/click`,
      method: 'POST',
      headers,
      requests: [
        {
          setupRequest: (req) => ({
            ...req,
            body: JSON.stringify({
              fbclid: `bench_${process.pid}_${n++}`,
              storeId,
              landingPage: 'https://bench.example.com/p?utm_source=facebook&utm_campaign=bf',
              ipAddress: '203.0.113.9',
              userAgent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0) AppleWebKit/605.1.15 Safari/605.1.15',
            }),
          }),
        },
      ],
    });
    const rss = peakRssMb(child.pid);
    const rows = [
      ['ready after start', `${readyMs.toFixed(0)} ms`, 'target ≤ 1500 ms'],
      [
        'GET /healthz',
        `${health.requests.average.toFixed(0)} req/s`,
        `p50 ${health.latency.p50} ms, p99 ${health.latency.p99} ms`,
      ],
      [
        'POST /v1/track/click',
        `${clicks.requests.average.toFixed(0)} req/s`,
        `p50 ${clicks.latency.p50} ms, p99 ${clicks.latency.p99} ms, non-2xx ${clicks.non2xx}, errors ${clicks.errors}`,
      ],
      ['click ingest ratio', (clicks.requests.average / health.requests.average).toFixed(2), 'target ≥ 0.8 (SQLite, fsynced)'],
      ['peak RSS (server)', `${rss.toFixed(0)} MB`, 'target ≤ 250 MB'],
    ];
    console.log(`\nWaytrack bench — ${CONNECTIONS} connections, ${DURATION} s per run, embedded database`);
    for (const [name, value, note] of rows) console.log(`${name.padEnd(24)} ${String(value).padStart(14)}   ${note}`);
  } finally {
    child.kill('SIGTERM');
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
