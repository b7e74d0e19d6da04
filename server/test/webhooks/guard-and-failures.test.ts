import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeGraph } from '../destinations/meta/fake-graph.js';
import { FAST, forwardingStore, postConversion } from '../destinations/meta/setup.js';
import { call, createTestContext, expectError, type TestContext } from '../helpers.js';
import { Receiver } from './receiver.js';

// Webhooks out (api.md §9): endpoints on private addresses refused while WEBHOOKS_ALLOW_PRIVATE
// is off; conversion.forwarding_failed when Meta refuses a conversion, written with the failure.

describe('private addresses refused (WEBHOOKS_ALLOW_PRIVATE off)', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext();
  });
  afterAll(async () => ctx?.close());

  it.each([
    'https://127.0.0.1/hooks',
    'https://127.0.0.1:8443/hooks',
    'https://localhost/hooks',
    'https://api.localhost/hooks',
    'https://10.0.0.5/hooks',
    'https://172.20.1.1/hooks',
    'https://192.168.0.10/hooks',
    'https://169.254.169.254/latest/meta-data',
    'https://[::1]/hooks',
    'https://[fd12:3456::1]/hooks',
    'https://[fe80::1]/hooks',
    'https://[::ffff:127.0.0.1]/hooks',
    'https://[::ffff:10.0.0.5]/hooks',
    'https://0.0.0.0/hooks',
    'https://2130706433/hooks', // 127.0.0.1 as one number (the URL parser normalizes it)
  ])('%s → 400 invalid_request, details.field url', async (url) => {
    const res = await call(ctx.app, 'POST', '/v1/webhooks', { key: ctx.a.live, body: { url, events: ['store.updated'] } });
    const error = expectError(res, 400, 'invalid_request');
    expect(error.details).toMatchObject({ field: 'url', reason: 'invalid_url' });
    expect(error.message).toMatch(/private, loopback or link-local address.*WEBHOOKS_ALLOW_PRIVATE/);
  });

  it('accepts a public address', async () => {
    const res = await call(ctx.app, 'POST', '/v1/webhooks', {
      key: ctx.a.live,
      body: { url: 'https://93.184.216.34/hooks', events: ['store.updated'] },
    });
    expect(res.status).toBe(201);
  });
});

describe('conversion.forwarding_failed', () => {
  let fake: FakeGraph;
  let receiver: Receiver;
  let ctx: TestContext;
  beforeAll(async () => {
    fake = await FakeGraph.start();
    receiver = await Receiver.start();
    ctx = await createTestContext({
      env: { META_GRAPH_URL: fake.url, CAPI_SYNC_WAIT_MS: '2000', WEBHOOKS_ALLOW_PRIVATE: 'true' },
      forwarding: FAST,
      webhooks: { pollMs: 20, ca: receiver.cert },
    });
  });
  afterAll(async () => {
    await ctx?.close();
    await receiver?.close();
    await fake?.close();
  });

  it('is sent when Meta refuses a conversion for good', async () => {
    const created = await call(ctx.app, 'POST', '/v1/webhooks', {
      key: ctx.a.live,
      body: { url: receiver.url('/failed'), events: ['conversion.forwarding_failed'] },
    });
    expect(created.status).toBe(201);
    fake.faults = [{ type: 'error', code: 100, subcode: 2804019, message: 'Invalid parameter' }];
    const storeId = await forwardingStore(ctx);
    const res = await postConversion(ctx, storeId);
    await receiver.waitFor(() => receiver.received.length >= 1);
    const event = JSON.parse(receiver.received[0]?.body as string);
    expect(event).toMatchObject({
      type: 'conversion.forwarding_failed',
      data: { conversionId: res.body.data.conversionId, storeId, destination: 'meta', livemode: true },
    });
    expect(event.data.error).toMatch(/^Meta error \(code 100\/2804019 OAuthException\): Invalid parameter/);
    // Not subscribed: no conversion.attributed nor store.updated here.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(receiver.received).toHaveLength(1);
  });
});
