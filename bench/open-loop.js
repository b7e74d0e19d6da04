// node bench/open-loop.js '<json>' — an open-loop load generator in a process of its own.
//
// Requests are sent at their scheduled times, Poisson arrivals at a fixed `rate` per second,
// whatever the earlier answers; each latency is measured from the request's SCHEDULED time to
// the end of its answer, so a stall of the server (or of this process) is counted in full, for
// every request that should have gone out meanwhile (no coordinated omission). Keep-alive
// HTTPS with up to `connections` sockets: a request that finds them all busy waits in a queue,
// and that wait is in its latency too. The client is lean so that it takes little of the cores
// it shares with the server: HTTP/1.1 written and read on raw TLS sockets (node:https cost ~190
// µs of CPU a request here, and its garbage-collection pauses delayed the scheduler by up to
// 55 ms, both counted against the server). (npm had no maintained open-loop tool:
// autocannon's overallRate and loadtest's --rps pace the sends but time each request from its
// actual send, and neither draws Poisson gaps.)
//
// The JSON names `url` (the server's https origin), `kind` ('click', 'batch', 'conversion' or
// 'health'), `rate` (requests/s), `duration` (s), `connections` (default 64), for clicks,
// batches and conversions `key` and `storeId`, for clicks and batches `prefix` (unique fbclids),
// for batches `events` (clicks a request, default 100), for conversions `recentFile` (a JSON
// array of fbclids of stored clicks inside the attribution window: each conversion names one),
// `label` (unique order ids), `allSignals` and `clickIds` (bench/lib.js benchConversion), and optionally
// `slowFile` (a JSON file for every request of `slowMs`, default 20, or more: its scheduled time
// on CLOCK_MONOTONIC, its latency and how late it left this process, to be matched with a
// `perf record -k mono` profile or the server's own timeline).
// Prints one JSON line: sent, answered, non-2xx (and every status seen), errors, the achieved
// rate, latency percentiles (ms), how far the scheduler ever ran behind, the latency split into
// scheduled → sent (`sendDelay`: this process's lag, or a wait for a socket) and sent → answered
// (`serverTime`), this process's CPU time, and for conversions how many answers said
// `attributed: true`.
import { readFileSync, writeFileSync } from 'node:fs';
import tls from 'node:tls';
import { benchClick, benchConversion } from './lib.js';

const options = JSON.parse(process.argv[2] ?? '{}');
const rate = Number(options.rate);
const duration = Number(options.duration ?? 5);
const maxConnections = Number(options.connections ?? 64);
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
      clickIds: options.clickIds ?? false,
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
/** Per answered request: scheduled → written (this process's lag and the wait for a socket), written → answered (the server's part). */
const sendDelays = [];
const serverTimes = [];
/** With `slowFile`: every request of `slowMs` (20) or more, at its scheduled CLOCK_MONOTONIC ms (as `perf record -k mono` stamps samples). */
const slow = [];
const monotonicOffset = Number(process.hrtime.bigint()) / 1e6 - performance.now();
const monotonicMs = (t) => t + monotonicOffset;
let answered = 0;
let non2xx = 0;
let errors = 0;
let failedEvents = 0;
let attributed = 0;
const statuses = {};

// Keep-alive connections: idle ones, how many are open, requests waiting for one.
const idle = [];
const waiting = [];
let open = 0;

/** A connection that reads one answer at a time: status, headers, a Content-Length or chunked body. */
function connect() {
  const conn = { socket: null, buf: Buffer.alloc(0), onAnswer: null, dead: false };
  conn.socket = tls.connect({
    host: origin.hostname,
    port: Number(origin.port),
    servername: 'localhost',
    rejectUnauthorized: false,
  });
  conn.socket.setNoDelay(true);
  conn.socket.on('data', (chunk) => {
    conn.buf = conn.buf.length === 0 ? chunk : Buffer.concat([conn.buf, chunk]);
    const answer = parseAnswer(conn.buf);
    if (!answer) return;
    conn.buf = Buffer.alloc(0);
    const done = conn.onAnswer;
    conn.onAnswer = null;
    done?.(null, answer);
  });
  const drop = () => {
    if (conn.dead) return;
    conn.dead = true;
    open--;
    const idleAt = idle.indexOf(conn);
    if (idleAt >= 0) idle.splice(idleAt, 1);
    const done = conn.onAnswer;
    conn.onAnswer = null;
    done?.(new Error('connection closed'));
    if (waiting.length > 0) {
      open++;
      waiting.shift()(connect());
    }
  };
  conn.socket.on('error', drop);
  conn.socket.on('close', drop);
  return conn;
}

/** The whole answer in `buf`, or null while it is incomplete. */
function parseAnswer(buf) {
  const headEnd = buf.indexOf('\r\n\r\n');
  if (headEnd < 0) return null;
  const head = buf.toString('latin1', 0, headEnd).toLowerCase();
  const status = Number(head.slice(9, 12));
  const length = /\r\ncontent-length: *(\d+)/.exec(head);
  const bodyStart = headEnd + 4;
  if (length) {
    const end = bodyStart + Number(length[1]);
    return buf.length >= end ? { status, body: buf.subarray(bodyStart, end) } : null;
  }
  if (/\r\ntransfer-encoding: *chunked/.test(head)) {
    if (buf.indexOf('\r\n0\r\n\r\n', bodyStart - 2) < 0) return null;
    let body = Buffer.alloc(0);
    for (let at = bodyStart; ; ) {
      const sizeEnd = buf.indexOf('\r\n', at);
      const size = Number.parseInt(buf.toString('latin1', at, sizeEnd), 16);
      if (size === 0) return { status, body };
      body = Buffer.concat([body, buf.subarray(sizeEnd + 2, sizeEnd + 2 + size)]);
      at = sizeEnd + 2 + size + 2;
    }
  }
  return { status, body: Buffer.alloc(0) };
}

function withConnection(use) {
  const conn = idle.pop();
  if (conn) return use(conn);
  if (open < maxConnections) {
    open++;
    return use(connect());
  }
  waiting.push(use);
}

function release(conn) {
  if (conn.dead) return;
  const next = waiting.shift();
  if (next) next(conn);
  else idle.push(conn);
}

function send(scheduledAt) {
  const { method, path, headers = {}, body = '' } = requestOf();
  let text = `${method} ${path} HTTP/1.1\r\nhost: ${origin.host}\r\n`;
  for (const [name, value] of Object.entries(headers)) text += `${name}: ${value}\r\n`;
  text += `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  return new Promise((resolve) => {
    withConnection((conn) => {
      const writtenAt = performance.now();
      conn.onAnswer = (error, answer) => {
        if (error) errors++;
        else {
          const answeredAt = performance.now();
          latencies.push(answeredAt - scheduledAt);
          sendDelays.push(writtenAt - scheduledAt);
          serverTimes.push(answeredAt - writtenAt);
          if (options.slowFile && answeredAt - scheduledAt >= (options.slowMs ?? 20)) {
            slow.push({
              at: Math.round(monotonicMs(scheduledAt) * 1000) / 1000,
              latency: answeredAt - scheduledAt,
              delay: writtenAt - scheduledAt,
            });
          }
          answered++;
          statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
          if (answer.status < 200 || answer.status > 299) non2xx++;
          else if (options.kind === 'batch') failedEvents += JSON.parse(answer.body.toString('utf8')).data.failed;
          else if (options.kind === 'conversion' && JSON.parse(answer.body.toString('utf8')).data.attributed === true)
            attributed++;
        }
        release(conn);
        resolve();
      };
      conn.socket.write(text);
    });
  });
}

/** Poisson arrivals: exponential gaps with mean 1/rate. */
const gapMs = () => (-Math.log(1 - Math.random()) * 1000) / rate;

// Every connection is opened, its TLS handshake done, before the clock starts (as wrk does): a
// run that opened them on demand measured 64 handshakes on the server's event loop in its
// first ~100 ms, one stall that alone set the p99 of a 10-second run.
await Promise.all(
  Array.from({ length: maxConnections }, () => {
    open++;
    const conn = connect();
    return new Promise((resolve, reject) => {
      conn.socket.once('secureConnect', () => resolve(idle.push(conn)));
      conn.socket.once('error', reject);
      conn.socket.once('close', () => reject(new Error('a connection closed before its TLS handshake')));
    });
  }),
);

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
for (const conn of idle) conn.socket.destroy();

const percentile = (values) => {
  const sorted = Float64Array.from(values).sort();
  return (q) =>
    sorted.length === 0 ? null : Math.round(sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] * 10) / 10;
};
const at = percentile(latencies);
const delayAt = percentile(sendDelays);
const serverAt = percentile(serverTimes);
if (options.slowFile) writeFileSync(options.slowFile, JSON.stringify(slow));
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
    // The p99 split: how late requests left this process, and how long the server took once sent.
    sendDelay: { p50: delayAt(0.5), p99: delayAt(0.99), max: delayAt(1) },
    serverTime: { p50: serverAt(0.5), p99: serverAt(0.99), max: serverAt(1) },
    cpuMs: (usage.user + usage.system) / 1000,
  }),
);
