import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, conversionBody, createTestContext, expectError, makeStore, type TestContext } from '../helpers.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => ctx.close());

let counter = 0;
const uniq = (prefix: string) => `${prefix}_${Date.now().toString(36)}_${++counter}`;

const refund = (body: Record<string, unknown>, key = ctx.a.live) => call(ctx.app, 'POST', '/v1/track/refund', { key, body });

async function purchase(storeId: string, overrides: Record<string, unknown> = {}, key = ctx.a.live) {
  const body = conversionBody(storeId, { orderId: uniq('order'), eventValue: 100, currency: 'USD', ...overrides });
  const res = await call(ctx.app, 'POST', '/v1/track/conversion', { key, body });
  if (res.status !== 200) throw new Error(`conversion failed: ${JSON.stringify(res.body)}`);
  return { orderId: body.orderId as string, conversionId: res.body.data.conversionId as string };
}

describe('POST /v1/track/refund', () => {
  it('records partial refunds, then the rest, exactly, and the conversion shows refundedTotal', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const { orderId, conversionId } = await purchase(storeId, { eventValue: 0.3 });
    const first = await refund({ storeId, orderId, refundId: 'r1', amount: 0.1, currency: 'usd', reason: 'Wrong size' });
    expect(first.status).toBe(200);
    expect(first.body.data).toEqual({
      refundId: 'r1',
      conversionId,
      amount: 0.1,
      refundedTotal: 0.1,
      remaining: 0.2,
      duplicate: false,
      // No destination configured: the refund goes nowhere.
      forwarding: {},
    });
    const second = await refund({ storeId, orderId, refundId: 'r2', amount: 0.1, currency: 'USD' });
    expect(second.body.data).toMatchObject({ amount: 0.1, refundedTotal: 0.2, remaining: 0.1 });
    // No amount: the whole rest (0.1 + 0.2 is 0.3 exactly).
    const rest = await refund({ storeId, orderId, refundId: 'r3', currency: 'USD' });
    expect(rest.body.data).toMatchObject({ amount: 0.1, refundedTotal: 0.3, remaining: 0, duplicate: false });

    const got = await call(ctx.app, 'GET', `/v1/conversions/${conversionId}`, { key: ctx.a.live });
    expect(got.body.data.refundedTotal).toBe(0.3);
    const list = await call(ctx.app, 'GET', `/v1/conversions?storeId=${storeId}`, { key: ctx.a.live });
    expect(list.body.data.conversions[0].refundedTotal).toBe(0.3);

    const nothingLeft = await refund({ storeId, orderId, refundId: 'r4', currency: 'USD' });
    const error = expectError(nothingLeft, 400, 'invalid_request');
    expect(error.details).toMatchObject({ field: 'amount', reason: 'out_of_range', remaining: 0 });
  });

  it('a conversion never refunded shows refundedTotal 0', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const { conversionId } = await purchase(storeId);
    const got = await call(ctx.app, 'GET', `/v1/conversions/${conversionId}`, { key: ctx.a.live });
    expect(got.body.data.refundedTotal).toBe(0);
  });

  it('refuses more than is left, saying what remains, and records nothing', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const { orderId, conversionId } = await purchase(storeId, { eventValue: 49.99 });
    expect((await refund({ storeId, orderId, refundId: 'a', amount: 20, currency: 'USD' })).status).toBe(200);
    const over = await refund({ storeId, orderId, refundId: 'b', amount: 30, currency: 'USD' });
    const error = expectError(over, 400, 'invalid_request');
    expect(error.details).toEqual({ field: 'amount', reason: 'out_of_range', remaining: 29.99 });
    expect(error.message).toContain('29.99');
    // The refused refundId was not taken: it can be used for an allowed amount.
    const ok = await refund({ storeId, orderId, refundId: 'b', amount: 29.99, currency: 'USD' });
    expect(ok.body.data).toMatchObject({ duplicate: false, refundedTotal: 49.99, remaining: 0 });
    const rows = await ctx.database.read.selectFrom('refunds').selectAll().where('conversion_id', '=', conversionId).execute();
    expect(rows.map((r) => r.amount_minor).sort()).toEqual([2000, 2999]);
  });

  it('uses exact minor units per currency (JPY has none, KWD three)', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const jpy = await purchase(storeId, { eventValue: 1000, currency: 'JPY' });
    const res = await refund({ storeId, orderId: jpy.orderId, refundId: 'j', amount: 333, currency: 'JPY' });
    expect(res.body.data).toMatchObject({ amount: 333, refundedTotal: 333, remaining: 667 });
    const kwd = await purchase(storeId, { eventValue: 1.005, currency: 'KWD' });
    const k = await refund({ storeId, orderId: kwd.orderId, refundId: 'k', amount: 0.001, currency: 'KWD' });
    expect(k.body.data).toMatchObject({ amount: 0.001, refundedTotal: 0.001, remaining: 1.004 });
    // Less than the smallest unit rounds to nothing: refused.
    const tiny = await refund({ storeId, orderId: jpy.orderId, refundId: 'j2', amount: 0.4, currency: 'JPY' });
    expect(expectError(tiny, 400, 'invalid_request').details).toMatchObject({ field: 'amount', reason: 'out_of_range' });
  });

  it('the same refundId again is the first result with duplicate: true, and differences when the body differs', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const { orderId, conversionId } = await purchase(storeId);
    const body = { storeId, orderId, refundId: 'dup', amount: 10, currency: 'USD', timestamp: new Date().toISOString() };
    const first = await refund(body);
    await refund({ storeId, orderId, refundId: 'later', amount: 5, currency: 'USD' });
    const again = await refund(body);
    expect(again.body.data).toEqual({ ...first.body.data, duplicate: true });
    const other = await refund({ ...body, amount: 12, reason: 'changed' });
    expect(other.body.data).toMatchObject({ amount: 10, refundedTotal: 10, remaining: 90, duplicate: true });
    expect(other.body.data.differences).toEqual(['amount', 'reason']);
    const got = await call(ctx.app, 'GET', `/v1/conversions/${conversionId}`, { key: ctx.a.live });
    expect(got.body.data.refundedTotal).toBe(15);
  });

  it('picks the Purchase of the order, else its only conversion; several without a Purchase is refused', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const orderId = uniq('order');
    await purchase(storeId, { orderId, eventType: 'Lead', eventValue: 5 });
    const p = await purchase(storeId, { orderId, eventType: 'Purchase', eventValue: 80 });
    const res = await refund({ storeId, orderId, refundId: 'x', currency: 'USD' });
    expect(res.body.data).toMatchObject({ conversionId: p.conversionId, amount: 80 });

    const only = await purchase(storeId, { eventType: 'Subscribe', eventValue: 12 });
    const sub = await refund({ storeId, orderId: only.orderId, refundId: 'y', currency: 'USD' });
    expect(sub.body.data).toMatchObject({ conversionId: only.conversionId, amount: 12 });

    const twoOrder = uniq('order');
    await purchase(storeId, { orderId: twoOrder, eventType: 'Lead' });
    await purchase(storeId, { orderId: twoOrder, eventType: 'Subscribe' });
    const amb = await refund({ storeId, orderId: twoOrder, refundId: 'z', currency: 'USD' });
    expect(expectError(amb, 400, 'invalid_request').details).toMatchObject({ field: 'orderId', reason: 'ambiguous_order' });
  });

  it('an unknown order is 404 conversion_not_found, also for an order of the other mode or another store', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const other = await makeStore(ctx.app, ctx.a.live);
    const { orderId } = await purchase(storeId);
    const err = expectError(
      await refund({ storeId, orderId: 'nope', refundId: 'n', currency: 'USD' }),
      404,
      'conversion_not_found',
    );
    expect(err.details).toMatchObject({ field: 'orderId' });
    expectError(await refund({ storeId, orderId, refundId: 'n', currency: 'USD' }, ctx.a.test), 404, 'conversion_not_found');
    expectError(await refund({ storeId: other, orderId, refundId: 'n', currency: 'USD' }), 404, 'conversion_not_found');
    // Another account's store.
    expectError(await refund({ storeId, orderId, refundId: 'n', currency: 'USD' }, ctx.b.live), 404, 'store_not_found');
  });

  it('refunds are per mode: a test refund of a test order leaves the live one alone', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const orderId = uniq('order');
    const live = await purchase(storeId, { orderId });
    const test = await purchase(storeId, { orderId }, ctx.a.test);
    const t = await refund({ storeId, orderId, refundId: 'same', amount: 40, currency: 'USD' }, ctx.a.test);
    expect(t.body.data).toMatchObject({ conversionId: test.conversionId, duplicate: false });
    const l = await refund({ storeId, orderId, refundId: 'same', amount: 10, currency: 'USD' });
    expect(l.body.data).toMatchObject({ conversionId: live.conversionId, amount: 10, remaining: 90, duplicate: false });
  });

  it('validates its fields', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const { orderId } = await purchase(storeId, { currency: 'EUR' });
    const base = { storeId, orderId, refundId: 'v', currency: 'EUR' };
    const mismatch = expectError(await refund({ ...base, currency: 'USD' }), 400, 'invalid_request');
    expect(mismatch.details).toEqual({ field: 'currency', reason: 'currency_mismatch', expected: 'EUR' });
    expect(expectError(await refund({ ...base, currency: 'EURO' }), 400, 'invalid_currency').details).toMatchObject({
      field: 'currency',
    });
    expect(expectError(await refund({ ...base, amount: 0 }), 400, 'invalid_request').details).toMatchObject({
      field: 'amount',
      reason: 'out_of_range',
    });
    expect(expectError(await refund({ ...base, amount: -5 }), 400, 'invalid_request').details).toMatchObject({ field: 'amount' });
    expect(expectError(await refund({ ...base, amount: '5' }), 400, 'invalid_request').details).toMatchObject({
      field: 'amount',
      reason: 'invalid_type',
    });
    for (const field of ['storeId', 'orderId', 'refundId', 'currency']) {
      const { [field]: _omit, ...rest } = base as Record<string, unknown>;
      expect(expectError(await refund(rest), 400, 'missing_required_field').details).toMatchObject({ field });
    }
    expect(expectError(await refund({ ...base, refundId: 'x'.repeat(256) }), 400, 'invalid_request').details).toMatchObject({
      field: 'refundId',
    });
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect(expectError(await refund({ ...base, timestamp: future }), 400, 'invalid_request').details).toMatchObject({
      field: 'timestamp',
      reason: 'out_of_range',
    });
  });

  it('needs conversions:write', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const key = await ctx.keyWithScopes(['conversions:read']);
    const res = await refund({ storeId, orderId: 'o', refundId: 'r', currency: 'USD' }, key);
    expect(expectError(res, 403, 'forbidden').details).toMatchObject({ requiredScope: 'conversions:write' });
  });

  it('concurrent refunds never together exceed the conversion, and one refundId sent concurrently is recorded once', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const { orderId, conversionId } = await purchase(storeId, { eventValue: 100 });
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => refund({ storeId, orderId, refundId: `c${i}`, amount: 30, currency: 'USD' })),
    );
    const recorded = results.filter((r) => r.status === 200);
    expect(recorded).toHaveLength(3);
    for (const r of results.filter((r) => r.status !== 200)) {
      expect(expectError(r, 400, 'invalid_request').details?.remaining).toBe(10);
    }
    expect(recorded.map((r) => r.body.data.refundedTotal).sort()).toEqual([30, 60, 90]);

    const same = await Promise.all(
      Array.from({ length: 8 }, () => refund({ storeId, orderId, refundId: 'once', amount: 4, currency: 'USD' })),
    );
    expect(same.every((r) => r.status === 200)).toBe(true);
    expect(same.filter((r) => r.body.data.duplicate === false)).toHaveLength(1);
    expect(new Set(same.map((r) => r.body.data.refundedTotal))).toEqual(new Set([94]));
    const row = await ctx.database.read
      .selectFrom('conversions')
      .select('refunded_minor')
      .where('id', '=', conversionId)
      .executeTakeFirstOrThrow();
    expect(Number(row.refunded_minor)).toBe(9400);
    const sum = await ctx.database.read
      .selectFrom('refunds')
      .select((eb) => eb.fn.sum<number>('amount_minor').as('total'))
      .where('conversion_id', '=', conversionId)
      .executeTakeFirstOrThrow();
    expect(Number(sum.total)).toBe(9400);
  });
});
