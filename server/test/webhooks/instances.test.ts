import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSecretsKey, SecretBox } from '../../src/secrets.js';
import { WebhookDispatcher } from '../../src/webhooks/dispatcher.js';
import { call, createTestContext, makeStore, type TestContext } from '../helpers.js';
import { Receiver } from './receiver.js';

// Two dispatchers on one database, as two instances run (api.md §7): on PostgreSQL they claim at
// the same time (SKIP LOCKED), on SQLite its one writer takes their claims in turn. Each message
// is sent once, and the per-endpoint limit (2 requests in flight) holds across both: it is
// counted in the database, not in either process.

let receiver: Receiver;
let ctx: TestContext;
let second: WebhookDispatcher;
let open = 0;
let most = 0;

beforeAll(async () => {
  receiver = await Receiver.start();
  receiver.answer = async () => {
    open++;
    most = Math.max(most, open);
    // A slow endpoint (bounded): each request held 300 ms.
    await new Promise((resolve) => setTimeout(resolve, 300));
    open--;
    return 200;
  };
  const tuning = { pollMs: 20, ca: receiver.cert };
  ctx = await createTestContext({ env: { WEBHOOKS_ALLOW_PRIVATE: 'true' }, webhooks: tuning });
  second = new WebhookDispatcher({
    database: ctx.database,
    secrets: new SecretBox(loadSecretsKey(ctx.config)),
    retryScale: 1,
    allowPrivate: true,
    tuning,
  });
  second.start();
});
afterAll(async () => {
  await second?.stop();
  await ctx?.close();
  await receiver?.close();
});

describe('two dispatchers sharing the database', () => {
  it('send each message once, at most 2 at a time to one endpoint', async () => {
    const created = await call(ctx.app, 'POST', '/v1/webhooks', {
      key: ctx.a.live,
      body: { url: receiver.url('/shared'), events: ['store.updated'] },
    });
    expect(created.status).toBe(201);
    const storeId = await makeStore(ctx.app, ctx.a.live, { name: 'Shared' });
    const events = 12;
    for (let n = 0; n < events; n++) {
      expect((await call(ctx.app, 'PATCH', `/v1/stores/${storeId}`, { key: ctx.a.live, body: { name: `N${n}` } })).status).toBe(
        200,
      );
    }
    await receiver.waitFor(() => receiver.received.length >= events, 30_000);
    await new Promise((resolve) => setTimeout(resolve, 300)); // a duplicate would come now
    const ids = receiver.received.map((r) => r.headers['webhook-id']);
    expect(new Set(ids).size).toBe(events);
    expect(ids).toHaveLength(events);
    // Both dispatchers had free slots all along: only the endpoint's limit kept it at 2.
    expect(most).toBe(2);
  }, 60_000);
});
