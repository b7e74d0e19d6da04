import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { cannon, source } from './lib.js';

export const QUEUED = Number(process.env.BENCH_QUEUED ?? 10_000);
export const DURATION = Number(process.env.BENCH_DURATION ?? 10);
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
/** The fixed request rate of the latency comparison: below saturation, where a p99 means something. */
export const RATE = Number(process.env.BENCH_RATE ?? 300);
export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** The fixed request rate of the Meta-only vs all-eight-destinations comparison. */
export const ALL_RATE = Number(process.env.BENCH_ALL_RATE ?? 500);
/** How long the fakes of the every-destination delivery take to answer (a platform's round trip). */
export const EVERY_LATENCY = Number(process.env.BENCH_EVERY_LATENCY ?? 50);
export const PIXEL = '123456789012345';
export const TOKEN = 'EAAB-bench-token';

export const { openSqlite } = await source('db/sqlite/database.ts');
export const { createAccount } = await source('accounts/accounts.ts');
export const { createStore } = await source('stores/stores.ts');
export const { loadSecretsKey, SecretBox } = await source('secrets.ts');
export const { trackConversion } = await source('tracking/conversions.ts');
export const { putDestination } = await source('destinations/settings.ts');

/** The fake Graph API of the test suite, reduced to what the bench needs: acknowledge every batch. */
export async function startFake(latencyMs) {
  const acked = new Set();
  let requests = 0;
  let largest = 0;
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      requests++;
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const answer = () => {
        if (!Array.isArray(body.data) || body.data.length > 1000 || body.access_token !== TOKEN) {
          res.writeHead(400, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({ error: { message: 'Invalid parameter', type: 'OAuthException', code: 100, fbtrace_id: 'Abench' } }),
          );
          return;
        }
        largest = Math.max(largest, body.data.length);
        for (const event of body.data) acked.add(event.event_id);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({ events_received: body.data.length, messages: [], fbtrace_id: `A${randomBytes(6).toString('hex')}` }),
        );
      };
      if (latencyMs > 0) setTimeout(answer, latencyMs);
      else answer();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    acked,
    stats: () => ({ requests, largest }),
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export function run(options) {
  return cannon({ connections: CONNECTIONS, duration: DURATION, ...options });
}

/** CPU time (user + system) a process has used, in ms (Linux). */
export function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // clock ticks of 10 ms
}

export let order = 0;
export function conversionRun(url, headers, storeId, options = {}) {
  return run({
    ...options,
    url: `${url}/v1/track/conversion`,
    method: 'POST',
    headers,
    requests: [
      {
        setupRequest: (req) => ({
          ...req,
          body: JSON.stringify({
            storeId,
            eventType: 'Purchase',
            orderId: `lat-${process.pid}-${++order}`,
            eventValue: 49.99,
            currency: 'USD',
            customerData: { email: `buyer-${order}@example.com`, country: 'US' },
            ipAddress: '203.0.113.9',
            userAgent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0) AppleWebKit/605.1.15 Safari/605.1.15',
          }),
        }),
      },
    ],
  });
}
