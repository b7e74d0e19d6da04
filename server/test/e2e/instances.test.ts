import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../../src/accounts/accounts.js';
import type { Database } from '../../src/db/database.js';
import { FakeGraph } from '../destinations/meta/fake-graph.js';
import { PIXEL, TOKEN } from '../destinations/meta/setup.js';
import { ENGINE, openTestDatabase, type TestDatabase } from '../engine.js';
import { cli, type HttpResult, type ServerProcess, serve } from './process.js';

// Two real server processes (compiled from the current sources) on one PostgreSQL database and,
// when REDIS_URL is set, one Redis: what api.md §7 promises of several instances, checked from
// outside, over HTTPS, with the processes racing each other for real.
const REDIS_URL = process.env.REDIS_URL;
if (ENGINE !== 'postgres') console.log('skipped: set DATABASE_URL (two instances need PostgreSQL)');
else if (!REDIS_URL) console.log('shared rate limit test skipped: set REDIS_URL (limits are shared through Redis)');

/**
 * The dispatcher's lease is not configurable from the environment (DispatcherTuning.leaseMs is a
 * buildApp option only), so the kill test waits out the default: 15 s.
 */
const DEFAULT_LEASE_MS = 15_000;

type Json = Record<string, unknown>;

const agents = new WeakMap<ServerProcess, https.Agent>();

/** One HTTPS request (keep-alive, the server's own certificate trusted), never longer than 15 s. */
function send(
  server: ServerProcess,
  method: string,
  urlPath: string,
  options: { key?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<HttpResult> {
  let agent = agents.get(server);
  if (!agent) {
    agent = new https.Agent({ keepAlive: true, maxSockets: 32, ca: server.ca, servername: 'localhost' });
    agents.set(server, agent);
  }
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const req = https.request(
      new URL(urlPath, server.url),
      {
        method,
        agent,
        headers: {
          ...options.headers,
          ...(options.key && { authorization: `Bearer ${options.key}` }),
          ...(payload && { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) }),
        },
      },
      (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          data += chunk;
        });
        res.on('end', () => {
          let body: unknown = data;
          try {
            body = JSON.parse(data);
          } catch {}
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
        });
        res.on('error', reject);
      },
    );
    req.setTimeout(15_000, () => req.destroy(new Error(`${method} ${urlPath}: no answer within 15 s`)));
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}

/** Runs `work` over `items` with at most `limit` at once; results in the order of `items`. */
async function inParallel<T, R>(items: T[], limit: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index] as T, index);
    }
  });
  await Promise.all(lanes);
  return results;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const range = (n: number) => Array.from({ length: n }, (_, i) => i);
/** How many times each value occurs. */
function counts(values: string[]): Map<string, number> {
  const map = new Map<string, number>();
  for (const v of values) map.set(v, (map.get(v) ?? 0) + 1);
  return map;
}
const repeated = (values: string[]) => [...counts(values)].filter(([, n]) => n > 1).map(([v]) => v);

describe.skipIf(ENGINE !== 'postgres')('two instances on one PostgreSQL (end to end)', () => {
  const dirs: string[] = [];
  let testDb: TestDatabase;
  /** A handle of the test's own on the shared database, for what the API does not show (leases). */
  let db: Database;
  let fake: FakeGraph;
  let a: ServerProcess;
  let b: ServerProcess;
  let accountId: string;
  let key: string;
  const run = randomBytes(3).toString('hex');

  beforeAll(async () => {
    const dir = () => {
      const made = mkdtempSync(path.join(tmpdir(), 'waytrack-instances-'));
      dirs.push(made);
      return made;
    };
    testDb = await openTestDatabase(dir());
    await testDb.database.close();
    fake = await FakeGraph.start();
    fake.validTokens = new Set([TOKEN]);
    // Two hosts: a data directory each (own TLS certificate, nothing shared on disk), one
    // SECRETS_KEY (store access tokens sealed by one are opened by the other).
    const secretsKey = randomBytes(32).toString('hex');
    const env = (dataDir: string): Record<string, string> => ({
      ...testDb.env,
      DATA_DIR: dataDir,
      SECRETS_KEY: secretsKey,
      META_GRAPH_URL: fake.url,
      CAPI_SYNC_WAIT_MS: '0',
      // The account key is not what these tests limit (the rate limit test uses a key of its own).
      RATE_LIMIT_RPS: '100000',
      RATE_LIMIT_BURST: '100000',
      // The test's pooled keep-alive connections (send) are never closed by the server between
      // two requests: a busy test process was once slow to see the close of an idle one and
      // sent its next request on it ("socket hang up").
      KEEP_ALIVE_TIMEOUT_MS: '600000',
      ...(REDIS_URL && { REDIS_URL }),
    });
    // Started at once: concurrent migrations and the first use of the shared cursor secret.
    [a, b] = await Promise.all([serve(env(dir())), serve(env(dir()))]);
    const created = cli(['account', 'create', '--email', `instances-${run}@example.com`, '--json'], env(dir()));
    if (created.status !== 0) throw new Error(`account create failed: ${created.stderr}`);
    const account = JSON.parse(created.stdout) as { accountId: string; keys: { live: string } };
    accountId = account.accountId;
    key = account.keys.live;
    db = testDb.openAnother();
  }, 240_000); // two servers started at once (e2e/process.ts: up to 90 s on a busy machine)

  afterAll(async () => {
    const alive = [a, b].filter((s) => s && s.child.exitCode === null && s.child.signalCode === null);
    await Promise.all(alive.map((s) => s.stop('SIGKILL')));
    await fake?.close();
    await testDb?.drop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  async function createStore(name: string, extra: Json = {}): Promise<string> {
    const res = await send(a, 'POST', '/v1/stores', {
      key,
      body: { name: `${name} ${run}`, domain: `${name}.example.com`, platform: 'custom', ...extra },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.data.id as string;
  }

  const clickBody = (storeId: string, fbclid: string): Json => ({
    fbclid,
    storeId,
    landingPage: `https://shop.example.com/?fbclid=${fbclid}`,
  });

  /** Every item of a list, walking its pages on `server`. */
  async function listAll(server: ServerProcess, urlPath: string, field: string): Promise<Json[]> {
    const items: Json[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 100; page++) {
      const sep = urlPath.includes('?') ? '&' : '?';
      const res = await send(server, 'GET', `${urlPath}${sep}limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, {
        key,
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      items.push(...(res.body.data[field] as Json[]));
      if (!res.body.data.hasMore) return items;
      cursor = res.body.data.nextCursor as string;
    }
    throw new Error(`${urlPath}: more than 100 pages`);
  }

  /** Polls until every conversion of the store is `sent` (or throws at the deadline). */
  async function waitAllSent(server: ServerProcess, storeId: string, timeoutMs: number): Promise<Json[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const conversions = await listAll(server, `/v1/conversions?storeId=${storeId}`, 'conversions');
      const statuses = counts(conversions.map((c) => (c.capi as { status: string }).status));
      if (statuses.size === 1 && statuses.has('sent')) return conversions;
      if (Date.now() > deadline) throw new Error(`forwarding not finished: ${JSON.stringify(Object.fromEntries(statuses))}`);
      await sleep(200);
    }
  }

  it('concurrent identical clicks on both instances are one click', async () => {
    const storeId = await createStore('clicks');
    const fbclids = range(20).map((i) => `pair.${run}.${i}`);
    // Each pair leaves for A and B in the same tick; all 40 requests are in flight together.
    const answers = await Promise.all(
      fbclids.map((fbclid) =>
        Promise.all([a, b].map((server) => send(server, 'POST', '/v1/track/click', { key, body: clickBody(storeId, fbclid) }))),
      ),
    );
    for (const [index, pair] of answers.entries()) {
      for (const res of pair) expect(res.status, JSON.stringify(res.body)).toBe(200);
      const [fromA, fromB] = pair.map((res) => res.body.data);
      expect(fromA.fbclid).toBe(fbclids[index]);
      expect(fromB.clickId).toBe(fromA.clickId);
      expect([fromA.duplicate, fromB.duplicate].sort()).toEqual([false, true]);
    }
    const listed = await listAll(b, `/v1/clicks?storeId=${storeId}`, 'clicks');
    expect(listed.map((c) => c.fbclid).sort()).toEqual([...fbclids].sort());
    expect(listed.map((c) => c.clickId).sort()).toEqual(answers.map(([res]) => res?.body.data.clickId).sort());
  });

  it('concurrent identical conversions are one conversion; one Idempotency-Key gives one stored response', async () => {
    const storeId = await createStore('conversions');
    const orderIds = range(20).map((i) => `order-${run}-${i}`);
    const answers = await Promise.all(
      orderIds.map((orderId, i) =>
        Promise.all(
          [a, b].map((server) =>
            send(server, 'POST', '/v1/track/conversion', {
              key,
              body: { storeId, eventType: 'Purchase', orderId, eventValue: 10 + i / 100, currency: 'USD' },
            }),
          ),
        ),
      ),
    );
    for (const pair of answers) {
      for (const res of pair) expect(res.status, JSON.stringify(res.body)).toBe(200);
      const [fromA, fromB] = pair.map((res) => res.body.data);
      expect(fromB.conversionId).toBe(fromA.conversionId);
      expect([fromA.duplicate, fromB.duplicate].sort()).toEqual([false, true]);
    }
    const listed = await listAll(a, `/v1/conversions?storeId=${storeId}`, 'conversions');
    expect(listed.map((c) => c.orderId).sort()).toEqual([...orderIds].sort());
    expect(listed.map((c) => c.conversionId).sort()).toEqual(answers.map(([res]) => res?.body.data.conversionId).sort());

    // Creating a store has no natural key: only the Idempotency-Key keeps it from happening twice.
    const idempotent = await Promise.all(
      range(5).map((i) => {
        const body = { name: `Idem ${run} ${i}`, domain: 'idem.example.com', platform: 'custom' };
        const headers = { 'idempotency-key': `idem-${run}-${i}` };
        return Promise.all([a, b].map((server) => send(server, 'POST', '/v1/stores', { key, body, headers })));
      }),
    );
    for (const [fromA, fromB] of idempotent as [HttpResult, HttpResult][]) {
      expect(fromA.status, JSON.stringify(fromA.body)).toBe(201);
      expect(fromB.status, JSON.stringify(fromB.body)).toBe(201);
      expect(fromB.body.data).toEqual(fromA.body.data);
      // One ran, the other replayed what it stored (under its own request id).
      expect([fromA.headers['idempotent-replayed'], fromB.headers['idempotent-replayed']].sort()).toEqual(['true', undefined]);
      expect(fromB.body.meta.requestId).not.toBe(fromA.body.meta.requestId);
    }
    const stores = await listAll(b, '/v1/stores', 'stores');
    const names = stores.map((s) => s.name as string).filter((n) => n.startsWith(`Idem ${run} `));
    expect(names.sort()).toEqual(range(5).map((i) => `Idem ${run} ${i}`));
  });

  it('a cursor from one instance works on the other; the walk yields every item once', async () => {
    const storeId = await createStore('pages');
    const created: string[] = [];
    for (const i of range(23)) {
      const res = await send(i % 2 ? b : a, 'POST', '/v1/track/click', { key, body: clickBody(storeId, `page.${run}.${i}`) });
      expect(res.status).toBe(200);
      created.push(res.body.data.clickId);
    }
    const walked: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    for (;;) {
      // A, B, A, B …: every cursor is followed on the instance that did not issue it.
      const server = pages % 2 ? b : a;
      const res = await send(server, 'GET', `/v1/clicks?storeId=${storeId}&limit=5${cursor ? `&cursor=${cursor}` : ''}`, { key });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      pages++;
      walked.push(...res.body.data.clicks.map((c: Json) => c.clickId as string));
      if (pages === 2) {
        // Writes during the walk (newer than the walk's position) neither repeat nor hide anything.
        for (const i of range(3)) await send(b, 'POST', '/v1/track/click', { key, body: clickBody(storeId, `late.${run}.${i}`) });
      }
      if (!res.body.data.hasMore) break;
      cursor = encodeURIComponent(res.body.data.nextCursor);
      expect(pages).toBeLessThan(10);
    }
    expect(pages).toBe(5);
    expect(repeated(walked)).toEqual([]);
    expect(walked.sort()).toEqual([...created].sort());
  });

  it.skipIf(!REDIS_URL)('rate limits are shared through Redis: one bucket per key across both instances', async () => {
    for (const server of [a, b]) {
      const ready = await send(server, 'GET', '/readyz');
      expect(ready.body.data).toMatchObject({ rateLimits: 'shared', redis: 'ok' });
    }
    // A key of its own with a small per-key limit: 10 at once, then 1 per second.
    const limited = await createKey(db, { accountId, mode: 'live', name: 'limited', rateLimitRps: 1, rateLimitBurst: 10 });
    const started = performance.now();
    const answers: { via: 'A' | 'B'; res: HttpResult }[] = [];
    for (const i of range(30)) {
      const via = i % 2 ? 'B' : 'A';
      answers.push({ via, res: await send(via === 'A' ? a : b, 'GET', '/v1/stores?limit=1', { key: limited.key }) });
    }
    const seconds = (performance.now() - started) / 1000;
    const allowed = answers.filter((x) => x.res.status === 200);
    const refused = answers.filter((x) => x.res.status === 429);
    expect(allowed.length + refused.length).toBe(30);
    // One bucket: the burst of 10 plus what 1/s refilled meanwhile (per-instance buckets would allow ~20).
    expect(allowed.length).toBeGreaterThanOrEqual(10);
    expect(allowed.length).toBeLessThanOrEqual(10 + Math.ceil(seconds));
    expect(new Set(refused.map((x) => x.via))).toEqual(new Set(['A', 'B']));
    for (const { res } of refused) {
      expect(res.headers['retry-after']).toMatch(/^[1-9]\d*$/);
      expect(res.body.error.code).toBe('rate_limit_exceeded');
      expect(res.body.error.details.retryAfterSeconds).toBe(Number(res.headers['retry-after']));
      expect(res.headers.ratelimit).toMatch(/^"default";r=0;t=\d+$/);
    }
  });

  it('forwarding: 200 conversions on both instances reach Meta exactly once each', async () => {
    const storeId = await createStore('forward', { pixelId: PIXEL, capiAccessToken: TOKEN });
    const orderIds = range(200).map((i) => `fwd-${run}-${i}`);
    const answers = await inParallel(orderIds, 20, (orderId, i) =>
      send(i % 2 ? b : a, 'POST', '/v1/track/conversion', {
        key,
        body: { storeId, eventType: 'Purchase', orderId, eventValue: 25, currency: 'USD' },
      }),
    );
    for (const res of answers) {
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.data.duplicate).toBe(false);
    }
    const conversions = await waitAllSent(a, storeId, 60_000);
    expect(conversions).toHaveLength(200);
    // No event in two requests of the two instances: one sent twice was tried again by the
    // instance that sent it, after Meta's answer came too late for it (1.5 s: a busy machine's
    // fake Graph API can be that slow), so its second attempt follows a recorded timeout.
    const retried = new Set<string>();
    for (const c of conversions) {
      const capi = c.capi as { status: string; attempts: number; lastError?: string };
      expect(capi.status).toBe('sent');
      if (capi.attempts === 1) continue;
      expect(capi.lastError, JSON.stringify(c)).toMatch(/^This server got no answer from 127\.0\.0\.1 within 1500 ms/);
      retried.add(c.orderId as string);
    }
    const delivered = fake.acceptedEventIds().filter((id) => id.startsWith(`fwd-${run}-`));
    expect(repeated(delivered).filter((id) => !retried.has(id))).toEqual([]);
    expect([...new Set(delivered)].sort()).toEqual([...orderIds].sort());
    expect(fake.requests.filter((r) => !r.accepted)).toEqual([]);
  }, 120_000);

  it('analytics are exact whichever instance answers', async () => {
    const storeId = await createStore('analytics');
    // 30 clicks, 10 of them sent again to the other instance (counted once).
    const fbclids = range(30).map((i) => `an.${run}.${i}`);
    const clickSends = [...fbclids.map((f, i) => ({ f, i })), ...fbclids.slice(0, 10).map((f, i) => ({ f, i: i + 1 }))];
    const clicks = await inParallel(clickSends, 20, ({ f, i }) =>
      send(i % 2 ? b : a, 'POST', '/v1/track/click', { key, body: clickBody(storeId, f) }),
    );
    for (const res of clicks) expect(res.status).toBe(200);
    // 40 conversions (every fourth a Lead, whose value is not revenue), the first 25 naming a
    // click (attributed), 10 sent twice; values with cents that binary floating point cannot hold.
    const events = range(40).map((i) => ({
      eventType: i % 4 === 3 ? 'Lead' : 'Purchase',
      orderId: `an-${run}-${i}`,
      cents: 1 + ((i * 7919 + 10) % 250_000),
      fbclid: i < 25 ? fbclids[i % 30] : undefined,
    }));
    const conversionSends = [...events.map((e, i) => ({ e, i })), ...events.slice(10, 20).map((e, i) => ({ e, i: i + 1 }))];
    const conversions = await inParallel(conversionSends, 20, ({ e, i }) =>
      send(i % 2 ? b : a, 'POST', '/v1/track/conversion', {
        key,
        body: {
          storeId,
          eventType: e.eventType,
          orderId: e.orderId,
          eventValue: e.cents / 100,
          currency: 'USD',
          ...(e.fbclid && { fbclid: e.fbclid }),
        },
      }),
    );
    for (const res of conversions) expect(res.status, JSON.stringify(res.body)).toBe(200);
    const purchases = events.filter((e) => e.eventType === 'Purchase');
    const cents = (list: typeof events) => list.reduce((sum, e) => sum + e.cents, 0);
    const expected = {
      totalClicks: 30,
      totalConversions: 40,
      attributedConversions: 25,
      totalRevenue: cents(purchases) / 100,
      attributedRevenue: cents(purchases.filter((e) => e.fbclid)) / 100,
      currency: 'USD',
    };
    // Asked of both at once, straight after the writes (each read folds the store's queue first).
    const [fromA, fromB] = await Promise.all(
      [a, b].map((server) => send(server, 'GET', `/v1/analytics/metrics?storeId=${storeId}`, { key })),
    );
    expect(fromA?.status, JSON.stringify(fromA?.body)).toBe(200);
    expect(fromB?.status, JSON.stringify(fromB?.body)).toBe(200);
    expect(fromA?.body.data).toMatchObject(expected);
    expect(fromB?.body.data).toEqual(fromA?.body.data);
    // And again, once the background refreshers of both have had their turn.
    await sleep(1500);
    const again = await Promise.all(
      [b, a].map((server) => send(server, 'GET', `/v1/analytics/metrics?storeId=${storeId}`, { key })),
    );
    for (const res of again) expect(res.body.data).toEqual(fromA?.body.data);
  });

  // Last: instance A does not come back.
  it('kill -9 of one instance under load: nothing acknowledged is lost or doubled, its leased jobs are sent after the lease', async () => {
    const storeId = await createStore('kill', { pixelId: PIXEL, capiAccessToken: TOKEN });
    interface Sent {
      via: 'A' | 'B';
      kind: 'click' | 'conversion';
      body: Json;
      at: number;
      res?: HttpResult;
      error?: string;
      /** The answer to the client's retry on B, when A never answered. */
      retry?: HttpResult;
    }
    const sent: Sent[] = [];
    let killedAt = 0;
    let stopped = false;
    const attempt = async (via: 'A' | 'B', kind: Sent['kind'], body: Json): Promise<boolean> => {
      const record: Sent = { via, kind, body, at: Date.now() };
      sent.push(record);
      try {
        record.res = await send(via === 'A' ? a : b, 'POST', `/v1/track/${kind}`, { key, body });
        return record.res.status === 200;
      } catch (error) {
        record.error = String(error);
        return false;
      }
    };
    const worker = async (via: 'A' | 'B', lane: number) => {
      for (let i = 0; !stopped && !(via === 'A' && killedAt); i++) {
        const fbclid = `kill.${run}.${via}.${lane}.${i}`;
        if (!(await attempt(via, 'click', clickBody(storeId, fbclid)))) return;
        const conversion = {
          storeId,
          eventType: 'Purchase',
          orderId: `kill-${run}-${via}-${lane}-${i}`,
          eventValue: 5,
          currency: 'USD',
          fbclid,
        };
        if (!(await attempt(via, 'conversion', conversion))) return;
      }
    };
    const workers = [...range(4).map((lane) => worker('A', lane)), ...range(4).map((lane) => worker('B', lane))];

    // Phase 1: both deliver to Meta as usual, until Meta has some of it and each instance has
    // answered a few (a condition, not a time: a busy machine takes longer).
    const isKillEvent = (id: string) => id.startsWith(`kill-${run}-`);
    const answered = (via: 'A' | 'B') => sent.filter((s) => s.via === via && s.res?.status === 200).length;
    for (const deadline = Date.now() + 60_000; ; await sleep(50)) {
      if (fake.acceptedEventIds().some(isKillEvent) && answered('A') > 10 && answered('B') > 10) break;
      if (Date.now() > deadline) throw new Error('phase 1: nothing delivered to Meta within 60 s');
    }
    // Phase 2: Meta stops answering (requests hang past the dispatcher's timeout, nothing is
    // acknowledged), so every job A holds when it dies is one it has not delivered.
    fake.outage = { type: 'hang', ms: 2000 };
    const deliveredBefore = fake.acceptedEventIds().filter(isKillEvent);
    expect(deliveredBefore.length).toBeGreaterThan(0);
    // Wait until every acknowledgement Meta gave is recorded, so no unrecorded one dies with A.
    const allRecorded = async () => {
      const rows = await db.read
        .selectFrom('conversions')
        .select(['event_id', 'capi_status'])
        .where('store_id', '=', storeId)
        .execute();
      const status = new Map(rows.map((r) => [r.event_id, r.capi_status]));
      return fake.acceptedEventIds().every((id) => !isKillEvent(id) || status.get(id) === 'sent');
    };
    const recordDeadline = Date.now() + 30_000;
    while (!(await allRecorded())) {
      if (Date.now() > recordDeadline) throw new Error('acknowledged events were not recorded as sent');
      await sleep(50);
    }
    await sleep(500);
    killedAt = Date.now();
    expect(await a.stop('SIGKILL')).toBe(null);
    const leasedAtKill = await db.read
      .selectFrom('destination_jobs')
      .select(['conversion_id', 'claimed_by', 'next_attempt_at', 'status'])
      .where('destination', '=', 'meta')
      .where('store_id', '=', storeId)
      .where('status', '=', 'pending')
      .where('claimed_by', 'is not', null)
      .execute();
    fake.outage = undefined;
    await sleep(500);
    stopped = true;
    await Promise.all(workers);

    // A answered until it died; B answered everything.
    const okVia = (via: 'A' | 'B') => sent.filter((s) => s.via === via && s.res?.status === 200);
    expect(okVia('A').length).toBeGreaterThan(10);
    expect(okVia('B').length).toBeGreaterThan(10);
    expect(sent.filter((s) => s.via === 'B' && s.res?.status !== 200)).toEqual([]);
    const unanswered = sent.filter((s) => s.res?.status !== 200);
    expect(unanswered.every((s) => s.via === 'A' && s.at >= killedAt - 5000 && s.res === undefined)).toBe(true);

    // The client retries on B what A never answered: each is recorded once, whether A had
    // committed it before dying (duplicate) or not.
    for (const s of unanswered) {
      s.retry = await send(b, 'POST', `/v1/track/${s.kind}`, { key, body: s.body });
      expect(s.retry.status, JSON.stringify(s.retry.body)).toBe(200);
    }

    const clicks = await listAll(b, `/v1/clicks?storeId=${storeId}`, 'clicks');
    const conversions = await listAll(b, `/v1/conversions?storeId=${storeId}`, 'conversions');
    expect(repeated(clicks.map((c) => c.fbclid as string))).toEqual([]);
    expect(repeated(conversions.map((c) => c.orderId as string))).toEqual([]);
    const clickIdOf = new Map(clicks.map((c) => [c.fbclid as string, c.clickId as string]));
    const conversionIdOf = new Map(conversions.map((c) => [c.orderId as string, c.conversionId as string]));
    for (const s of sent) {
      const data = (s.res ?? s.retry)?.body.data;
      if (s.kind === 'click') expect(clickIdOf.get(s.body.fbclid as string)).toBe(data.clickId);
      else expect(conversionIdOf.get(s.body.orderId as string)).toBe(data.conversionId);
    }
    expect(clicks).toHaveLength(sent.filter((s) => s.kind === 'click').length);
    expect(conversions).toHaveLength(sent.filter((s) => s.kind === 'conversion').length);

    // The jobs A held when it died: identified by the last conversion A acknowledged, whose job
    // A wrote leased to itself moments before.
    const lastOfA = okVia('A')
      .filter((s) => s.kind === 'conversion')
      .at(-1);
    const ownerOfA = leasedAtKill.find((j) => j.conversion_id === lastOfA?.res?.body.data.conversionId)?.claimed_by;
    expect(ownerOfA).toMatch(/^dispatcher_/);
    const heldByA = leasedAtKill.filter((j) => j.claimed_by === ownerOfA);
    expect(heldByA.length).toBeGreaterThan(0);

    // B delivers everything, A's jobs once their lease ran out.
    const finished = await waitAllSent(b, storeId, DEFAULT_LEASE_MS + 15_000);
    expect(finished).toHaveLength(conversions.length);
    const outbox = await db.read
      .selectFrom('destination_jobs')
      .select(['conversion_id', 'status', 'sent_at'])
      .where('destination', '=', 'meta')
      .where(
        'conversion_id',
        'in',
        heldByA.map((j) => j.conversion_id),
      )
      .execute();
    const leaseEnd = new Map(heldByA.map((j) => [j.conversion_id, j.next_attempt_at]));
    expect(outbox).toHaveLength(heldByA.length);
    for (const job of outbox) {
      expect(job.status).toBe('sent');
      expect(job.sent_at).toBeGreaterThanOrEqual(leaseEnd.get(job.conversion_id) as number);
    }
    const delivered = fake.acceptedEventIds().filter(isKillEvent);
    expect(repeated(delivered)).toEqual([]);
    expect(delivered.sort()).toEqual(conversions.map((c) => c.eventId as string).sort());
    const takeover = Math.max(...outbox.map((j) => j.sent_at as number)) - killedAt;
    console.log(
      `kill test: ${sent.length} requests (${unanswered.length} retried on B), ${heldByA.length} jobs leased to A at its death, last sent by B ${takeover} ms after the kill`,
    );
  }, 240_000);
});
