// node bench/track-cpu.js [--ref COMMIT] — CPU per click of the tracking path without HTTP:
// trackClick (checks, store lookup, row) and its durable write (group commit, writer thread, log
// sync, rollup queue row) on an embedded SQLite database, CLICKS clicks with IN_FLIGHT (50)
// awaited at a time, then trackBatch with batches of 100 clicks, 4 at a time. Prints the process's
// CPU per click by thread (the event loop, and the others by id), from /proc. No TLS, no HTTP, no
// load generator on the cores: steadier than `npm run bench` for A/B runs of the database path
// on a shared machine (run it alternately on the working tree and on `--ref <commit>`).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { argValue, build, source } from './lib.js';

const CLICKS = Number(process.env.BENCH_CLICKS ?? 20_000);
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 50);
const BATCHES = Number(process.env.BENCH_BATCHES ?? 200);

function threadsCpu() {
  const out = {};
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const fields = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1].split(' ');
      out[tid === String(process.pid) ? 'main' : tid] = ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
    } catch {}
  }
  return out;
}

const code = argValue('--ref') ? build() : 'working tree (sources)';
const { openSqlite } = await source('db/sqlite/database.ts');
const { createAccount } = await source('accounts/accounts.ts');
const { createStore } = await source('stores/stores.ts');
const { trackClick } = await source('tracking/clicks.ts');
const { trackBatch, CLICK_EVENT } = await source('tracking/batch.ts');

const dataDir = mkdtempSync(path.join(tmpdir(), 'waytrack-track-cpu-'));
const database = openSqlite(dataDir);
try {
  await database.migrate();
  const account = await createAccount(database, { email: 'cpu@example.com' });
  const tenant = { accountId: account.accountId, livemode: true };
  const store = await createStore(database, tenant, { name: 'CPU', domain: 'bench.example.com', platform: 'custom' });
  let n = 0;
  const click = () => ({
    fbclid: `cpu_${process.pid}_${n++}`,
    storeId: store.id,
    landingPage: 'https://bench.example.com/p?utm_source=facebook&utm_campaign=bf',
    ipAddress: '203.0.113.9',
    userAgent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0) AppleWebKit/605.1.15 Safari/605.1.15',
  });
  const clicks = async (total) => {
    let started = 0;
    const lane = async () => {
      while (started++ < total) await trackClick(database, tenant, click());
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
  };
  const batches = async (total) => {
    let started = 0;
    const fatal = () => false;
    const lane = async () => {
      while (started++ < total) {
        const items = Array.from({ length: 100 }, () => ({ kind: CLICK_EVENT, input: click() }));
        await trackBatch(database, tenant, items, { fatal });
      }
    };
    await Promise.all(Array.from({ length: 4 }, lane));
  };
  const measure = async (label, work, count) => {
    const before = threadsCpu();
    const started = performance.now();
    await work();
    const wall = performance.now() - started;
    const after = threadsCpu();
    const parts = Object.keys(after)
      .map((t) => [t, after[t] - (before[t] ?? 0)])
      .filter(([, ms]) => ms > 0)
      .sort((a, b) => b[1] - a[1]);
    const us = (ms) => ((1000 * ms) / count).toFixed(1);
    const total = parts.reduce((a, [, ms]) => a + ms, 0);
    console.log(
      `${label}: ${us(total)} µs/click (${parts.map(([t, ms]) => `${t} ${us(ms)}`).join(', ')}); ${Math.round((count * 1000) / wall)}/s`,
    );
  };
  await clicks(2000); // warm-up: compiled code, caches, the threads started
  await measure('trackClick', () => clicks(CLICKS), CLICKS);
  await measure('trackBatch (100 clicks)', () => batches(BATCHES), BATCHES * 100);
  console.log(`(${code})`);
} finally {
  await database.close();
  rmSync(dataDir, { recursive: true, force: true });
}
