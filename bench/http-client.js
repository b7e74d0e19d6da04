// node bench/http-client.js — what one POST to a platform costs in CPU with each HTTP client the
// server could send it with (issue 39 point 6: with eight destinations, ~40 such requests a
// second at 500 conversions a second).
//
// One process holds a local keep-alive HTTP server answering a Conversions-API-like JSON at once
// and the client, so each figure is the client's and the server's CPU a request together; the
// server's part is the same for every client, so the differences are the clients'. Each client
// sends the same 15-event JSON body (~3 KB) BENCH_REQUESTS times (default 2,000) one after another
// after a 200-request warm-up, in BENCH_ROUNDS (3) interleaved rounds; prints µs of CPU
// (user + system) and of wall time a request, the median of the rounds.
//   fetch   Node's global fetch (undici's fetch: web streams, a Response) — what the server used
//   undici  undici's `request` with an AbortSignal timeout — what destinations/adapter.ts `post` uses
//   http    node:http with a keep-alive agent
import http from 'node:http';
import { request } from 'undici';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ANSWER = '{"events_received":15,"fbtrace_id":"AbCdEf123"}';

const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.setHeader('content-type', 'application/json');
    res.end(ANSWER);
  });
});
server.keepAliveTimeout = 60_000;
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${server.address().port}/v21.0/123/events`;
const event = (i) => ({
  event_name: 'Purchase',
  event_time: 1_795_000_000 + i,
  event_id: `order_${i}`,
  action_source: 'website',
  user_data: { em: ['a'.repeat(64)], ph: ['b'.repeat(64)], client_ip_address: '203.0.113.7', fbc: `fb.1.1.click_${i}` },
  custom_data: { value: '129.90', currency: 'EUR' },
});
const body = JSON.stringify({ data: Array.from({ length: 15 }, (_, i) => event(i)) });
const headers = { accept: 'application/json', 'content-type': 'application/json' };
const agent = new http.Agent({ keepAlive: true });

const clients = {
  fetch: async () => {
    const response = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(10_000) });
    return response.text();
  },
  undici: async () => {
    const answer = await request(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(10_000) });
    return answer.body.text();
  },
  http: () =>
    new Promise((resolve, reject) => {
      const req = http.request(
        url,
        { method: 'POST', agent, headers: { ...headers, 'content-length': Buffer.byteLength(body) } },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk) => {
            text += chunk;
          });
          res.on('end', () => resolve(text));
        },
      );
      req.setTimeout(10_000, () => req.destroy(new Error('timeout')));
      req.on('error', reject);
      req.end(body);
    }),
};

const figures = Object.fromEntries(Object.keys(clients).map((name) => [name, { cpu: [], wall: [] }]));
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, send] of Object.entries(clients)) {
    for (let i = 0; i < 200; i++) if ((await send()) !== ANSWER) throw new Error(`${name}: unexpected answer`);
    const cpu = process.cpuUsage();
    const started = performance.now();
    for (let i = 0; i < REQUESTS; i++) await send();
    const used = process.cpuUsage(cpu);
    figures[name].cpu.push((used.user + used.system) / REQUESTS);
    figures[name].wall.push(((performance.now() - started) * 1000) / REQUESTS);
  }
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
console.log(
  `POST of a 15-event body (${body.length} bytes) to a local keep-alive server, ${REQUESTS} a round, ${ROUNDS} rounds:`,
);
for (const [name, { cpu, wall }] of Object.entries(figures)) {
  console.log(
    `  ${name.padEnd(7)} CPU ${median(cpu).toFixed(0).padStart(4)} µs a request (rounds ${cpu.map((v) => v.toFixed(0)).join(' / ')}), wall ${median(wall).toFixed(0)} µs`,
  );
}
server.close();
agent.destroy();
