// node bench/client.js — what @waytrack/client costs per call: 1,000 sequential
// POST /v1/track/click through the client and through bare requests, on one keep-alive
// connection each, against the same server.
//
//   node bench/client.js              builds the server and the client, starts `waytrack serve`
//                                     on a fresh embedded database, and measures
//   BENCH_URL=https://localhost:8443/v1 BENCH_KEY=wt_test_… BENCH_CA=data/tls/localhost-cert.pem \
//   BENCH_STORE=st_… node bench/client.js
//                                     measures against a server already running (client built first)
//
// Environment: BENCH_CLICKS (1000 per variant), BENCH_WARMUP (100 per variant).
// The measuring runs in a child process started with NODE_EXTRA_CA_CERTS, so global fetch (bare
// and the client's default transport) trusts the server's certificate with verification on.
// The last line printed is the result as JSON, for a caller such as bench/run.js.
import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = path.join(root, 'server/bin/waytrack.js');
const CLICKS = Number(process.env.BENCH_CLICKS ?? 1000);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 100);

/** The server's sources into server/dist (what the CLI runs), and the client's ESM and CJS builds. */
function build() {
  execFileSync(process.execPath, [path.join(root, 'server/scripts/build.mjs')], { stdio: 'inherit' });
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: path.join(root, 'packages/client'), stdio: 'inherit' });
}

/** `waytrack serve` on a fresh data directory; resolves once it prints where it listens. */
async function startServer(dataDir) {
  const env = { ...process.env, DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn', RATE_LIMIT_RPS: '1000000' };
  env.RATE_LIMIT_BURST = '1000000';
  delete env.DATABASE_URL; // always the embedded database: this measures the client, not the engine
  const child = spawn(process.execPath, [bin, 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${out}`)), 60_000);
    const onData = (d) => {
      out += d;
      const match = /listening on (https:\/\/\S+?)\/v1/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${out}`));
    });
  });
  const ca = /certificate for localhost: (\S+)/.exec(out)?.[1];
  if (!ca) throw new Error(`the server printed no certificate path:\n${out}`);
  const stop = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  // The certificate is for localhost: talk to it by that name.
  return { url: `${url.replace('127.0.0.1', 'localhost')}/v1`, ca, stop, env };
}

/** One JSON request over node:https trusting `ca` (setup only; not measured). */
function setupRequest(method, url, { ca, key, body }) {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers = { authorization: `Bearer ${key}`, ...(payload && { 'content-type': 'application/json' }) };
    const req = https.request(url, { method, headers, ca: readFileSync(ca) }, (res) => {
      let text = '';
      res.on('data', (d) => {
        text += d;
      });
      res.on('end', () => (res.statusCode < 300 ? resolve(JSON.parse(text)) : reject(new Error(`${res.statusCode} ${text}`))));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

async function main() {
  let target;
  let cleanup = async () => {};
  if (process.env.BENCH_URL) {
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: path.join(root, 'packages/client'), stdio: 'inherit' });
    const { BENCH_URL: url, BENCH_KEY: key, BENCH_CA: ca, BENCH_STORE: storeId } = process.env;
    if (!key || !ca || !storeId) throw new Error('with BENCH_URL, set BENCH_KEY, BENCH_CA and BENCH_STORE too');
    target = { url: url.replace(/\/+$/, ''), key, ca: path.resolve(ca), storeId };
  } else {
    build();
    const dataDir = mkdtempSync(path.join(tmpdir(), 'waytrack-bench-client-'));
    const server = await startServer(dataDir);
    cleanup = async () => {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    };
    const created = execFileSync(process.execPath, [bin, 'account', 'create', '--email', 'bench@example.com', '--json'], {
      env: server.env,
      encoding: 'utf8',
    });
    const key = JSON.parse(created).keys.live;
    const store = await setupRequest('POST', `${server.url}/stores`, {
      ca: server.ca,
      key,
      body: { name: 'Bench', domain: 'bench.example.com', platform: 'custom' },
    });
    target = { url: server.url, key, ca: server.ca, storeId: store.data.id };
  }
  try {
    const result = await measureInChild(target);
    printTable(result);
    console.log(JSON.stringify(result));
  } finally {
    await cleanup();
  }
}

/** Runs `--measure` in a child that trusts the server's certificate through NODE_EXTRA_CA_CERTS. */
function measureInChild(target) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--measure', JSON.stringify(target)], {
      env: { ...process.env, NODE_EXTRA_CA_CERTS: target.ca },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`measuring process exited with ${code}: ${out}`));
      resolve(JSON.parse(out.trim().split('\n').at(-1)));
    });
  });
}

const CLICK_BODY = (storeId, fbclid) => ({
  fbclid,
  storeId,
  landingPage: `https://bench.example.com/p?utm_source=facebook&fbclid=${fbclid}`,
  ipAddress: '203.0.113.9',
  userAgent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0) AppleWebKit/605.1.15 Safari/605.1.15',
});

/** The four ways to send a click: the client over each of its transports, and each transport bare. */
async function variants(target) {
  const { Waytrack } = await import('../packages/client/dist/esm/index.js');
  // The bare requests send what the client sends, Idempotency-Key included (which costs the
  // server a write of its own), so the difference is the library's own cost.
  const base = { authorization: `Bearer ${target.key}`, 'content-type': 'application/json', accept: 'application/json' };
  const headers = () => ({ ...base, 'idempotency-key': randomUUID() });
  const url = `${target.url}/track/click`;
  const agent = new https.Agent({ keepAlive: true, ca: readFileSync(target.ca) });
  const viaFetch = new Waytrack({ apiKey: target.key, baseUrl: target.url });
  const viaHttps = new Waytrack({ apiKey: target.key, baseUrl: target.url, ca: target.ca });
  const check = (status) => {
    if (status !== 200) throw new Error(`click answered ${status}`);
  };
  return {
    'bare fetch': async (body) => {
      const res = await fetch(url, { method: 'POST', headers: headers(), body: JSON.stringify(body) });
      check(res.status);
      await res.json();
    },
    'client (global fetch)': (body) => viaFetch.track.click(body),
    'bare node:https': (body) =>
      new Promise((resolve, reject) => {
        const payload = JSON.stringify(body);
        const req = https.request(url, {
          method: 'POST',
          headers: { ...headers(), 'content-length': Buffer.byteLength(payload) },
          agent,
        });
        req.on('response', (res) => {
          let text = '';
          res.on('data', (d) => {
            text += d;
          });
          res.on('end', () => {
            check(res.statusCode);
            resolve(JSON.parse(text));
          });
        });
        req.on('error', reject);
        req.end(payload);
      }),
    'client (node:https, ca)': (body) => viaHttps.track.click(body),
  };
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

/** Rounds of this many clicks per variant, variants taking turns, so a busy moment of the machine hits all alike. */
const ROUND = 100;

async function measure(target) {
  const all = Object.entries(await variants(target));
  let n = 0;
  const next = () => CLICK_BODY(target.storeId, `bench_client_${process.pid}_${n++}`);
  for (const [, send] of all) for (let i = 0; i < WARMUP; i++) await send(next());
  const times = Object.fromEntries(all.map(([name]) => [name, []]));
  for (let done = 0; done < CLICKS; done += ROUND) {
    for (const [name, send] of all) {
      for (let i = 0; i < Math.min(ROUND, CLICKS - done); i++) {
        const t0 = performance.now();
        await send(next());
        times[name].push(performance.now() - t0);
      }
    }
  }
  const runs = {};
  for (const [name, list] of Object.entries(times)) {
    const totalMs = list.reduce((a, t) => a + t, 0);
    list.sort((a, b) => a - b);
    runs[name] = {
      clicks: list.length,
      totalMs: Math.round(totalMs),
      perSecond: Math.round((list.length * 1000) / totalMs),
      p50: Number(percentile(list, 50).toFixed(2)),
      p99: Number(percentile(list, 99).toFixed(2)),
    };
  }
  const overhead = (client, bare) => Number(((runs[client].totalMs / runs[bare].totalMs - 1) * 100).toFixed(1));
  console.log(
    JSON.stringify({
      runs,
      overheadPercent: {
        'client (global fetch) vs bare fetch': overhead('client (global fetch)', 'bare fetch'),
        'client (node:https, ca) vs bare node:https': overhead('client (node:https, ca)', 'bare node:https'),
      },
    }),
  );
}

function printTable(result) {
  console.log(
    `${CLICKS} sequential POST /v1/track/click per variant (after ${WARMUP} warm-up; variants take turns ${ROUND} at a time), one keep-alive connection each:`,
  );
  for (const [name, r] of Object.entries(result.runs)) {
    console.log(
      `  ${name.padEnd(24)} ${String(r.totalMs).padStart(6)} ms  ${String(r.perSecond).padStart(5)} req/s  p50 ${r.p50} ms  p99 ${r.p99} ms`,
    );
  }
  for (const [name, pct] of Object.entries(result.overheadPercent)) console.log(`  overhead, ${name}: ${pct} %`);
}

if (process.argv[2] === '--measure') await measure(JSON.parse(process.argv[3]));
else await main();
