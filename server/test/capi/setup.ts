import type { DispatcherTuning } from '../../src/destinations/dispatcher.js';
import { trackConversion } from '../../src/tracking/conversions.js';
import { type ApiResponse, call, conversionBody, createTestContext, makeStore, type TestContext } from '../helpers.js';
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
    forwarding: { ...FAST, ...tuning },
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

/** Polls the conversion until its forwarding status is `status`; returns the conversion. */
export async function waitForStatus(ctx: TestContext, id: string, status: string, timeoutMs = 5000, key = ctx.a.live) {
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

export function countBy<T>(items: T[]): Map<T, number> {
  const counts = new Map<T, number>();
  for (const item of items) counts.set(item, (counts.get(item) ?? 0) + 1);
  return counts;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
