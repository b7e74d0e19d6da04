// Part 3 of the forwarding bench (bench/forwarding.js): every destination through the one outbox.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import SqliteDriver from 'better-sqlite3';
import {
  ALL_RATE,
  conversionRun,
  cpuMs,
  createAccount,
  createStore,
  loadSecretsKey,
  openSqlite,
  PIXEL,
  putDestination,
  QUEUED,
  SecretBox,
  startFake,
  TOKEN,
  trackConversion,
} from './forwarding-setup.js';
import { bin, startServer } from './lib.js';

const GOOGLE = {
  clientId: 'bench.apps.googleusercontent.com',
  clientSecret: 'bench-secret',
  refreshToken: '1//bench',
  developerToken: 'bench-dev',
};
const TIKTOK_TOKEN = 'bench-tiktok-token';

/** Google's OAuth and Ads API and TikTok's Events API, reduced to acknowledging every well-formed request. */
async function startPlatformsFake(latencyMs) {
  const google = new Set();
  const tiktok = new Set();
  let requests = 0;
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      requests++;
      const raw = Buffer.concat(chunks).toString('utf8');
      const reply = (status, body) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      const answer = () => {
        if (req.url === '/token') return reply(200, { access_token: 'ya29.bench', expires_in: 3600, token_type: 'Bearer' });
        if (req.url?.endsWith(':uploadClickConversions')) {
          if (req.headers.authorization !== 'Bearer ya29.bench' || req.headers['developer-token'] !== GOOGLE.developerToken) {
            return reply(401, { error: { code: 401, message: 'unauthenticated', status: 'UNAUTHENTICATED' } });
          }
          const body = JSON.parse(raw);
          for (const c of body.conversions) google.add(c.orderId);
          return reply(200, { results: body.conversions.map((c) => ({ gclid: c.gclid })), jobId: String(requests) });
        }
        if (req.url === '/open_api/v1.3/event/track/') {
          if (req.headers['access-token'] !== TIKTOK_TOKEN) return reply(200, { code: 40105, message: 'bad token' });
          for (const e of JSON.parse(raw).data) tiktok.add(e.event_id);
          return reply(200, { code: 0, message: 'OK', request_id: String(requests), data: {} });
        }
        reply(404, {});
      };
      if (latencyMs > 0) setTimeout(answer, latencyMs);
      else answer();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    google,
    tiktok,
    stats: () => ({ requests }),
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** Queues `count` conversions of a store forwarding to Meta, Google Ads and TikTok (no dispatcher running). */
async function queueEveryDestination(dataDir, count) {
  const database = openSqlite(dataDir);
  await database.migrate();
  const account = await createAccount(database, { email: 'bench-all@example.com' });
  const tenant = { accountId: account.accountId, livemode: true };
  const secrets = new SecretBox(loadSecretsKey({ secretsKey: undefined, dataDir }));
  const store = await createStore(
    database,
    tenant,
    { name: 'Bench all', domain: 'bench.example.com', platform: 'custom', pixelId: PIXEL, capiAccessToken: TOKEN },
    secrets,
  );
  await putDestination(
    database,
    tenant,
    store.id,
    'google_ads',
    {
      customerId: '1234567890',
      conversionAction: 'customers/1234567890/conversionActions/1',
      api: 'google_ads_api',
      developerToken: GOOGLE.developerToken,
      oauth: { clientId: GOOGLE.clientId, clientSecret: GOOGLE.clientSecret, refreshToken: GOOGLE.refreshToken },
    },
    secrets,
  );
  await putDestination(database, tenant, store.id, 'tiktok', { pixelCode: 'CBENCH12345678', accessToken: TIKTOK_TOKEN }, secrets);
  const expected = { meta: count, google: 0, tiktok: 0 };
  for (let start = 0; start < count; start += 500) {
    const chunk = [];
    for (let i = start; i < Math.min(count, start + 500); i++) {
      const ids = i % 3 === 0 ? { gclid: `G-${i}` } : i % 3 === 1 ? { ttclid: `T-${i}` } : { gclid: `G-${i}`, ttclid: `T-${i}` };
      if (ids.gclid) expected.google++;
      if (ids.ttclid) expected.tiktok++;
      chunk.push(
        trackConversion(database, tenant, {
          storeId: store.id,
          eventType: 'Purchase',
          orderId: `all-${i}`,
          eventValue: 49.99,
          currency: 'USD',
          customerData: {
            email: `buyer${i}@example.com`,
            phone: `+1 650 555 ${String(i % 10_000).padStart(4, '0')}`,
            country: 'US',
          },
          ipAddress: '203.0.113.9',
          userAgent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0) AppleWebKit/605.1.15 Safari/605.1.15',
          ...ids,
        }),
      );
    }
    await Promise.all(chunk);
  }
  await database.close();
  return expected;
}

/** Starts the server on the queued data and times delivery to every destination. */
export async function deliveryEveryDestination(latencyMs) {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'waytrack-bench-all-'));
  const graph = await startFake(latencyMs);
  const platforms = await startPlatformsFake(latencyMs);
  try {
    const expected = await queueEveryDestination(dataDir, QUEUED);
    const reader = new SqliteDriver(path.join(dataDir, 'waytrack.db'), { readonly: true });
    const pending = reader.prepare(
      "select (select count(*) from conversions where capi_status != 'sent') + (select count(*) from destination_jobs where status != 'sent') as n",
    );
    const server = await startServer({
      DATA_DIR: dataDir,
      META_GRAPH_URL: graph.url,
      GOOGLE_ADS_API_URL: platforms.url,
      GOOGLE_OAUTH_TOKEN_URL: `${platforms.url}/token`,
      TIKTOK_API_URL: platforms.url,
    });
    let recordedMs;
    const deadline = performance.now() + 120_000;
    while (recordedMs === undefined && performance.now() < deadline) {
      if (pending.get().n === 0) recordedMs = performance.now() - server.readyAt;
      await new Promise((r) => setTimeout(r, 5));
    }
    await server.stop();
    reader.close();
    const got = { meta: graph.acked.size, google: platforms.google.size, tiktok: platforms.tiktok.size };
    if (recordedMs === undefined)
      throw new Error(`backlog not delivered within 120 s: ${JSON.stringify(got)} of ${JSON.stringify(expected)}`);
    return { recordedMs, expected, got, requests: graph.stats().requests + platforms.stats().requests };
  } finally {
    await graph.close();
    await platforms.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * Conversion latency at ALL_RATE for a store forwarding to Meta only vs one forwarding to Meta,
 * Google Ads and TikTok (fakes answering at once), runs interleaved.
 */
export async function latencyEveryDestination(rounds) {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'waytrack-bench-lat-all-'));
  const graph = await startFake(0);
  const platforms = await startPlatformsFake(0);
  const env = {
    DATA_DIR: dataDir,
    META_GRAPH_URL: graph.url,
    GOOGLE_ADS_API_URL: platforms.url,
    GOOGLE_OAUTH_TOKEN_URL: `${platforms.url}/token`,
    TIKTOK_API_URL: platforms.url,
    CAPI_SYNC_WAIT_MS: '0',
    RATE_LIMIT_RPS: '1000000',
    RATE_LIMIT_BURST: '1000000',
  };
  const server = await startServer(env);
  try {
    const account = JSON.parse(
      execFileSync(process.execPath, [bin, 'account', 'create', '--email', 'lat-all@example.com', '--json'], {
        env: { ...process.env, LOG_LEVEL: 'silent', ...env },
        encoding: 'utf8',
      }),
    );
    const headers = { authorization: `Bearer ${account.keys.live}`, 'content-type': 'application/json' };
    const api = async (method, url, body) => {
      const res = await fetch(`${server.url}${url}`, { method, headers, body: JSON.stringify(body) });
      if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
      return (await res.json()).data;
    };
    const makeStore = async () =>
      (
        await api('POST', '/v1/stores', {
          name: 'Bench',
          domain: 'bench.example.com',
          platform: 'custom',
          pixelId: PIXEL,
          capiAccessToken: TOKEN,
        })
      ).id;
    const one = await makeStore();
    const all = await makeStore();
    await api('PUT', `/v1/stores/${all}/destinations/google_ads`, {
      customerId: '1234567890',
      conversionAction: 'customers/1234567890/conversionActions/1',
      api: 'google_ads_api',
      developerToken: GOOGLE.developerToken,
      oauth: { clientId: GOOGLE.clientId, clientSecret: GOOGLE.clientSecret, refreshToken: GOOGLE.refreshToken },
    });
    await api('PUT', `/v1/stores/${all}/destinations/tiktok`, { pixelCode: 'CBENCH12345678', accessToken: TIKTOK_TOKEN });
    await conversionRun(server.url, headers, all, { duration: 3 }, true); // warm-up, not reported
    const results = [];
    for (let i = 0; i < rounds; i++) {
      for (const [destinations, storeId] of [
        ['one', one],
        ['all', all],
      ]) {
        const cpu = cpuMs(server.child.pid);
        const result = await conversionRun(server.url, headers, storeId, { overallRate: ALL_RATE }, true);
        results.push({ destinations, cpuPerRequest: (cpuMs(server.child.pid) - cpu) / result.requests.total, ...result });
      }
    }
    return { results, delivered: { meta: graph.acked.size, google: platforms.google.size, tiktok: platforms.tiktok.size } };
  } finally {
    await server.stop();
    await graph.close();
    await platforms.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
