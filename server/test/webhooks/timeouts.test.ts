import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordTimeoutRun } from '../../src/db/repositories/webhook-claims.js';
import { call, createTestContext, makeStore, type TestContext } from '../helpers.js';
import { Receiver } from './receiver.js';

// Shorter timeouts for an endpoint that keeps timing out (docs/operations.md "Webhooks out"):
// the full timeout, then the short one after 3 timeouts in a row, the shortest after 6; a 2xx
// restores the full one; while shortened, a periodic attempt at the full timeout lets a slow
// endpoint recover. Timeouts scaled down here: 1.5 s, 250 ms, 100 ms (15 s, 5 s, 2 s by default).

const TUNING = { timeoutMs: 1500, shortTimeoutMs: 250, shortestTimeoutMs: 100 };
const releases = new Set<() => void>();

/** Holds a request until `ms` have passed or the test ends (bounded either way). */
function hold(ms: number): Promise<void> {
  return new Promise((resolve) => {
    const release = () => {
      clearTimeout(timer);
      releases.delete(release);
      resolve();
    };
    const timer = setTimeout(release, ms);
    releases.add(release);
  });
}

let receiver: Receiver;
let ctx: TestContext;
beforeAll(async () => {
  receiver = await Receiver.start();
  ctx = await createTestContext({
    // 3 days × 0.00005 = 13 s; retries after 0.25 ms, 1.5 ms, 6 ms, 30 ms, 180 ms, then every 1.08 s.
    env: { WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCALE: '0.00005' },
    webhooks: { pollMs: 20, ca: receiver.cert, ...TUNING, probeEveryMs: 60_000 },
  });
});
afterAll(async () => {
  for (const release of [...releases]) release();
  await ctx?.close();
  await receiver?.close();
});

interface Delivery {
  id: string;
  eventId: string;
  attempt: number;
  status: string;
  error: string | null;
}

async function deliveries(webhookId: string, key: string): Promise<Delivery[]> {
  const res = await call(ctx.app, 'GET', `/v1/webhooks/${webhookId}/deliveries?limit=100`, { key });
  expect(res.status).toBe(200);
  return (res.body.data.deliveries as Delivery[]).sort((a, b) => a.attempt - b.attempt);
}

async function until<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 25_000): Promise<T> {
  for (const deadline = Date.now() + timeoutMs; ; ) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function endpointOn(pathname: string, key: string): Promise<string> {
  const res = await call(ctx.app, 'POST', '/v1/webhooks', {
    key,
    body: { url: receiver.url(pathname), events: ['store.updated'] },
  });
  expect(res.status).toBe(201);
  return res.body.data.id as string;
}

describe('timeouts of an endpoint that keeps timing out', () => {
  it('shorten after 3 and 6 timeouts in a row, and a 2xx restores the full timeout', async () => {
    const t = await ctx.withNewAccounts();
    let hanging = true;
    receiver.answer = async (request) => {
      if (request.path === '/ladder' && hanging) await hold(10_000);
      return 200;
    };
    const webhookId = await endpointOn('/ladder', t.a.live);
    const storeId = await makeStore(ctx.app, t.a.live, { name: 'Ladder' });
    expect((await call(ctx.app, 'PATCH', `/v1/stores/${storeId}`, { key: t.a.live, body: { name: 'Again' } })).status).toBe(200);

    const seen = await until(
      '7 attempts',
      () => deliveries(webhookId, t.a.live),
      (list) => list.length >= 7,
    );
    expect(seen.slice(0, 7).map((d) => d.error)).toEqual([
      'No answer within 1.5 s',
      'No answer within 1.5 s',
      'No answer within 1.5 s',
      'No answer within 250 ms',
      'No answer within 250 ms',
      'No answer within 250 ms',
      'No answer within 100 ms',
    ]);

    // A success (here a resend, which always gets the full timeout) ends the run of timeouts:
    // the next event's first attempt has the full timeout again.
    hanging = false;
    const resent = await call(ctx.app, 'POST', `/v1/webhooks/${webhookId}/deliveries/${seen[0]?.id}/resend`, { key: t.a.live });
    expect(resent.body.data).toMatchObject({ status: 'succeeded' });
    hanging = true;
    expect((await call(ctx.app, 'PATCH', `/v1/stores/${storeId}`, { key: t.a.live, body: { name: 'Third' } })).status).toBe(200);
    const next = (list: Delivery[]) => list.find((d) => d.eventId !== seen[0]?.eventId && d.attempt === 1);
    const after = await until(
      'the next event’s first attempt',
      () => deliveries(webhookId, t.a.live),
      (list) => !!next(list),
    );
    expect(next(after)?.error).toBe('No answer within 1.5 s');
  }, 60_000);

  it('give a shortened endpoint an attempt at the full timeout now and then, so a slow one recovers', async () => {
    const t = await ctx.withNewAccounts();
    // Answers in 400 ms: too slow for the shortened 250 ms and 100 ms, in time for the full 1.5 s.
    receiver.answer = async (request) => {
      if (request.path === '/slow') await hold(400);
      return 200;
    };
    const webhookId = await endpointOn('/slow', t.a.live);
    // Its run of timeouts as 6 attempts that timed out would have left it (no probe due for a minute).
    const now = Date.now();
    await ctx.database.write(async (trx) => {
      for (let i = 0; i < 6; i++) {
        await recordTimeoutRun(
          trx,
          { webhookId, url: receiver.url('/slow'), outcome: 'timeout', now },
          { shortenAt: 3, probeEveryMs: 60_000 },
        );
      }
    });
    const storeId = await makeStore(ctx.app, t.a.live, { name: 'Slow' });
    expect((await call(ctx.app, 'PATCH', `/v1/stores/${storeId}`, { key: t.a.live, body: { name: 'Slower' } })).status).toBe(200);
    await until(
      'a shortened attempt',
      () => deliveries(webhookId, t.a.live),
      (list) => list.length > 0,
    );
    // The minute passes: the probe is due.
    await ctx.database.write((trx) =>
      trx.updateTable('webhook_timeouts').set({ probe_at: Date.now() }).where('webhook_id', '=', webhookId).execute(),
    );

    const seen = await until(
      'a success',
      () => deliveries(webhookId, t.a.live),
      (list) => list.some((d) => d.status === 'succeeded'),
    );
    const success = seen.findIndex((d) => d.status === 'succeeded');
    // Shortened attempts failed until the probe, which got the time the endpoint needs.
    expect(success).toBeGreaterThan(0);
    expect(seen.slice(0, success).every((d) => d.error === 'No answer within 100 ms')).toBe(true);
    const run = await ctx.database.read
      .selectFrom('webhook_timeouts')
      .selectAll()
      .where('webhook_id', '=', webhookId)
      .executeTakeFirst();
    expect(run).toBeUndefined();
  }, 60_000);

  it('start a new run of timeouts when the endpoint’s URL changes', async () => {
    const t = await ctx.withNewAccounts();
    const webhookId = await endpointOn('/moved', t.a.live);
    const record = (url: string) =>
      ctx.database.write((trx) =>
        recordTimeoutRun(trx, { webhookId, url, outcome: 'timeout', now: Date.now() }, { shortenAt: 3, probeEveryMs: 1000 }),
      );
    for (let i = 0; i < 4; i++) await record(receiver.url('/moved'));
    await record(receiver.url('/elsewhere'));
    const run = await ctx.database.read
      .selectFrom('webhook_timeouts')
      .selectAll()
      .where('webhook_id', '=', webhookId)
      .executeTakeFirstOrThrow();
    expect(run).toMatchObject({ url: receiver.url('/elsewhere'), timeouts_in_row: 1, probe_at: null });
    // Deleting the endpoint deletes its run.
    expect((await call(ctx.app, 'DELETE', `/v1/webhooks/${webhookId}`, { key: t.a.live })).status).toBe(200);
    const gone = await ctx.database.read.selectFrom('webhook_timeouts').selectAll().where('webhook_id', '=', webhookId).execute();
    expect(gone).toEqual([]);
  });
});
