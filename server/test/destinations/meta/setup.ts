import type { DispatcherTuning } from '../../../src/destinations/dispatcher.js';
import { newId } from '../../../src/ids.js';
import { trackConversion } from '../../../src/tracking/conversions.js';
import { type ApiResponse, call, conversionBody, createTestContext, makeStore, type TestContext } from '../../helpers.js';
import type { FakeGraph } from './fake-graph.js';

export const PIXEL = '123456789012345';
export const TOKEN = 'EAAB-capi-token-never-logged-7f3a';

/** Dispatcher timings in milliseconds, so retries and leases fit in a test. */
export const FAST: Partial<DispatcherTuning> = {
  backoffBaseMs: 20,
  backoffCapMs: 100,
  pollMs: 20,
  leaseMs: 2000,
  requestTimeoutMs: 1500, // a healthy answer on a machine busy with other tests stays well inside it
};

/**
 * What forwardingContext adds to FAST: tests count requests and attempts, so a healthy answer a
 * busy machine is slow to give must not time out, nor a lease end while an attempt is sent and
 * recorded (either adds a request the test did not program; 1.5 s and 2 s were once too short).
 * Tests of timeouts and leases set their own.
 */
export const RELAXED: Partial<DispatcherTuning> = { requestTimeoutMs: 10_000, leaseMs: 60_000 };

/**
 * A test app forwarding to `fake`; requests wait up to 10 s for Meta unless `env` says otherwise
 * (a healthy fake answers within milliseconds; a failed attempt ends the wait at once; 2 s were
 * once too few for a machine busy with other work).
 */
export function forwardingContext(
  fake: FakeGraph,
  env: Record<string, string> = {},
  tuning: Partial<DispatcherTuning> = {},
): Promise<TestContext> {
  return createTestContext({
    env: { META_GRAPH_URL: fake.url, CAPI_SYNC_WAIT_MS: '10000', ...env },
    forwarding: { ...FAST, ...RELAXED, ...tuning },
  });
}

/** A store of account a with forwarding configured. */
export function forwardingStore(ctx: TestContext, overrides: Record<string, unknown> = {}): Promise<string> {
  return makeStore(ctx.app, ctx.a.live, { pixelId: PIXEL, capiAccessToken: TOKEN, ...overrides });
}

export async function postConversion(
  ctx: TestContext,
  storeId: string,
  overrides: Record<string, unknown> = {},
  key = ctx.a.live,
): Promise<ApiResponse> {
  const res = await call(ctx.app, 'POST', '/v1/track/conversion', { key, body: conversionBody(storeId, overrides) });
  if (res.status !== 200) throw new Error(`conversion failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res;
}

export async function getConversion(ctx: TestContext, id: string, key = ctx.a.live) {
  const res = await call(ctx.app, 'GET', `/v1/conversions/${id}`, { key });
  if (res.status !== 200) throw new Error(`get failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}

/** Polls the conversion until its forwarding status is `status` (a generous bound: a wait, not a timing); returns the conversion. */
export async function waitForStatus(ctx: TestContext, id: string, status: string, timeoutMs = 20_000, key = ctx.a.live) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const conversion = await getConversion(ctx, id, key);
    if (conversion.capi.status === status) return conversion;
    if (Date.now() > deadline) throw new Error(`conversion ${id} stayed ${conversion.capi.status}, expected ${status}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * Records `count` conversions straight through the domain function, which commits them with
 * their outbox jobs but does not wake the dispatcher: with a long pollMs they form a backlog
 * that the next look (`ctx.app.forwarding.wake()`) claims at once.
 */
export async function queueBacklog(ctx: TestContext, storeId: string, count: number, prefix = 'backlog'): Promise<string[]> {
  // After the look the dispatcher makes at start (slow on a fresh PostgreSQL schema): it would
  // otherwise claim the first rows of the backlog while the rest is still being written.
  await ctx.app.forwarding.settled();
  const tenant = { accountId: ctx.a.accountId, livemode: true };
  const ids: string[] = [];
  for (let start = 0; start < count; start += 250) {
    const chunk = Array.from({ length: Math.min(250, count - start) }, (_, i) =>
      trackConversion(ctx.database, tenant, {
        storeId,
        eventType: 'Purchase',
        orderId: `${prefix}-${start + i}`,
        eventValue: 10,
        currency: 'USD',
      }),
    );
    for (const result of await Promise.all(chunk)) ids.push(result.conversionId);
  }
  return ids;
}

/**
 * Like queueBacklog, for a backlog too large to record one conversion at a time on a loaded
 * machine (2400 took 40 s on PostgreSQL beside other work): the first conversion is recorded
 * through the domain function, the others are copies of its row and Meta job written in bulk,
 * each with its own id, order id and event id. Every column is the domain function's, so the
 * copies stay what a recorded conversion is whatever columns the schema gains.
 */
export async function copyBacklog(ctx: TestContext, storeId: string, count: number, prefix = 'backlog'): Promise<string[]> {
  const [firstId] = await queueBacklog(ctx, storeId, 1, prefix);
  const read = ctx.database.read;
  const conversion = await read
    .selectFrom('conversions')
    .selectAll()
    .where('id', '=', firstId as string)
    .executeTakeFirstOrThrow();
  const job = await read
    .selectFrom('destination_jobs')
    .selectAll()
    .where('conversion_id', '=', firstId as string)
    .where('destination', '=', 'meta')
    .executeTakeFirstOrThrow();
  const event = JSON.parse(job.payload) as { event_id: string; custom_data: { order_id: string } };
  const ids = [firstId as string];
  const copies = Array.from({ length: count - 1 }, (_, i) => {
    const orderId = `${prefix}-${i + 1}`;
    const id = newId('conversion');
    ids.push(id);
    const payload = { ...event, event_id: orderId, custom_data: { ...event.custom_data, order_id: orderId } };
    return {
      conversion: { ...conversion, id, order_id: orderId },
      job: { ...job, conversion_id: id, payload: JSON.stringify(payload) },
    };
  });
  // In slices: a statement's bound parameters are limited (SQLite 32766, PostgreSQL 65535).
  await ctx.database.write(async (trx) => {
    for (let start = 0; start < copies.length; start += 200) {
      const slice = copies.slice(start, start + 200);
      await trx
        .insertInto('conversions')
        .values(slice.map((c) => c.conversion))
        .execute();
      await trx
        .insertInto('destination_jobs')
        .values(slice.map((c) => c.job))
        .execute();
    }
  });
  return ids;
}

export function countBy<T>(items: T[]): Map<T, number> {
  const counts = new Map<T, number>();
  for (const item of items) counts.set(item, (counts.get(item) ?? 0) + 1);
  return counts;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
