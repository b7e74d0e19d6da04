// What every benchmark shares: building the service, choosing the database engine (and making
// a fresh PostgreSQL database per run), starting the real `waytrack serve`, driving it with
// autocannon from this (second) process, and reading CPU time from /proc.
import { execFileSync, spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** The server the bench runs: the repository's, or a snapshot of a commit (`build` with --ref). */
let serverDir = path.join(root, 'server');
export let bin = path.join(serverDir, 'bin/waytrack.js');
let tsxRegistered;
/**
 * A module of the sources of the server the bench runs, e.g. source('db/open.ts'), loaded
 * through tsx: for a bench's setup (writing a data set), not for what it measures. The built
 * server is a few bundles (server/scripts/build.mjs), not a module per source file.
 */
export async function source(file) {
  tsxRegistered ??= import('tsx/esm/api').then((tsx) => tsx.register());
  await tsxRegistered;
  return import(pathToFileURL(path.join(serverDir, 'src', file)).href);
}

// The servers a bench starts get the database the bench chooses (below), never the one in the
// caller's environment: DATABASE_URL names the PostgreSQL server to make bench databases on.
const callerDatabaseUrl = process.env.DATABASE_URL || undefined;
delete process.env.DATABASE_URL;

/** `--name value` or `--name=value` from the command line, else undefined. */
export function argValue(name) {
  const args = process.argv.slice(2);
  for (let i = 0; i < args.length; i++) {
    if (args[i] === name) return args[i + 1];
    if (args[i].startsWith(`${name}=`)) return args[i].slice(name.length + 1);
  }
  return undefined;
}

/**
 * The engine of this run: `--engine sqlite|postgres`, else PostgreSQL when DATABASE_URL is set,
 * else the embedded SQLite database. For PostgreSQL, `adminUrl` is DATABASE_URL (default
 * postgres://postgres@127.0.0.1:5432/postgres): a role that may create and drop databases.
 */
export function benchEngine() {
  const name = argValue('--engine') ?? (callerDatabaseUrl ? 'postgres' : 'sqlite');
  if (name === 'sqlite') return { name, label: 'embedded SQLite' };
  if (name === 'postgres' || name === 'postgresql') {
    return {
      name: 'postgres',
      label: 'PostgreSQL',
      adminUrl: callerDatabaseUrl ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    };
  }
  throw new Error(`--engine must be sqlite or postgres, got "${name}"`);
}

/**
 * A fresh PostgreSQL database for one bench run on the server of `adminUrl`, named
 * `waytrack_bench_<label>_<time>_<pid>` (or `name`), empty or a copy of `template`. `drop()`
 * removes it (and ends any session left on it).
 */
export async function createBenchDatabase(adminUrl, label, { name: fixedName, template } = {}) {
  const name = fixedName ?? `waytrack_bench_${label}_${Date.now().toString(36)}_${process.pid}`;
  const admin = async (statement) => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  if (fixedName) await admin(`drop database if exists ${pg.escapeIdentifier(name)} with (force)`);
  // With `template`: a file-level copy of that database (no session may be open on it).
  await admin(`create database ${pg.escapeIdentifier(name)}${template ? ` template ${pg.escapeIdentifier(template)}` : ''}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    /** A client connected to the bench database (the caller ends it). */
    async connect() {
      const client = new pg.Client({ connectionString: url.toString() });
      await client.connect();
      return client;
    },
    drop: () => admin(`drop database if exists ${pg.escapeIdentifier(name)} with (force)`),
  };
}

/** PostgreSQL's version and the settings that shape write and read figures, for the report. */
export async function postgresContext(adminUrl) {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const version = (await client.query('show server_version')).rows[0].server_version;
    const settings = await client.query(
      "select name, setting, unit from pg_settings where name in ('shared_buffers', 'synchronous_commit', 'fsync', 'max_connections') order by name",
    );
    const shown = settings.rows.map((r) => {
      if (r.name === 'shared_buffers') return `shared_buffers ${(Number(r.setting) * 8) / 1024} MB`;
      return `${r.name} ${r.setting}`;
    });
    return `PostgreSQL ${version} (${shown.join(', ')})`;
  } finally {
    await client.end();
  }
}

/** The machine, for the report: cores, model, and the load when the bench started. */
export function machineContext() {
  const list = cpus();
  return `${list.length} cores (${list[0]?.model.trim() ?? 'unknown CPU'}), Node ${process.versions.node}, load average at start ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`;
}

/**
 * Builds the server the bench runs and returns what it is, for the report. By default the
 * working tree's sources into server/dist (what the CLI runs). With `--ref REF` (or BENCH_REF),
 * the server of that commit instead, exported with `git archive` into a temporary directory and
 * built there (its node_modules linked to the repository's): the runs then measure exactly
 * that commit, whatever else is being edited or rebuilt in the working tree meanwhile. (A commit
 * from before server/scripts/build.mjs is compiled with tsc, as it was then.)
 */
export function build() {
  const ref = argValue('--ref') ?? process.env.BENCH_REF;
  const git = (...args) => execFileSync('git', ['-C', root, ...args], { encoding: 'utf8' }).trim();
  const buildIn = (dir) => {
    const script = path.join(dir, 'server/scripts/build.mjs');
    const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
    const args = existsSync(script) ? [script] : [tsc, '-p', path.join(dir, 'tsconfig.build.json')];
    execFileSync(process.execPath, args, { stdio: 'inherit' });
  };
  if (!ref) {
    buildIn(root);
    const dirty = git('status', '--porcelain', '--', 'server/src').length > 0;
    return `working tree at ${git('rev-parse', '--short', 'HEAD')}${dirty ? ' with uncommitted changes in server/src' : ''}`;
  }
  const commit = git('rev-parse', '--short', `${ref}^{commit}`);
  const dir = mkdtempSync(path.join(tmpdir(), 'waytrack-bench-src-'));
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  const archive = path.join(dir, 'server.tar');
  const inCommit = (file) => git('ls-tree', '--name-only', commit, '--', file) !== '';
  const files = ['server', 'tsconfig.json', 'tsconfig.build.json'].filter(inCommit);
  execFileSync('git', ['-C', root, 'archive', `--output=${archive}`, commit, ...files]);
  execFileSync('tar', ['-xf', archive, '-C', dir]);
  symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'));
  buildIn(dir);
  serverDir = path.join(dir, 'server');
  bin = path.join(serverDir, 'bin/waytrack.js');
  return `commit ${commit} (--ref ${ref})`;
}

/** Runs a CLI command and returns what it printed. */
export function cli(args, env) {
  return execFileSync(process.execPath, [bin, ...args], {
    env: { ...process.env, LOG_LEVEL: 'silent', ...env },
    encoding: 'utf8',
  });
}

/**
 * Starts `waytrack serve` on a free port and resolves when it prints the line saying where it
 * listens. `readyMs` is the time from spawn to that line.
 */
export async function startServer(env, timeoutMs = 60_000) {
  const startedAt = performance.now();
  // BENCH_CPU_PROF=DIR: the server writes a V8 CPU profile per thread into DIR when it stops
  // (open in Chrome DevTools or speedscope) — where a figure's time goes.
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(process.env.BENCH_CPU_PROF)}`] : [];
  const child = spawn(process.execPath, [...profile, bin, 'serve'], {
    // BENCH_LOG_LEVEL=info: the request log lines production writes (the benches' default is warn).
    env: { ...process.env, LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn', PORT: '0', ...env },
  });
  // What the server printed until it was ready (for the error if it never is); its later lines
  // (the request log at BENCH_LOG_LEVEL=info) are read and dropped.
  let out = '';
  let ready = false;
  // BENCH_SERVER_LOG=FILE: everything the server prints is appended to FILE too (why a read failed).
  const keep = process.env.BENCH_SERVER_LOG ? (d) => appendFileSync(process.env.BENCH_SERVER_LOG, d) : () => {};
  child.stdout.on('data', (d) => {
    keep(d);
    if (!ready) out += d;
  });
  child.stderr.on('data', (d) => {
    keep(d);
    if (!ready) out += d;
  });
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${out}`)), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${out}`));
    });
    child.stdout.on('data', () => {
      const match = ready ? null : /listening on (https:\/\/\S+?)\/v1/.exec(out);
      if (match) {
        ready = true;
        out = '';
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
  });
  const readyAt = performance.now();
  return {
    child,
    url,
    startedAt,
    readyAt,
    readyMs: readyAt - startedAt,
    /** SIGTERM, resolved once the process has exited. */
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/**
 * One autocannon run (keep-alive, no pipelining), resolved with its result, printing nothing.
 * autocannon's own percentiles are whole milliseconds, too coarse for a ratio of 1–3 ms
 * latencies; `result.exact` holds p50/p90/p99/max in fractional ms from every response's own
 * timing (the same timings autocannon reports).
 */
export function cannon(options) {
  return new Promise((resolve, reject) => {
    const times = [];
    const instance = autocannon({ pipelining: 1, ...options }, (err, result) =>
      err ? reject(err) : resolve({ ...result, exact: percentiles(times) }),
    );
    instance.on('response', (_client, _status, _bytes, ms) => times.push(ms));
    autocannon.track(instance, { renderProgressBar: false, renderResultsTable: false, renderLatencyTable: false });
  });
}

/** CPU time (user + system) a process has used so far, in ms (Linux, clock ticks of 10 ms). */
export function cpuMs(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return 0; // the process has exited
  }
}

/**
 * CPU time of every process named `postgres` on this machine (the server and its backends), in
 * ms; with `database`, only of the backends connected to that database (their title names it):
 * on a machine shared with other users of the same PostgreSQL, what this bench's own statements
 * cost, without the shared background processes (WAL writer, checkpointer, autovacuum).
 */
export function postgresCpuMs(database) {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) !== 'postgres') continue;
      if (database && !readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(` ${database} `)) continue;
      total += cpuMs(entry);
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

/** Busy and total CPU time of the whole machine so far, in ms (from /proc/stat). */
export function machineCpuMs() {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const total = fields.slice(0, 8).reduce((a, b) => a + b, 0);
  const idle = fields[3] + fields[4]; // idle + iowait
  return { busy: ((total - idle) * 1000) / 100, total: (total * 1000) / 100 };
}

/**
 * Waits (up to `maxSeconds`, default BENCH_QUIET_WAIT or 180) until the machine is quiet: less
 * than `threshold` % of one core busy over `windowSeconds`, as other processes (a test run)
 * would otherwise share the cores with the servers being measured. Resolves with what it
 * found, for the report; never fails.
 */
export async function waitForQuiet({
  maxSeconds = Number(process.env.BENCH_QUIET_WAIT ?? 180),
  threshold = 25,
  windowSeconds = 3,
} = {}) {
  const started = performance.now();
  for (;;) {
    const before = machineCpuMs();
    await new Promise((resolve) => setTimeout(resolve, windowSeconds * 1000));
    const after = machineCpuMs();
    const busy = Math.round((100 * (after.busy - before.busy)) / (windowSeconds * 1000));
    const waited = Math.round((performance.now() - started) / 1000);
    if (busy < threshold) return { quiet: true, busy, waited };
    if (waited >= maxSeconds) return { quiet: false, busy, waited };
  }
}

/**
 * Measures where the CPU went while `work` ran: in the given processes (by label), in
 * PostgreSQL's processes (with `database`, also in that database's backends alone:
 * `postgresDbMs`), and on the whole machine. Shares are of one core (100 % = one core busy
 * for the whole time).
 */
export async function withCpu(pids, work, { database } = {}) {
  const before = Object.fromEntries(Object.entries(pids).map(([label, pid]) => [label, cpuMs(pid)]));
  const pgBefore = postgresCpuMs();
  const pgDbBefore = database ? postgresCpuMs(database) : 0;
  const machineBefore = machineCpuMs();
  const started = performance.now();
  const value = await work();
  const wall = performance.now() - started;
  const share = (ms) => Math.round((100 * ms) / wall);
  const cpu = Object.fromEntries(Object.entries(pids).map(([label, pid]) => [label, share(cpuMs(pid) - before[label])]));
  cpu.postgres = share(postgresCpuMs() - pgBefore);
  // The backends of `database` alone (a part of cpu.postgres), in ms and as a share.
  if (database) cpu.postgresDbMs = postgresCpuMs(database) - pgDbBefore;
  const machine = machineCpuMs();
  cpu.machine = share(machine.busy - machineBefore.busy);
  cpu.machineOf = share(machine.total - machineBefore.total);
  // What neither the listed processes nor PostgreSQL used: other processes on the machine.
  // (A thread, given as `<pid>/task/<tid>`, is already counted in its process.)
  const processes = Object.keys(pids).filter((label) => !String(pids[label]).includes('/task/'));
  cpu.other = Math.max(0, cpu.machine - cpu.postgres - processes.reduce((a, label) => a + cpu[label], 0));
  return { value, cpu, wallMs: wall };
}

function percentiles(times) {
  const sorted = Float64Array.from(times).sort();
  const at = (q) => (sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]);
  const round = (ms) => Math.round(ms * 10) / 10;
  return { p50: round(at(0.5)), p90: round(at(0.9)), p99: round(at(0.99)), max: round(at(1)) };
}

/**
 * One bench/open-loop.js run in a process of its own (Poisson arrivals; latency from the
 * scheduled time), resolved with the JSON line it prints.
 */
export function openLoop(options) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(import.meta.dirname, 'open-loop.js'), JSON.stringify(options)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`open-loop client exited with ${code}: ${out}`));
      resolve(JSON.parse(out.trim().split('\n').at(-1)));
    });
  });
}

/** The click every bench sends: a realistic body with campaign parameters, an IP and a user agent. */
export function benchClick(storeId, fbclid) {
  return {
    fbclid,
    storeId,
    landingPage: 'https://bench.example.com/p?utm_source=facebook&utm_campaign=bf',
    ipAddress: '203.0.113.9',
    userAgent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0) AppleWebKit/605.1.15 Safari/605.1.15',
  };
}

/** User agents of the bench's conversions (and of its generated clicks). */
export const AGENTS = [
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Mobile Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36',
];

/**
 * The `i`-th conversion of a bench run labelled `label` (a unique order id): a Purchase naming
 * one of `recent` (fbclids of stored clicks inside the attribution window, so it is attributed),
 * with the buyer's IP and user agent, and with `allSignals` also a fingerprint and an email
 * (the email of earlier attributed conversions of the generated store: the identity signal
 * finds them), and with `clickIds` other platforms' click ids (api.md §8, §12): `'all'` (or true)
 * the seven of them, `'one'` one platform's, the next of the seven each conversion (as a landing
 * page from one ad carries one platform's id).
 */
const OTHER_CLICK_IDS = ['gclid', 'ttclid', 'msclkid', 'epik', 'ScCid', 'rdt_cid', 'li_fat_id'];

export function benchConversion({ storeId, recent, label, allSignals, clickIds, i }) {
  const id = `${label}_${process.pid}_${i}`;
  return {
    storeId,
    eventType: 'Purchase',
    orderId: id,
    eventValue: 10 + (i % 200),
    currency: 'USD',
    ...(recent.length > 0 && { fbclid: recent[(i * 7919) % recent.length] }),
    ipAddress: `10.1.${(i >> 8) & 255}.${i & 255}`,
    userAgent: AGENTS[i % AGENTS.length],
    ...(allSignals && { fingerprint: `fp${i}`, customerData: { email: `buyer${i}@example.com` } }),
    ...(clickIds &&
      Object.fromEntries(
        (clickIds === 'one' ? [OTHER_CLICK_IDS[i % OTHER_CLICK_IDS.length]] : OTHER_CLICK_IDS).map((n) => [n, `${n}-${id}`]),
      )),
  };
}
