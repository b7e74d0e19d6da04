import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTestContext, makeStore, type TestContext } from '../helpers.js';
import { type Received, Receiver } from './receiver.js';

// Issue 37, point 3: one account's hanging endpoints and flood of events must not starve another
// account's webhooks (docs/operations.md "Webhooks out"). Account A has 20 endpoints that each
// hold every request HANG_MS (bounded: they answer by themselves, and all at once when the test
// ends) and a backlog of hundreds of messages older than B's; account B's healthy endpoint must
// still get each of its events within 2 s (p99), on the dispatcher's default pool and shares.
// Before the fair claim, A's older messages took every slot of the pool for HANG_MS each, and
// B's waited behind the whole backlog (tens of seconds).

const HANG_MS = 4000;
const HANGING = 20;
const HEALTHY_EVENTS = 20;

let ctx: TestContext;
let receiver: Receiver;
const releases = new Set<() => void>();

/** Holds a request HANG_MS, or until the test lets every hanging request go. */
function hang(): Promise<void> {
  return new Promise((resolve) => {
    const release = () => {
      clearTimeout(timer);
      releases.delete(release);
      resolve();
    };
    const timer = setTimeout(release, HANG_MS);
    releases.add(release);
  });
}

beforeAll(async () => {
  receiver = await Receiver.start();
  receiver.answer = async (request) => {
    if (request.path.startsWith('/hang/')) await hang();
    return 200;
  };
  ctx = await createTestContext({
    env: { WEBHOOKS_ALLOW_PRIVATE: 'true' },
    // Only the poll is shortened (events do not wake the dispatcher): pool, shares and timeouts are the defaults.
    webhooks: { pollMs: 50, ca: receiver.cert },
  });
});
afterAll(async () => {
  for (const release of [...releases]) release();
  await ctx?.close();
  await receiver?.close();
});

async function endpoint(key: string, pathname: string): Promise<void> {
  const res = await call(ctx.app, 'POST', '/v1/webhooks', {
    key,
    body: { url: receiver.url(pathname), events: ['store.updated'] },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
}

async function touch(key: string, storeId: string, n: number): Promise<void> {
  const res = await call(ctx.app, 'PATCH', `/v1/stores/${storeId}`, { key, body: { name: `Touched ${n}` } });
  expect(res.status).toBe(200);
}

/** How long the event took from its creation (the payload's timestamp) to the receiver. */
const deliveryMs = (r: Received) => r.at - Date.parse((JSON.parse(r.body) as { timestamp: string }).timestamp);

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

describe('webhook delivery is fair across accounts', () => {
  it("keeps a healthy endpoint's p99 under 2 s while another account's 20 endpoints hang", async () => {
    for (let i = 0; i < HANGING; i++) await endpoint(ctx.a.live, `/hang/${i}`);
    await endpoint(ctx.b.live, '/healthy');
    const storeA = await makeStore(ctx.app, ctx.a.live, { name: 'Flooding' });
    const storeB = await makeStore(ctx.app, ctx.b.live, { name: 'Healthy' });

    // A's backlog first: 10 events × 20 endpoints, all older than any of B's.
    for (let n = 0; n < 10; n++) await touch(ctx.a.live, storeA, n);
    await receiver.waitFor(() => receiver.received.some((r) => r.path.startsWith('/hang/')));
    // Then B's events, one every 100 ms, while A's flood goes on.
    for (let n = 0; n < HEALTHY_EVENTS; n++) {
      await touch(ctx.b.live, storeB, n);
      await touch(ctx.a.live, storeA, 100 + n);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const healthy = () => receiver.received.filter((r) => r.path === '/healthy');
    // Waits long enough to tell an unfair dispatcher (B's events behind A's backlog) from a slow machine.
    await receiver.waitFor(() => healthy().length >= HEALTHY_EVENTS, 30_000).catch(() => {});
    expect(healthy().length, "B's events delivered within 30 s").toBe(HEALTHY_EVENTS);

    const times = healthy().map(deliveryMs);
    const p99 = percentile(times, 99);
    expect(p99, `delivery times (ms): ${times.join(', ')}`).toBeLessThan(2000);
    // A's endpoints were hanging meanwhile: they held requests, and had a backlog left.
    const hanging = receiver.received.filter((r) => r.path.startsWith('/hang/')).length;
    expect(hanging).toBeGreaterThan(0);
    expect(hanging).toBeLessThan(HANGING * 30);
  }, 60_000);
});
