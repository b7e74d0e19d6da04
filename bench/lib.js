// What every benchmark shares: building the service, starting the real `waytrack serve`, and
// driving it with autocannon from this (second) process.
import { execFileSync, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const bin = path.join(root, 'server/bin/waytrack.js');

/** Compiles the current sources into server/dist, which the CLI runs. */
export function build() {
  const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
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
  const child = spawn(process.execPath, [bin, 'serve'], { env: { ...process.env, LOG_LEVEL: 'warn', PORT: '0', ...env } });
  let out = '';
  child.stdout.on('data', (d) => {
    out += d;
  });
  child.stderr.on('data', (d) => {
    out += d;
  });
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${out}`)), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${out}`));
    });
    child.stdout.on('data', () => {
      const match = /listening on (https:\/\/\S+?)\/v1/.exec(out);
      if (match) {
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

function percentiles(times) {
  const sorted = Float64Array.from(times).sort();
  const at = (q) => (sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]);
  const round = (ms) => Math.round(ms * 10) / 10;
  return { p50: round(at(0.5)), p90: round(at(0.9)), p99: round(at(0.99)), max: round(at(1)) };
}
