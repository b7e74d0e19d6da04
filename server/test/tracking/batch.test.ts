// POST /v1/track/batch (api.md §2): events recorded as if sent one by one, in order, with
// per-event results, scopes, errors and rate limits; the whole request fails only when it is
// not a list of events. Ends with kill -9 during batches on the real server.
import { mkdtempSync, rmSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MemoryRateLimiter, type RateLimitDecision, type RateLimiter, type RateLimitPolicy } from '../../src/http/rate-limit.js';
import { FakeGraph } from '../destinations/meta/fake-graph.js';
import { forwardingContext, forwardingStore } from '../destinations/meta/setup.js';
import { cli, request, type ServerProcess, serve } from '../e2e/process.js';
import { ENGINE, openTestDatabase, type TestDatabase } from '../engine.js';
import { call, clickBody, conversionBody, createTestContext, expectError, makeStore, type TestContext } from '../helpers.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => ctx.close());

const batch = (events: unknown, key = ctx.a.live, headers?: Record<string, string>) =>
  call(ctx.app, 'POST', '/v1/track/batch', { key, body: { events }, headers });

const click = (storeId: string, overrides: Record<string, unknown> = {}) => ({ type: 'click', ...clickBody(storeId, overrides) });
const conversion = (storeId: string, overrides: Record<string, unknown> = {}) => ({
  type: 'conversion',
  ...conversionBody(storeId, overrides),
});

async function countRows(table: 'clicks' | 'conversions', storeId: string): Promise<number> {
  const rows = await ctx.database.read.selectFrom(table).select('id').where('store_id', '=', storeId).execute();
  return rows.length;
}

describe('POST /v1/track/batch — events as if sent one by one', () => {
  it('answers one result per event, in order, for a batch mixing valid, invalid, duplicate and unauthorized events', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const clicksOnly = await ctx.keyWithScopes(['clicks:write']);
    // Recorded before: the batch's conversion of this order is its duplicate.
    const earlier = conversionBody(storeId, { orderId: 'batch-dup-order' });
    expect((await call(ctx.app, 'POST', '/v1/track/conversion', { key: ctx.a.live, body: earlier })).status).toBe(200);

    const first = click(storeId, { fbclid: 'batchMixA' });
    const events = [
      first,
      click(storeId, { landingPage: undefined }), // 1: missing landingPage
      { ...first }, // 2: the same fbclid again: a duplicate of event 0
      conversion(storeId, { fbclid: 'batchMixA' }), // 3: names the click of event 0
      { type: 'conversion', ...earlier, eventValue: 50 }, // 4: duplicate of the earlier conversion, another value
      42, // 5: not an object
      { type: 'pageview' }, // 6: unknown type
      { type: 'refund', storeId, orderId: 'batch-dup-order', refundId: 'r1', amount: 10, currency: 'USD' }, // 7: refunds the earlier order
      conversion(storeId, { products: [{ productId: 'p', quantity: 0 }] }), // 8: field error inside the event
      click('st_unknown00000000000000000000'), // 9: unknown store
    ];
    const res = await batch(events);
    expect(res.status).toBe(200);
    const { received, failed, results } = res.body.data;
    expect(received).toBe(10);
    expect(results.map((r: { index: number }) => r.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(results.map((r: { status: number }) => r.status)).toEqual([200, 400, 200, 200, 200, 400, 400, 200, 400, 404]);
    expect(failed).toBe(5);

    expect(results[0].data).toMatchObject({ fbclid: 'batchMixA', tracked: true, duplicate: false });
    expect(results[1].error).toEqual({
      code: 'missing_required_field',
      message: 'landingPage is required',
      details: { field: 'landingPage', reason: 'required_field_missing' },
    });
    expect(results[2].data).toMatchObject({ clickId: results[0].data.clickId, duplicate: true });
    expect(results[3].data).toMatchObject({
      attributed: true,
      attributedTo: { clickId: results[0].data.clickId, fbclid: 'batchMixA', confidenceScore: 100 },
      duplicate: false,
    });
    const single = await call(ctx.app, 'POST', '/v1/track/conversion', { key: ctx.a.live, body: { ...earlier, eventValue: 50 } });
    expect(results[4].data).toEqual(single.body.data);
    expect(results[4].data).toMatchObject({ duplicate: true, differences: ['eventValue'] });
    expect(results[5].error).toMatchObject({ code: 'invalid_request', details: { reason: 'invalid_type' } });
    expect(results[6].error).toMatchObject({ code: 'invalid_request', details: { field: 'type', reason: 'unknown_value' } });
    expect(results[7].data).toMatchObject({ refundId: 'r1', amount: 10, duplicate: false });
    const again = await call(ctx.app, 'POST', '/v1/track/refund', {
      key: ctx.a.live,
      body: { storeId, orderId: 'batch-dup-order', refundId: 'r1', amount: 10, currency: 'USD' },
    });
    expect(again.body.data).toEqual({ ...results[7].data, duplicate: true });
    expect(results[8].error).toMatchObject({
      code: 'invalid_request',
      details: { field: 'products[0].quantity', reason: 'out_of_range' },
    });
    expect(results[9].error.code).toBe('store_not_found');
    expect(await countRows('clicks', storeId)).toBe(1);
    expect(await countRows('conversions', storeId)).toBe(2);

    // A key with clicks:write only: its conversion is that event's 403, its click is recorded.
    const scoped = await batch([click(storeId), conversion(storeId)], clicksOnly);
    expect(scoped.status).toBe(200);
    expect(scoped.body.data.results[0].status).toBe(200);
    expect(scoped.body.data.results[1]).toEqual({
      index: 1,
      status: 403,
      error: {
        code: 'forbidden',
        message: 'This API key lacks the conversions:write scope',
        details: { requiredScope: 'conversions:write' },
      },
    });
    expect(await countRows('conversions', storeId)).toBe(2);
  });

  it('records in order: a conversion before its click is not attributed to it', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const res = await batch([conversion(storeId, { fbclid: 'batchLateClick' }), click(storeId, { fbclid: 'batchLateClick' })]);
    expect(res.body.data.results[0].data.attributed).toBe(false);
    expect(res.body.data.results[1].data.duplicate).toBe(false);
  });

  it('the same answers as the single endpoints, with details.field relative to the event', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const bad = [
      clickBody(storeId, { fbclid: 'has space' }),
      clickBody(storeId, { landingPage: 'ftp://x' }),
      clickBody(storeId, { fbclid: null }),
      clickBody(storeId, { userAgent: 'nul\u0000inside' }),
    ];
    const res = await batch(bad.map((body) => ({ type: 'click', ...body })));
    expect(res.status).toBe(200);
    for (const [i, body] of bad.entries()) {
      const single = await call(ctx.app, 'POST', '/v1/track/click', { key: ctx.a.live, body });
      expect(res.body.data.results[i]).toEqual({ index: i, status: single.status, error: single.body.error });
    }
    expect(await countRows('clicks', storeId)).toBe(0);
  });

  it('a test key records test events only', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const res = await batch([click(storeId, { fbclid: 'batchModeA' })], ctx.a.test);
    expect(res.body.data.results[0].status).toBe(200);
    const row = await ctx.database.read
      .selectFrom('clicks')
      .select('livemode')
      .where('fbclid', '=', 'batchModeA')
      .executeTakeFirst();
    expect(row?.livemode).toBe(0);
  });

  it('100 clicks in one request are all recorded, each once', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const events = Array.from({ length: 100 }, (_, i) => click(storeId, { fbclid: `batchHundred${i}` }));
    const res = await batch(events);
    expect(res.body.data.failed).toBe(0);
    expect(new Set(res.body.data.results.map((r: { data: { clickId: string } }) => r.data.clickId)).size).toBe(100);
    expect(await countRows('clicks', storeId)).toBe(100);
    const again = await batch(events);
    expect(again.body.data.results.every((r: { data: { duplicate: boolean } }) => r.data.duplicate)).toBe(true);
    expect(await countRows('clicks', storeId)).toBe(100);
  });
});

describe('POST /v1/track/batch — whole-request errors record nothing', () => {
  it.each([
    ['no events', {}, 'missing_required_field', 'events'],
    ['events null', { events: null }, 'missing_required_field', 'events'],
    ['events not a list', { events: { type: 'click' } }, 'invalid_request', 'events'],
    ['no event', { events: [] }, 'invalid_request', 'events'],
  ])('%s → 400', async (_name, body, code, field) => {
    const res = await call(ctx.app, 'POST', '/v1/track/batch', { key: ctx.a.live, body });
    expect(expectError(res, 400, code).details?.field).toBe(field);
  });

  it('over 500 events → 400 and nothing recorded', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const events = Array.from({ length: 501 }, (_, i) => click(storeId, { fbclid: `over${i}` }));
    const error = expectError(await batch(events), 400, 'invalid_request');
    expect(error.details).toEqual({ field: 'events', reason: 'out_of_range' });
    expect(await countRows('clicks', storeId)).toBe(0);
  });

  it('malformed JSON → 400', async () => {
    const res = await call(ctx.app, 'POST', '/v1/track/batch', {
      key: ctx.a.live,
      rawBody: '{"events": [',
      headers: { 'content-type': 'application/json' },
    });
    expectError(res, 400, 'invalid_request');
  });

  it('a key with neither clicks:write nor conversions:write → 403, before the body is looked at', async () => {
    const key = await ctx.keyWithScopes(['analytics:read', 'stores:write']);
    const error = expectError(
      await call(ctx.app, 'POST', '/v1/track/batch', { key, body: { events: 'nonsense' } }),
      403,
      'forbidden',
    );
    expect(error.details).toEqual({ requiredScope: 'clicks:write', requiredScopes: ['clicks:write', 'conversions:write'] });
  });

  it('without a key → 401', async () => {
    expectError(await call(ctx.app, 'POST', '/v1/track/batch', { body: { events: [] } }), 401, 'unauthorized');
  });
});

describe('POST /v1/track/batch — Idempotency-Key replays the whole answer', () => {
  it('the same key and body: the stored answer, nothing recorded twice; another body: 400', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const events = [click(storeId, { fbclid: 'batchIdemA' }), conversion(storeId, { fbclid: 'batchIdemA' })];
    const headers = { 'idempotency-key': `batch-${Math.random()}` };
    const first = await batch(events, ctx.a.live, headers);
    const second = await batch(events, ctx.a.live, headers);
    expect(second.status).toBe(200);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.body.data).toEqual(first.body.data);
    expect(second.body.data.results[0].data.duplicate).toBe(false);
    expect(await countRows('clicks', storeId)).toBe(1);
    expect(await countRows('conversions', storeId)).toBe(1);
    const other = await batch([click(storeId)], ctx.a.live, headers);
    expect(expectError(other, 400, 'invalid_request').details?.reason).toBe('idempotency_key_reused');
  });
});

/** The real in-memory limiter at a clock that does not move: nothing refills during the test. */
class FrozenClockLimiter implements RateLimiter {
  protected readonly inner = new MemoryRateLimiter();
  protected readonly now = 1_700_000_000_000;
  consume(bucket: string, policy: RateLimitPolicy): Promise<RateLimitDecision> {
    return this.inner.consume(bucket, policy, this.now);
  }
}

/** The same, taking a batch's tokens in one step (as the memory and Redis limiters do). */
class FrozenClockTakingLimiter extends FrozenClockLimiter {
  take(bucket: string, policy: RateLimitPolicy, count: number) {
    return this.inner.take(bucket, policy, count, this.now);
  }
}

describe('POST /v1/track/batch — each event takes one token', () => {
  let limited: TestContext | undefined;
  afterEach(async () => limited?.close());

  it.each([
    ['one token at a time', () => new FrozenClockLimiter()],
    ['all tokens in one step', () => new FrozenClockTakingLimiter()],
  ])('events past the bucket are 429 entries; with no token left the whole request is 429 (%s)', async (_name, make) => {
    limited = await createTestContext({
      env: { RATE_LIMIT_RPS: '1', RATE_LIMIT_BURST: '5' },
      limiter: make(),
    });
    const app = limited.app;
    const key = limited.a.live;
    const storeId = await makeStore(app, key); // takes one token: 4 left
    const events = Array.from({ length: 6 }, (_, i) => click(storeId, { fbclid: `limited${i}` }));
    const res = await call(app, 'POST', '/v1/track/batch', { key, body: { events } });
    expect(res.status).toBe(200);
    expect(res.body.data.results.map((r: { status: number }) => r.status)).toEqual([200, 200, 200, 200, 429, 429]);
    expect(res.body.data.failed).toBe(2);
    expect(res.body.data.results[4].error).toMatchObject({
      code: 'rate_limit_exceeded',
      details: { retryAfterSeconds: 1 },
    });
    expect(res.headers.ratelimit).toBe('"default";r=0;t=5');
    const rows = await limited.database.read.selectFrom('clicks').select('fbclid').where('store_id', '=', storeId).execute();
    expect(rows.map((r) => r.fbclid).sort()).toEqual(['limited0', 'limited1', 'limited2', 'limited3']);

    const none = await call(app, 'POST', '/v1/track/batch', { key, body: { events } });
    expect(expectError(none, 429, 'rate_limit_exceeded').details).toEqual({ retryAfterSeconds: 1 });
    expect(none.headers['retry-after']).toBe('1');
  });
});

describe('POST /v1/track/batch — forwarding to Meta', () => {
  let fake: FakeGraph;
  let forwarding: TestContext | undefined;
  beforeAll(async () => {
    fake = await FakeGraph.start();
  });
  afterAll(async () => {
    await forwarding?.close();
    await fake.close();
  });

  it('capiSent as for single conversions, the waits for Meta overlapping instead of adding up', async () => {
    forwarding = await forwardingContext(fake, { CAPI_SYNC_WAIT_MS: '10000' }, { requestTimeoutMs: 5000 });
    const storeId = await forwardingStore(forwarding);
    fake.latencyMs = 1500;
    const events = Array.from({ length: 4 }, () => conversion(storeId));
    const res = await call(forwarding.app, 'POST', '/v1/track/batch', { key: forwarding.a.live, body: { events } });
    expect(res.body.data.results.map((r: { data: { capiSent: boolean } }) => r.data.capiSent)).toEqual([true, true, true, true]);
    // The fake answers each request 1.5 s after it arrives. One after the other, each request
    // arrives after the previous one's answer, and the four take at least 4 × 1.5 s; overlapping
    // (the dispatcher's two requests in flight per pixel), about 2 × 1.5 s. Judged by the longest
    // chain of requests each arriving after the one before it was answered (k of them take at
    // least k × 1.5 s) rather than by the batch's wall time, which a busy machine stretches.
    const arrivals = fake.requests.map((r) => r.at).sort((x, y) => x - y);
    const chain: number[] = [];
    for (const [i, at] of arrivals.entries()) {
      chain[i] = 1 + Math.max(0, ...arrivals.slice(0, i).map((before, j) => (at - before >= 1500 ? (chain[j] as number) : 0)));
    }
    expect(Math.max(...chain), `arrivals: ${arrivals.map((at) => at - (arrivals[0] as number)).join(', ')} ms`).toBeLessThan(4);
  });
});

describe('POST /v1/track/batch — tenancy', () => {
  it("another account's store is that event's store_not_found; a test key's click never attributes a live conversion", async () => {
    const foreign = await makeStore(ctx.app, ctx.b.live);
    const res = await batch([click(foreign)]);
    expect(res.body.data.results[0]).toMatchObject({ status: 404, error: { code: 'store_not_found' } });
    const storeId = await makeStore(ctx.app, ctx.a.live);
    await batch([click(storeId, { fbclid: 'batchTenancyTest' })], ctx.a.test);
    const live = await batch([conversion(storeId, { fbclid: 'batchTenancyTest' })]);
    expect(live.body.data.results[0].data.attributed).toBe(false);
  });
});

describe('POST /v1/track/batch — in the OpenAPI document', () => {
  it('documents the operation with every event shape', async () => {
    const res = await call(ctx.app, 'GET', '/v1/openapi.json');
    const operation = res.body.paths['/v1/track/batch'].post;
    expect(operation.operationId).toBe('trackBatch');
    const schema = operation.requestBody.content['application/json'].schema;
    const types = schema.properties.events.items.anyOf.map(
      (s: { properties: { type: { enum: string[] } } }) => s.properties.type.enum[0],
    );
    expect(types).toEqual(['click', 'conversion', 'refund']);
    expect(schema.properties.events.items.anyOf[0].properties.fbclid).toBeDefined();
  });
});

/**
 * kill -9 while batches are in flight: every event of a batch answered 200 is stored exactly
 * once after a restart; the events of an unanswered batch at most once (sent again: once).
 */
describe('POST /v1/track/batch — kill -9 during batches', () => {
  let dataDir: string;
  let testDb: TestDatabase;
  let server: ServerProcess | undefined;
  const env: Record<string, string> = {
    CAPI_SYNC_WAIT_MS: '0',
    RATE_LIMIT_RPS: '1000000',
    RATE_LIMIT_BURST: '1000000',
    IP_RATE_LIMIT_RPS: '1000000',
  };

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'waytrack-batch-kill-'));
    testDb = await openTestDatabase(dataDir);
    await testDb.database.close();
    Object.assign(env, testDb.env);
  }, 60_000);

  afterAll(async () => {
    await server?.stop('SIGKILL');
    await testDb?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  interface BatchAnswer {
    status: number;
    body?: { data: { results: Array<{ status: number }> } };
  }

  function post(live: ServerProcess, agent: https.Agent, key: string, body: unknown): Promise<BatchAnswer> {
    const payload = JSON.stringify(body);
    return new Promise((resolve) => {
      const req = https.request(
        new URL('/v1/track/batch', live.url),
        {
          method: 'POST',
          agent,
          ca: live.ca,
          servername: 'localhost',
          timeout: 15_000,
          headers: {
            authorization: `Bearer ${key}`,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(payload),
          },
        },
        (res) => {
          let data = '';
          res.on('data', (d) => {
            data += d;
          });
          res.on('end', () => {
            try {
              resolve({ status: res.statusCode ?? 0, body: JSON.parse(data) });
            } catch {
              resolve({ status: 0 });
            }
          });
          res.on('error', () => resolve({ status: 0 }));
        },
      );
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', () => resolve({ status: 0 }));
      req.end(payload);
    });
  }

  it('every event answered 200 is there once after the restart', async () => {
    const account = JSON.parse(cli(['account', 'create', '--email', 'batch-kill@example.com', '--json'], env).stdout);
    const key = account.keys.live as string;
    const armedEnv = { ...env, ...(ENGINE === 'sqlite' && { WAYTRACK_TEST_CRASH_AT: 'commit:30' }) };
    const live = await serve(armedEnv);
    server = live;
    const store = await request(live, 'POST', '/v1/stores', {
      key,
      body: { name: 'Batch kill', domain: 'kill.example.com', platform: 'custom' },
    });
    const storeId = store.body.data.id as string;
    let dead = false;
    live.child.once('exit', () => {
      dead = true;
    });
    const sent: Array<{ events: Array<Record<string, unknown>>; status: number; statuses: number[] }> = [];
    let acknowledged = 0;
    const lanes = Array.from({ length: 3 }, async (_, lane) => {
      const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
      for (let n = 0; !dead && n < 400; n++) {
        const events = Array.from({ length: 10 }, (_, i) => {
          const fbclid = `kill${lane}b${n}e${i}`;
          return i % 2 === 0
            ? { type: 'click', storeId, fbclid, landingPage: 'https://kill.example.com/' }
            : {
                type: 'conversion',
                storeId,
                eventType: 'Purchase',
                orderId: `o${fbclid}`,
                eventValue: 1,
                currency: 'USD',
                fbclid: `kill${lane}b${n}e${i - 1}`,
              };
        });
        const res = await post(live, agent, key, { events });
        const statuses = res.status === 200 && res.body ? res.body.data.results.map((r) => r.status) : [];
        sent.push({ events, status: res.status, statuses });
        if (res.status !== 200) break;
        acknowledged++;
      }
      agent.destroy();
    });
    if (ENGINE === 'postgres') {
      const until = Date.now() + 15_000;
      while (acknowledged < 10 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      live.child.kill('SIGKILL');
    }
    await Promise.all(lanes);
    await new Promise<void>((resolve) => (dead ? resolve() : live.child.once('exit', () => resolve())));
    if (ENGINE === 'sqlite') expect(live.output()).toContain('crash point commit reached');
    expect(sent.some((s) => s.status === 200)).toBe(true);
    expect(sent.some((s) => s.status !== 200)).toBe(true);

    server = await serve(env);
    const db = testDb.openAnother();
    try {
      const clicks = await db.read.selectFrom('clicks').select('fbclid').where('store_id', '=', storeId).execute();
      const orders = await db.read.selectFrom('conversions').select('order_id').where('store_id', '=', storeId).execute();
      const count = (values: string[]) => values.reduce((m, v) => m.set(v, (m.get(v) ?? 0) + 1), new Map<string, number>());
      const clickCount = count(clicks.map((c) => c.fbclid));
      const orderCount = count(orders.map((o) => o.order_id));
      for (const s of sent) {
        for (const [i, event] of s.events.entries()) {
          const n = event.type === 'click' ? clickCount.get(event.fbclid as string) : orderCount.get(event.orderId as string);
          if (s.status === 200) {
            expect(s.statuses[i]).toBe(200);
            expect(n, `${event.type} ${i} of an answered batch`).toBe(1);
          } else {
            expect(n ?? 0).toBeLessThanOrEqual(1);
          }
        }
      }
    } finally {
      await db.close();
    }
    // The unanswered batches sent again: every event then there once.
    for (const s of sent.filter((x) => x.status !== 200)) {
      const res = await request(server, 'POST', '/v1/track/batch', { key, body: { events: s.events } });
      expect(res.status).toBe(200);
      expect(res.body.data.failed).toBe(0);
    }
  }, 120_000);
});
