import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signatureOf } from '../../src/webhooks/signing.js';
import { call, createTestContext, expectError, makeStore, type TestContext } from '../helpers.js';
import { type Received, Receiver } from './receiver.js';

// PATCH /v1/webhooks/:id (api.md §9, docs/api.md "Webhooks out"): an endpoint disabled after its
// deliveries failed is re-enabled with `enabled: true`, keeping its secret (deliveries resume,
// signed as before), its reason cleared; url, events and description change too. Scope
// webhooks:write; another account's or mode's id is 404. On the test's engine.

let ctx: TestContext;
let receiver: Receiver;
beforeAll(async () => {
  receiver = await Receiver.start();
  ctx = await createTestContext({
    // 3 days × 0.00001 = 2.6 s: an endpoint that keeps failing is disabled within seconds.
    env: { WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCALE: '0.00001' },
    webhooks: { pollMs: 20, ca: receiver.cert },
  });
});
afterAll(async () => {
  await ctx?.close();
  await receiver?.close();
});

let counter = 0;
async function createEndpoint(events = ['store.updated'], key = ctx.a.live) {
  const pathname = `/update/${++counter}`;
  const res = await call(ctx.app, 'POST', '/v1/webhooks', { key, body: { url: receiver.url(pathname), events } });
  expect(res.status).toBe(201);
  return { id: res.body.data.id as string, secret: res.body.data.secret as string, pathname };
}

const patch = (id: string, body: unknown, key = ctx.a.live) => call(ctx.app, 'PATCH', `/v1/webhooks/${id}`, { key, body });

async function endpointOf(id: string, key = ctx.a.live) {
  const list = await call(ctx.app, 'GET', '/v1/webhooks?limit=100', { key });
  return list.body.data.webhooks.find((w: { id: string }) => w.id === id);
}

async function waitUntil(what: string, predicate: () => Promise<boolean> | boolean, timeoutMs = 20_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !(await predicate()); ) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A store.updated event for every endpoint of account a (both modes). */
async function storeUpdated(name: string): Promise<string> {
  const storeId = await makeStore(ctx.app, ctx.a.live);
  const res = await call(ctx.app, 'PATCH', `/v1/stores/${storeId}`, { key: ctx.a.live, body: { name } });
  expect(res.status).toBe(200);
  return storeId;
}

const signedWith = (secret: string, r: Received) =>
  signatureOf(secret, r.headers['webhook-id'] as string, Number(r.headers['webhook-timestamp']), r.body) ===
  r.headers['webhook-signature'];

describe('re-enabling a disabled endpoint', () => {
  it('keeps its secret, clears the reason, and deliveries resume', async () => {
    const endpoint = await createEndpoint();
    const mine = () => receiver.received.filter((r) => r.path === endpoint.pathname);
    const previous = receiver.answer;
    receiver.answer = (r, i) => (r.path === endpoint.pathname ? 503 : previous(r, i));
    await storeUpdated('Down');
    await waitUntil('the endpoint disabled', async () => (await endpointOf(endpoint.id)).status === 'disabled');
    const disabled = await endpointOf(endpoint.id);
    expect(disabled.disabledReason).toMatch(/^Deliveries failed for 3 days/);
    receiver.answer = previous;

    // An event while it is disabled is not for it (no message is written for a disabled endpoint).
    await storeUpdated('Still down');
    const reenabled = await patch(endpoint.id, { enabled: true });
    expect(reenabled.status).toBe(200);
    expect(reenabled.body.data).toMatchObject({ id: endpoint.id, status: 'enabled', disabledReason: null, disabledAt: null });
    expect(reenabled.body.data.secret).toBeUndefined();
    expect(await endpointOf(endpoint.id)).toMatchObject({ status: 'enabled', disabledReason: null, disabledAt: null });

    // The next event reaches it, signed with the secret shown at creation.
    const storeId = await storeUpdated('Back up');
    await waitUntil('the delivery after re-enabling', () => mine().some((r) => r.body.includes(storeId)));
    const delivered = mine().find((r) => r.body.includes(storeId)) as Received;
    expect(JSON.parse(delivered.body)).toMatchObject({ type: 'store.updated', data: { storeId } });
    expect(mine().filter((r) => r.body.includes('Still down'))).toEqual([]);
    expect(signedWith(endpoint.secret, delivered)).toBe(true);
  }, 60_000);

  it('enabled: false disables it by request (nothing more is sent); enabled: true brings it back', async () => {
    const endpoint = await createEndpoint();
    const off = await patch(endpoint.id, { enabled: false });
    expect(off.status).toBe(200);
    expect(off.body.data).toMatchObject({ status: 'disabled', disabledReason: expect.stringMatching(/^Disabled by a request/) });
    expect(off.body.data.disabledAt).not.toBeNull();
    const quiet = await storeUpdated('While off');
    // Let the dispatcher look at the outbox (it polls every 20 ms) before checking that nothing came.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.received.filter((r) => r.path === endpoint.pathname && r.body.includes(quiet))).toEqual([]);

    expect((await patch(endpoint.id, { enabled: true })).body.data).toMatchObject({ status: 'enabled', disabledReason: null });
    const storeId = await storeUpdated('On again');
    await waitUntil('the delivery', () =>
      receiver.received.some((r) => r.path === endpoint.pathname && r.body.includes(storeId)),
    );
  });

  it('enabled: true on an enabled endpoint changes nothing', async () => {
    const endpoint = await createEndpoint();
    const res = await patch(endpoint.id, { enabled: true });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ status: 'enabled', disabledReason: null, disabledAt: null });
  });
});

describe('changing an endpoint', () => {
  it('url, events and description; the fields left out keep their values; null clears the description', async () => {
    const endpoint = await createEndpoint(['store.updated', 'refund.recorded']);
    const url = receiver.url(`/moved/${counter}`);
    const changed = await patch(endpoint.id, { url, events: ['refund.recorded', 'refund.recorded'], description: 'Orders' });
    expect(changed.status).toBe(200);
    expect(changed.body.data).toMatchObject({ id: endpoint.id, url, events: ['refund.recorded'], description: 'Orders' });
    const kept = await patch(endpoint.id, {});
    expect(kept.body.data).toMatchObject({ url, events: ['refund.recorded'], description: 'Orders', status: 'enabled' });
    expect((await patch(endpoint.id, { description: null })).body.data).toMatchObject({ url, description: null });
  });

  it('refuses bad bodies with the field at fault', async () => {
    const { id } = await createEndpoint();
    const fieldOf = async (body: unknown) => expectError(await patch(id, body), 400, 'invalid_request').details;
    expect(await fieldOf({ events: [] })).toMatchObject({ field: 'events' });
    expect(await fieldOf({ events: ['order.paid'] })).toMatchObject({ field: 'events[0]', reason: 'unknown_value' });
    expect(await fieldOf({ enabled: 'yes' })).toMatchObject({ field: 'enabled', reason: 'invalid_type' });
    expect(await fieldOf({ url: 'http://localhost/hooks' })).toMatchObject({ field: 'url', reason: 'invalid_url' });
    expect(await fieldOf({ secret: 'whsec_mine' })).toMatchObject({ field: 'secret' });
  });
});

describe('who may change it', () => {
  it('needs webhooks:write', async () => {
    const { id } = await createEndpoint();
    const reader = await ctx.keyWithScopes(['webhooks:read']);
    const error = expectError(await patch(id, { enabled: false }, reader), 403, 'forbidden');
    expect(error.details).toMatchObject({ requiredScope: 'webhooks:write' });
    expect((await endpointOf(id)).status).toBe('enabled');
  });

  it('another account’s or the other mode’s id is 404, and the endpoint is unchanged', async () => {
    const { id } = await createEndpoint();
    expectError(await patch(id, { enabled: false }, ctx.b.live), 404, 'not_found');
    expectError(await patch(id, { enabled: false }, ctx.a.test), 404, 'not_found');
    expectError(await patch('wh_unknown', { enabled: true }), 404, 'not_found');
    expect((await endpointOf(id)).status).toBe('enabled');
  });
});
