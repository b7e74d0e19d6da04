// node bench/profile-clicks.js DIR (after `npm run build`) — where a click's CPU goes: the real
// `waytrack serve` (SQLite) with a V8 CPU profile per thread written into DIR when it stops,
// driven by wrk with clicks only (BENCH_DURATION s, BENCH_CONNECTIONS connections), so the
// profile holds the click path and nothing else. Summarize with `node bench/profile-summary.js FILE`.
// BENCH_BATCH_EVENTS=N profiles `POST /v1/track/batch` instead: N clicks a request, over a fifth
// of the connections (as bench/run.js's batch run).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cli, startServer } from './lib.js';
import { findWrk, wrkRun } from './wrk.js';

const dir = path.resolve(process.argv[2] ?? 'profiles');
process.env.BENCH_CPU_PROF = dir;
process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
const dataDir = mkdtempSync(path.join(tmpdir(), 'waytrack-profile-'));
const env = { DATA_DIR: dataDir, RATE_LIMIT_RPS: '1000000', RATE_LIMIT_BURST: '10000000' };
const server = await startServer(env, 30_000);
try {
  const key = JSON.parse(cli(['account', 'create', '--email', 'profile@example.com', '--json'], env)).keys.live;
  const response = await fetch(`${server.url}/v1/stores`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Profile', domain: 'bench.example.com', platform: 'custom' }),
  });
  const storeId = (await response.json()).data.id;
  const wrkPath = findWrk();
  if (!wrkPath) throw new Error('wrk is needed (apt-get install wrk)');
  const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
  const events = Number(process.env.BENCH_BATCH_EVENTS ?? 0);
  const result = await wrkRun({
    wrkPath,
    url: `${server.url}/v1/track/${events ? 'batch' : 'click'}`,
    connections: events ? Math.max(2, Math.round(connections / 5)) : connections,
    duration: Number(process.env.BENCH_DURATION ?? 8),
    ...(events ? { batch: { key, storeId, events } } : { click: { key, storeId } }),
  });
  const rate = events ? `${Math.round(result.average * events)} events/s` : `${Math.round(result.average)} clicks/s`;
  console.log(`${rate}, non-2xx ${result.non2xx}; profiles in ${dir}`);
} finally {
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
