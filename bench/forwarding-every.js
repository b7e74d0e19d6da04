// Part 3 of the forwarding bench (bench/forwarding.js): all eight destinations through the one
// outbox, against the test suite's own fakes (server/test/destinations/fake-*.ts, loaded through
// tsx), each speaking its platform's protocol and checking credentials, ids and payloads.
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import SqliteDriver from 'better-sqlite3';
import {
  ALL_RATE,
  createAccount,
  createStore,
  loadSecretsKey,
  openSqlite,
  PIXEL,
  putDestination,
  QUEUED,
  SecretBox,
  TOKEN,
  trackConversion,
} from './forwarding-setup.js';
import { cli, cpuMs, openLoop, source, startServer } from './lib.js';

const fake = (file) => source(`../test/destinations/${file}`);
const { FakeGraph } = await fake('meta/fake-graph.ts');
const { FakePlatforms } = await fake('fake-platforms.ts');
const { FakeDataManager } = await fake('fake-data-manager.ts');
const { FakeMicrosoft } = await fake('fake-microsoft.ts');
const { FakePinterest } = await fake('fake-pinterest.ts');
const { FakeSnapchat } = await fake('fake-snapchat.ts');
const { FakeReddit } = await fake('fake-reddit.ts');
const { FakeLinkedIn } = await fake('fake-linkedin.ts');

/** The seven platforms other than Meta: the click id that routes a conversion to each (api.md §8, §12). */
export const CLICK_IDS = {
  google_ads: 'gclid',
  tiktok: 'ttclid',
  microsoft: 'msclkid',
  pinterest: 'epik',
  snapchat: 'ScCid',
  reddit: 'rdt_cid',
  linkedin: 'li_fat_id',
};
export const KINDS = ['meta', ...Object.keys(CLICK_IDS)];

/** BENCH_EVERY_STORE=one|all: the latency runs of that store alone (a CPU profile of one of them). */
const ONLY_STORE = process.env.BENCH_EVERY_STORE;
/**
 * BENCH_EVERY_CLICKS=one|all: the latency runs' conversions each carry one other platform's
 * click id (the next of the seven each conversion: api.md §12 routes it to Meta and that
 * platform, two jobs) — the default, as a landing page from one ad carries one platform's id —
 * or all seven (eight jobs each: a worst case no real landing page makes).
 */
export const CLICK_MIX = process.env.BENCH_EVERY_CLICKS === 'all' ? 'all' : 'one';

/** Every fake, answering after `latencyMs`; `settings` are the PUT bodies that match their credentials. */
export async function startFakes(latencyMs) {
  const graph = await FakeGraph.start();
  const platforms = await FakePlatforms.start(); // TikTok's Events API
  const dm = await FakeDataManager.start(); // Google's OAuth token endpoint and Data Manager
  const microsoft = await FakeMicrosoft.start();
  const pinterest = await FakePinterest.start();
  const snapchat = await FakeSnapchat.start();
  const reddit = await FakeReddit.start();
  const linkedin = await FakeLinkedIn.start();
  graph.latencyMs = latencyMs;
  for (const f of [platforms, dm, microsoft, pinterest, snapchat, reddit, linkedin]) f.delayMs = latencyMs;
  const settings = {
    google_ads: {
      customerId: '1234567890',
      conversionAction: 'customers/1234567890/conversionActions/555',
      oauth: { ...dm.oauthClient },
    }, // Data Manager: the default api of new settings
    tiktok: { pixelCode: 'CBENCH12345678', accessToken: platforms.tiktokToken },
    microsoft: { tagId: microsoft.tagId, accessToken: microsoft.token },
    pinterest: { adAccountId: pinterest.adAccountId, accessToken: pinterest.token },
    snapchat: { pixelId: snapchat.pixelId, accessToken: snapchat.token },
    reddit: { adAccountId: reddit.adAccountId, accessToken: reddit.token },
    linkedin: { conversionRuleId: `urn:lla:llaPartnerConversion:${linkedin.ruleId}`, accessToken: linkedin.token },
  };
  const env = {
    META_GRAPH_URL: graph.url,
    TIKTOK_API_URL: platforms.url,
    GOOGLE_DATA_MANAGER_URL: dm.url,
    GOOGLE_OAUTH_TOKEN_URL: dm.tokenUrl,
    MICROSOFT_CAPI_URL: microsoft.url,
    PINTEREST_API_URL: pinterest.url,
    SNAPCHAT_API_URL: snapchat.url,
    REDDIT_API_URL: reddit.url,
    LINKEDIN_API_URL: linkedin.url,
  };
  /** The dedup id (the conversion's eventId) of every event each platform accepted, duplicates kept. */
  const received = () => ({
    meta: graph.acceptedEventIds(),
    google_ads: dm.accepted().map((e) => e.transactionId),
    tiktok: platforms.tiktokAccepted().map((e) => e.event_id),
    microsoft: microsoft.accepted().map((e) => e.eventId),
    pinterest: pinterest.accepted().map((e) => e.event_id),
    snapchat: snapchat.accepted().map((e) => e.event_id),
    reddit: reddit.accepted().map((e) => e.event_metadata.conversion_id),
    linkedin: linkedin.accepted().map((e) => e.eventId),
  });
  const requests = () =>
    graph.requests.length +
    platforms.tiktok.length +
    dm.requests.length +
    microsoft.requests.length +
    pinterest.requests.length +
    snapchat.requests.length +
    reddit.requests.length +
    linkedin.requests.length;
  const close = () => Promise.all([graph, platforms, dm, microsoft, pinterest, snapchat, reddit, linkedin].map((f) => f.close()));
  return { settings, env, received, requests, redditRequests: () => reddit.requests, close };
}

/**
 * The click ids of conversion i: each of the seven platforms' on a different share of them (i % 7
 * picks one, i % 5 === 0 adds the next, i % 11 === 0 adds all seven), half with an fbclid.
 * Meta receives every conversion of the store (api.md §2).
 */
function clickIdsOf(i) {
  const kinds = Object.keys(CLICK_IDS);
  const chosen = new Set([kinds[i % 7]]);
  if (i % 5 === 0) chosen.add(kinds[(i + 1) % 7]);
  if (i % 11 === 0) for (const k of kinds) chosen.add(k);
  const ids = Object.fromEntries([...chosen].map((k) => [CLICK_IDS[k], `${CLICK_IDS[k]}-bench-${i}`]));
  if (i % 2 === 0) ids.fbclid = `fbclid-bench-${i}`;
  return { ids, kinds: ['meta', ...chosen] };
}

/** Queues `count` conversions of a store forwarding to all eight destinations (no dispatcher running). */
export async function queueEveryDestination(dataDir, count, settings) {
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
  for (const [kind, body] of Object.entries(settings)) await putDestination(database, tenant, store.id, kind, body, secrets);
  const expected = Object.fromEntries(KINDS.map((k) => [k, 0]));
  for (let start = 0; start < count; start += 500) {
    const chunk = [];
    for (let i = start; i < Math.min(count, start + 500); i++) {
      const { ids, kinds } = clickIdsOf(i);
      for (const k of kinds) expected[k]++;
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
          products: [{ productId: 'sku-1', price: 24.99, quantity: 2 }],
          ipAddress: '203.0.113.9',
          userAgent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0) AppleWebKit/605.1.15 Safari/605.1.15',
          eventSourceUrl: 'https://bench.example.com/thanks',
          ...ids,
        }),
      );
    }
    await Promise.all(chunk);
  }
  await database.close();
  return expected;
}

/**
 * `rounds` times: starts the server on a copy of the queued data (queued once, 10,000
 * conversions) and times delivery to every destination, from the ready line until no job of any
 * destination is pending; then checks that each fake received exactly its expected events, each
 * once.
 */
export async function deliveryEveryDestination(latencyMs, rounds) {
  const template = mkdtempSync(path.join(tmpdir(), 'waytrack-bench-all-queue-'));
  try {
    const fakes = await startFakes(latencyMs);
    const queued = performance.now();
    const expected = await queueEveryDestination(template, QUEUED, fakes.settings);
    const queuedMs = performance.now() - queued;
    await fakes.close();
    const results = [];
    for (let i = 0; i < rounds; i++) results.push(await deliverOnce(template, latencyMs, expected));
    return { queuedMs, results };
  } finally {
    rmSync(template, { recursive: true, force: true });
  }
}

async function deliverOnce(template, latencyMs, expected) {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'waytrack-bench-all-'));
  cpSync(template, dataDir, { recursive: true });
  const fakes = await startFakes(latencyMs);
  try {
    const reader = new SqliteDriver(path.join(dataDir, 'waytrack.db'), { readonly: true });
    const jobs = reader.prepare('select destination, count(*) as n from destination_jobs group by destination').all();
    // Polled every 5 ms: the due index alone (a scan of the conversions would take the cores the server needs);
    // a job is recorded with its conversion's state in one transaction, and both are checked once at the end.
    const pending = reader.prepare("select count(*) as n from destination_jobs where status = 'pending'");
    const unsent = reader.prepare(
      "select (select count(*) from conversions where capi_status != 'sent') + (select count(*) from destination_jobs where status != 'sent') as n",
    );
    const server = await startServer({ DATA_DIR: dataDir, ...fakes.env });
    let recordedMs;
    const deadline = performance.now() + 120_000;
    while (recordedMs === undefined && performance.now() < deadline) {
      if (pending.get().n === 0) recordedMs = performance.now() - server.readyAt;
      await new Promise((r) => setTimeout(r, 5));
    }
    await server.stop();
    if (recordedMs !== undefined && unsent.get().n !== 0) recordedMs = undefined;
    const failed = reader
      .prepare("select destination, status, last_error from destination_jobs where status != 'sent' limit 3")
      .all();
    reader.close();
    const received = fakes.received();
    const got = Object.fromEntries(KINDS.map((k) => [k, received[k].length]));
    if (recordedMs === undefined) {
      throw new Error(
        `backlog not delivered within 120 s: ${JSON.stringify(got)} of ${JSON.stringify(expected)}; ${JSON.stringify(failed)}`,
      );
    }
    for (const k of KINDS) {
      const unique = new Set(received[k]).size;
      if (got[k] !== expected[k] || unique !== got[k]) {
        throw new Error(`${k}: the fake accepted ${got[k]} events (${unique} distinct), expected ${expected[k]} once each`);
      }
    }
    // Reddit's 10 calls/s per ad account (its rate limiter): the most requests in any 1 s window.
    const at = fakes
      .redditRequests()
      .map((r) => r.at)
      .sort((a, b) => a - b);
    let redditPeak = 0;
    for (let i = 0, j = 0; i < at.length; i++) {
      while (at[i] - at[j] >= 1000) j++;
      redditPeak = Math.max(redditPeak, i - j + 1);
    }
    return {
      recordedMs,
      expected,
      got,
      jobs: Object.fromEntries(jobs.map((j) => [j.destination, j.n])),
      requests: fakes.requests(),
      redditRequests: at.length,
      redditPeak,
    };
  } finally {
    await fakes.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * Conversion latency at ALL_RATE (open loop, Poisson arrivals, latency from the scheduled time)
 * for a store forwarding to Meta only vs one with all eight destinations configured, the same
 * conversions sent to both, each with other platforms' click ids as CLICK_MIX says (the second
 * store writes two jobs per conversion, or eight with 'all'); fakes answering at once; same
 * server, runs interleaved.
 */
export async function latencyEveryDestination(rounds, duration) {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'waytrack-bench-lat-all-'));
  const fakes = await startFakes(0);
  const env = {
    DATA_DIR: dataDir,
    ...fakes.env,
    CAPI_SYNC_WAIT_MS: '0',
    RATE_LIMIT_RPS: '1000000',
    RATE_LIMIT_BURST: '1000000',
  };
  const server = await startServer(env);
  const recentFile = path.join(dataDir, 'recent.json');
  writeFileSync(recentFile, '[]'); // no stored clicks: the conversions name their click ids themselves
  try {
    const account = JSON.parse(cli(['account', 'create', '--email', 'lat-all@example.com', '--json'], env));
    const key = account.keys.live;
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
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
    for (const [kind, body] of Object.entries(fakes.settings)) await api('PUT', `/v1/stores/${all}/destinations/${kind}`, body);
    const run = (storeId, label, seconds) =>
      openLoop({
        url: server.url,
        kind: 'conversion',
        key,
        storeId,
        rate: ALL_RATE,
        duration: seconds,
        recentFile,
        label,
        // No email or fingerprint: SQLite 3.53 plans the identity lookup by email hash on conversions_store_time
        // (every conversion of the store in the window, per conversion), which grows with each run and would
        // drown the destinations' cost being compared here.
        allSignals: false,
        clickIds: CLICK_MIX,
      });
    // Warm-up, not reported; on both stores, so that each has the same history (the identity lookups read it).
    await run(one, 'warm1', 3);
    await run(all, 'warm8', 3);
    const results = [];
    for (let i = 0; i < rounds; i++) {
      for (const [destinations, storeId] of i % 2 === 0
        ? [
            ['one', one],
            ['all', all],
          ]
        : [
            ['all', all],
            ['one', one],
          ]) {
        if (ONLY_STORE && destinations !== ONLY_STORE) continue;
        const cpu = cpuMs(server.child.pid);
        const own = process.cpuUsage(); // this process: the load generator and the fakes
        const result = await run(storeId, `${destinations}${i}`, duration);
        const { user, system } = process.cpuUsage(own);
        results.push({
          destinations,
          round: i,
          cpuPerRequest: (cpuMs(server.child.pid) - cpu) / result.sent,
          benchCpuPerRequest: (user + system) / 1000 / result.sent,
          ...result,
        });
      }
    }
    const received = fakes.received();
    return { results, delivered: Object.fromEntries(KINDS.map((k) => [k, received[k].length])) };
  } finally {
    await server.stop();
    await fakes.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
