// node bench/open-loop.js '<json>' — an open-loop load generator in a process of its own.
//
// Requests are sent at their scheduled times, Poisson arrivals at a fixed `rate` per second,
// whatever the earlier answers; each latency is measured from the request's SCHEDULED time to
// the end of its answer, so a stall of the server (or of this process) is counted in full, for
// every request that should have gone out meanwhile (no coordinated omission). Keep-alive
// HTTPS with up to `connections` sockets: a request that finds them all busy waits in the
// agent's queue, and that wait is in its latency too. (npm had no maintained open-loop tool:
// autocannon's overallRate and loadtest's --rps pace the sends but time each request from its
// actual send, and neither draws Poisson gaps.)
//
// The JSON names `url` (the server's https origin), `kind` ('click', 'batch', 'conversion' or
// 'health'), `rate` (requests/s), `duration` (s), `connections` (default 64), for clicks,
// batches and conversions `key` and `storeId`, for clicks and batches `prefix` (unique fbclids),
// for batches `events` (clicks a request, default 100), for conversions `recentFile` (a JSON
// array of fbclids of stored clicks inside the attribution window: each conversion names one),
// `label` (unique order ids) and `allSignals` (bench/lib.js benchConversion).
// Prints one JSON line: sent, answered, non-2xx (and every status seen), errors, the achieved
// rate, latency percentiles (ms), how far the scheduler ever ran behind, this process's CPU
// time, and for conversions how many answers said `attributed: true`.
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { benchClick, benchConversion } from './lib.js';

const options = JSON.parse(process.argv[2] ?? '{}');
const rate = Number(options.rate);
const duration = Number(options.duration ?? 5);
const agent = new https.Agent({ keepAlive: true, maxSockets: Number(options.connections ?? 64), rejectUnauthorized: false });
const origin = new URL(options.url);
let n = 0;
const fbclid = () => `${options.prefix ?? 'open'}_${process.pid}_${n++}`;

const recent = options.kind === 'conversion' ? JSON.parse(readFileSync(options.recentFile, 'utf8')) : [];
let conversions = 0;

function requestOf() {
  if (options.kind === 'health') return { method: 'GET', path: '/healthz' };
  const headers = { authorization: `Bearer ${options.key}`, 'content-type': 'application/json' };
  if (options.kind === 'conversion') {
    const conversion = benchConversion({
      storeId: options.storeId,
      recent,
      label: options.label ?? 'open',
      allSignals: options.allSignals !== false,
      i: conversions++,
    });
    return { method: 'POST', path: '/v1/track/conversion', headers, body: JSON.stringify(conversion) };
  }
  if (options.kind === 'batch') {
    const events = Array.from({ length: options.events ?? 100 }, () => ({
      type: 'click',
      ...benchClick(options.storeId, fbclid()),
    }));
    return { method: 'POST', path: '/v1/track/batch', headers, body: JSON.stringify({ events }) };
  }
  return { method: 'POST', path: '/v1/track/click', headers, body: JSON.stringify(benchClick(options.storeId, fbclid())) };
}

const latencies = [];
let answered = 0;
let non2xx = 0;
let errors = 0;
let failedEvents = 0;
let attributed = 0;
const statuses = {};

function send(scheduledAt) {
  const { method, path, headers, body } = requestOf();
  return new Promise((resolve) => {
    const req = https.request(
      { host: origin.hostname, port: origin.port, method, path, headers, agent, servername: 'localhost' },
      (res) => {
        const read = options.kind === 'batch' || options.kind === 'conversion';
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          if (read) text += chunk;
        });
        res.on('end', () => {
          latencies.push(performance.now() - scheduledAt);
          answered++;
          statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
          if (res.statusCode < 200 || res.statusCode > 299) non2xx++;
          else if (options.kind === 'batch') failedEvents += JSON.parse(text).data.failed;
          else if (options.kind === 'conversion' && JSON.parse(text).data.attributed === true) attributed++;
          resolve();
        });
      },
    );
    req.on('error', () => {
      errors++;
      resolve();
    });
    req.end(body);
  });
}

/** Poisson arrivals: exponential gaps with mean 1/rate. */
const gapMs = () => (-Math.log(1 - Math.random()) * 1000) / rate;

const started = performance.now();
const end = started + duration * 1000;
let next = started + gapMs();
let maxLagMs = 0;
const inFlight = new Set();
await new Promise((resolve) => {
  const tick = () => {
    const now = performance.now();
    while (next <= now && next < end) {
      maxLagMs = Math.max(maxLagMs, now - next);
      const pending = send(next);
      inFlight.add(pending);
      pending.then(() => inFlight.delete(pending));
      next += gapMs();
    }
    if (next >= end) return resolve();
    // Wake up for the next arrival (timers are ~1 ms coarse: the lag is measured above).
    setTimeout(tick, Math.max(0, next - performance.now() - 0.5));
  };
  tick();
});
await Promise.all(inFlight);
const wall = (performance.now() - started) / 1000;
agent.destroy();

const sorted = Float64Array.from(latencies).sort();
const at = (q) =>
  sorted.length === 0 ? null : Math.round(sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] * 10) / 10;
const usage = process.cpuUsage();
console.log(
  JSON.stringify({
    rate,
    sent: answered + errors,
    answered,
    non2xx,
    errors,
    failedEvents,
    attributed,
    statuses,
    achieved: Math.round(answered / wall),
    p50: at(0.5),
    p90: at(0.9),
    p99: at(0.99),
    p999: at(0.999),
    max: at(1),
    maxLagMs: Math.round(maxLagMs * 10) / 10,
    cpuMs: (usage.user + usage.system) / 1000,
  }),
);
