import { describe, expect, it } from 'vitest';
import { call, clickBody, conversionBody, makeStore, newAccountsEachTest } from '../helpers.js';

const DAY_MS = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();

/** api.md §11 "Customers": `customer: {new}` on conversion items. */
describe('customer.new on conversions', () => {
  const ctx = newAccountsEachTest();

  async function track(storeId: string, overrides: Record<string, unknown>, key = ctx.a.live) {
    const res = await call(ctx.app, 'POST', '/v1/track/conversion', { key, body: conversionBody(storeId, overrides) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data;
  }
  async function item(id: string, key = ctx.a.live) {
    const res = await call(ctx.app, 'GET', `/v1/conversions/${id}`, { key });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data;
  }
  async function listed(storeId: string, key = ctx.a.live) {
    const res = await call(ctx.app, 'GET', `/v1/conversions?storeId=${storeId}&limit=100`, { key });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return new Map<string, { customer?: { new: boolean } }>(
      res.body.data.conversions.map((c: { conversionId: string }) => [c.conversionId, c]),
    );
  }

  it('is new for the first conversion of an email, not for the next; absent without email and phone', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const now = Date.now();
    const first = await track(storeId, { customerData: { email: 'Ann@Example.com ' }, timestamp: iso(now - 2 * DAY_MS) });
    expect(first.customer).toEqual({ new: true });
    // The same email normalized (case, spaces): the same customer.
    const second = await track(storeId, { customerData: { email: 'ann@example.com' }, timestamp: iso(now - DAY_MS) });
    expect(second.customer).toEqual({ new: false });
    const anonymous = await track(storeId, {});
    expect(anonymous.customer).toBeUndefined();
    expect((await item(first.conversionId)).customer).toEqual({ new: true });
    expect((await item(second.conversionId)).customer).toEqual({ new: false });
    expect('customer' in (await item(anonymous.conversionId))).toBe(false);
    const list = await listed(storeId);
    expect(list.get(first.conversionId)?.customer).toEqual({ new: true });
    expect(list.get(second.conversionId)?.customer).toEqual({ new: false });
    expect(list.get(anonymous.conversionId)?.customer).toBeUndefined();
  });

  it('uses the phone when there is no email; an email takes precedence over a phone', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const byPhone = await track(storeId, { customerData: { phone: '+1 (415) 555-0100' } });
    expect(byPhone.customer).toEqual({ new: true });
    expect((await track(storeId, { customerData: { phone: '14155550100' } })).customer).toEqual({ new: false });
    // With an email, the email is the customer: a new one, though the phone is known.
    const withEmail = await track(storeId, { customerData: { phone: '14155550100', email: 'bo@example.com' } });
    expect(withEmail.customer).toEqual({ new: true });
    expect((await track(storeId, { customerData: { email: 'bo@example.com' } })).customer).toEqual({ new: false });
  });

  it('goes by event time: an earlier purchase arriving later is new and the other one no longer', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const now = Date.now();
    const later = await track(storeId, { customerData: { email: 'cy@example.com' }, timestamp: iso(now - DAY_MS) });
    expect(later.customer).toEqual({ new: true });
    const earlier = await track(storeId, { customerData: { email: 'cy@example.com' }, timestamp: iso(now - 5 * DAY_MS) });
    expect(earlier.customer).toEqual({ new: true });
    expect((await item(later.conversionId)).customer).toEqual({ new: false });
    expect((await item(earlier.conversionId)).customer).toEqual({ new: true });
    // One still later changes nothing.
    const last = await track(storeId, { customerData: { email: 'cy@example.com' } });
    expect(last.customer).toEqual({ new: false });
    expect((await item(earlier.conversionId)).customer).toEqual({ new: true });
  });

  it('keeps test and live mode, and stores, apart', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const other = await makeStore(ctx.app, ctx.a.live);
    const customerData = { email: 'dee@example.com' };
    expect((await track(storeId, { customerData }, ctx.a.test)).customer).toEqual({ new: true });
    expect((await track(storeId, { customerData })).customer).toEqual({ new: true });
    expect((await track(other, { customerData })).customer).toEqual({ new: true });
    expect((await track(storeId, { customerData }, ctx.a.test)).customer).toEqual({ new: false });
    // Another account's store with the same email: its own customer.
    const theirs = await makeStore(ctx.app, ctx.b.live);
    expect((await track(theirs, { customerData }, ctx.b.live)).customer).toEqual({ new: true });
  });

  it('a resent conversion is its original, new as it was; it makes no second customer', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const body = { orderId: 'o-1', customerData: { email: 'eve@example.com' } };
    const first = await track(storeId, body);
    const again = await track(storeId, body);
    expect(again).toMatchObject({ conversionId: first.conversionId, duplicate: true, customer: { new: true } });
    // A resend with an earlier time is still the original (kept): no new first.
    const earlierResend = await track(storeId, { ...body, timestamp: iso(Date.now() - 3 * DAY_MS) });
    expect(earlierResend).toMatchObject({ conversionId: first.conversionId, duplicate: true, customer: { new: true } });
    const rows = await ctx.database.read.selectFrom('customers').selectAll().where('store_id', '=', storeId).execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]?.first_conversion_id).toBe(first.conversionId);
    // Batch: the same answer per event.
    const batch = await call(ctx.app, 'POST', '/v1/track/batch', {
      key: ctx.a.live,
      body: {
        events: [
          { type: 'conversion', ...conversionBody(storeId, body) },
          { type: 'conversion', ...conversionBody(storeId, { customerData: { email: 'eve@example.com' } }) },
        ],
      },
    });
    expect(batch.status, JSON.stringify(batch.body)).toBe(200);
    expect(batch.body.data.results.map((r: { data: { customer?: unknown } }) => r.data.customer)).toEqual([
      { new: true },
      { new: false },
    ]);
  });

  it('records the channel of the first purchase for cohorts', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const click = await call(ctx.app, 'POST', '/v1/track/click', { key: ctx.a.live, body: clickBody(storeId) });
    expect(click.status).toBe(200);
    const converted = await track(storeId, { fbclid: click.body.data.fbclid, customerData: { email: 'fay@example.com' } });
    expect(converted.attributed).toBe(true);
    const row = await ctx.database.read.selectFrom('customers').selectAll().where('store_id', '=', storeId).executeTakeFirst();
    expect(row).toMatchObject({ first_conversion_id: converted.conversionId, channel: 'meta' });
  });

  it('moves the customer to the channel its first conversion is re-attributed to', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const now = Date.now();
    // The conversion names a click recorded only after it: unattributed until re-attributed.
    const click = clickBody(storeId, { timestamp: iso(now - DAY_MS) });
    const converted = await track(storeId, { fbclid: click.fbclid, customerData: { email: 'gus@example.com' } });
    expect(converted.attributed).toBe(false);
    const channel = async () =>
      (await ctx.database.read.selectFrom('customers').select('channel').where('store_id', '=', storeId).executeTakeFirst())
        ?.channel;
    expect(await channel()).toBe('unattributed');
    expect((await call(ctx.app, 'POST', '/v1/track/click', { key: ctx.a.live, body: click })).status).toBe(200);
    const res = await call(ctx.app, 'POST', `/v1/conversions/${converted.conversionId}/reattribute`, { key: ctx.a.live });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toMatchObject({ attributed: true, customer: { new: true } });
    expect(await channel()).toBe('meta');
  });
});
