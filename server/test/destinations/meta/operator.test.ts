import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { call, expectError, makeStore, type TestContext } from '../../helpers.js';
import { FakeGraph } from './fake-graph.js';
import { forwardingContext, forwardingStore, getConversion, PIXEL, postConversion, TOKEN, waitForStatus } from './setup.js';

let fake: FakeGraph;
let ctx: TestContext;

beforeAll(async () => {
  fake = await FakeGraph.start();
});
afterAll(async () => fake.close());
afterEach(async () => {
  await ctx?.close();
  fake.reset();
});

const resend = (id: string, key = ctx.a.live) => call(ctx.app, 'POST', `/v1/conversions/${id}/resend`, { key });

describe('GET /v1/conversions?capiStatus=', () => {
  it('filters by forwarding status', async () => {
    ctx = await forwardingContext(fake, {}, { backoffBaseMs: 60_000, backoffCapMs: 60_000 });
    const storeId = await forwardingStore(ctx);
    const plain = await makeStore(ctx.app, ctx.a.live);
    const sent = await postConversion(ctx, storeId, { orderId: 'is-sent' });
    fake.poisoned.add('is-failed');
    const failed = await postConversion(ctx, storeId, { orderId: 'is-failed' });
    fake.faults = [{ type: 'http500' }];
    const pending = await postConversion(ctx, storeId, { orderId: 'is-pending' });
    const skipped = await postConversion(ctx, plain, { orderId: 'is-skipped' });
    const expected = { sent, failed, pending, skipped };
    for (const [status, res] of Object.entries(expected)) {
      const list = await call(ctx.app, 'GET', `/v1/conversions?capiStatus=${status}`, { key: ctx.a.live });
      expect(list.status).toBe(200);
      expect(list.body.data.conversions.map((c: { conversionId: string }) => c.conversionId)).toEqual([
        res.body.data.conversionId,
      ]);
      expect(list.body.data.conversions[0].capi.status).toBe(status);
    }
    const scoped = await call(ctx.app, 'GET', `/v1/conversions?capiStatus=sent&storeId=${plain}`, { key: ctx.a.live });
    expect(scoped.body.data.conversions).toEqual([]);
  });

  it('refuses an unknown status', async () => {
    ctx = await forwardingContext(fake);
    const error = expectError(
      await call(ctx.app, 'GET', '/v1/conversions?capiStatus=delivered', { key: ctx.a.live }),
      400,
      'invalid_request',
    );
    expect(error.details?.field).toBe('capiStatus');
  });
});

describe('POST /v1/conversions/:id/resend', () => {
  it('requeues a failed conversion and waits for its delivery', async () => {
    ctx = await forwardingContext(fake);
    const storeId = await forwardingStore(ctx);
    fake.poisoned.add('fix-me');
    const res = await postConversion(ctx, storeId, { orderId: 'fix-me' });
    const id = res.body.data.conversionId;
    expect((await getConversion(ctx, id)).capi).toMatchObject({ status: 'failed', attempts: 1 });

    fake.poisoned.clear();
    const again = await resend(id);
    expect(again.status).toBe(200);
    expect(again.body.data).toMatchObject({ conversionId: id, capiSent: true, capi: { status: 'sent', attempts: 2 } });
    expect(again.body.data.capi.lastError).toMatch(/invalid custom_data/); // history kept
    expect(fake.acceptedEventIds()).toEqual(['fix-me']);

    // Acknowledged: never sent again.
    const error = expectError(await resend(id), 400, 'invalid_request');
    expect(error.details).toEqual({ reason: 'already_sent' });
    expect(fake.acceptedEventIds()).toEqual(['fix-me']);
  });

  it('leaves a pending conversion as it is', async () => {
    ctx = await forwardingContext(fake, {}, { backoffBaseMs: 60_000, backoffCapMs: 60_000 });
    const storeId = await forwardingStore(ctx);
    fake.faults = [{ type: 'http500' }];
    const res = await postConversion(ctx, storeId);
    const again = await resend(res.body.data.conversionId);
    expect(again.status).toBe(200);
    expect(again.body.data.capi).toMatchObject({ status: 'pending', attempts: 1 });
    expect(fake.requests).toHaveLength(1);
  });

  it('sends a conversion skipped before the store was configured, once it is', async () => {
    ctx = await forwardingContext(fake);
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const res = await postConversion(ctx, storeId);
    const id = res.body.data.conversionId;
    const refused = expectError(await resend(id), 400, 'invalid_request');
    expect(refused.details).toEqual({ reason: 'not_configured' });
    expect(refused.message).toMatch(/pixelId and capiAccessToken/);

    await call(ctx.app, 'PATCH', `/v1/stores/${storeId}`, { key: ctx.a.live, body: { pixelId: PIXEL, capiAccessToken: TOKEN } });
    const again = await resend(id);
    expect(again.body.data).toMatchObject({ capiSent: true, capi: { status: 'sent', attempts: 1 } });
  });

  it('refuses a test-mode conversion without a test event code, and an event older than 7 days', async () => {
    ctx = await forwardingContext(fake);
    const storeId = await forwardingStore(ctx);
    const test = await postConversion(ctx, storeId, {}, ctx.a.test);
    const testError = expectError(await resend(test.body.data.conversionId, ctx.a.test), 400, 'invalid_request');
    expect(testError.details).toEqual({ reason: 'not_configured' });
    expect(testError.message).toMatch(/capiTestEventCode/);

    const old = await postConversion(ctx, storeId, { timestamp: new Date(Date.now() - 8 * 86_400_000).toISOString() });
    const oldError = expectError(await resend(old.body.data.conversionId), 400, 'invalid_request');
    expect(oldError.details).toEqual({ reason: 'expired' });
    expect(fake.requests).toHaveLength(0);
  });

  it('is 404 for an unknown id, and for a conversion of the other mode', async () => {
    ctx = await forwardingContext(fake);
    const storeId = await forwardingStore(ctx);
    expectError(await resend('conv_01m8147zke4a7erw5bxwgdb1p5'), 404, 'not_found');
    const live = await postConversion(ctx, storeId);
    expectError(await resend(live.body.data.conversionId, ctx.a.test), 404, 'not_found');
  });
});

describe('metrics', () => {
  it('count sent, failed and retried events and gauge the outbox backlog', async () => {
    ctx = await forwardingContext(fake, { CAPI_SYNC_WAIT_MS: '0' }, { backoffBaseMs: 60_000, backoffCapMs: 60_000 });
    const storeId = await forwardingStore(ctx);
    fake.outage = { type: 'http500' };
    const first = await postConversion(ctx, storeId);
    await waitForStatus(ctx, first.body.data.conversionId, 'pending');
    await fake.waitFor(() => fake.requests.length === 1, 2000, 'an attempt');
    // The dispatcher counts the retry once its write is synced, a moment after the attempt.
    const text = await vi.waitFor(
      async () => {
        const body = (await call(ctx.app, 'GET', '/metrics')).raw.body;
        expect(body).toContain('waytrack_capi_events_retried_total{mode="live"} 1');
        return body;
      },
      { timeout: 5000, interval: 50 },
    );
    expect(text).toContain('waytrack_capi_outbox_backlog{mode="live"} 1');
    expect(text).toContain('waytrack_capi_outbox_backlog{mode="test"} 0');
    expect(text).toContain('waytrack_capi_requests_total{outcome="retry"} 1');
    expect(text).toMatch(/# TYPE waytrack_capi_events_sent_total counter/);
    expect(text).toMatch(/# TYPE waytrack_capi_events_failed_total counter/);
  });
});
