import { describe, expect, it } from 'vitest';
import { type ApiResponse, call, expectError, makeStore, newAccountsEachTest } from '../helpers.js';

const DAY_MS = 86_400_000;
const SPEND_ID = /^spend_[0-9a-z]{26}$/;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const utcDaysAgo = (days: number) => new Date(Date.now() - days * DAY_MS).toISOString().slice(0, 10);

interface SpendItem {
  id: string;
  date: string;
  amount: number;
  currency: string;
  platform: string;
  campaignId: string | null;
  campaignName: string | null;
  livemode: boolean;
  createdAt: string;
  updatedAt: string;
}

describe('ad spend', () => {
  const ctx = newAccountsEachTest();

  const post = (storeId: string, body: unknown, key = ctx.a.live) =>
    call(ctx.app, 'POST', `/v1/stores/${storeId}/ad-spend`, { key, body });
  const get = (storeId: string, query = '', key = ctx.a.live) =>
    call(ctx.app, 'GET', `/v1/stores/${storeId}/ad-spend${query}`, { key });

  async function record(storeId: string, entries: unknown[], key = ctx.a.live): Promise<SpendItem[]> {
    const res = await post(storeId, { entries }, key);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data.entries;
  }

  /** Every entry of a range, following nextCursor. */
  async function listAll(storeId: string, query: string, key = ctx.a.live): Promise<SpendItem[]> {
    const items: SpendItem[] = [];
    let cursor: string | null = null;
    for (let guard = 0; guard < 100; guard++) {
      const res: ApiResponse = await get(storeId, cursor ? `${query}&cursor=${encodeURIComponent(cursor)}` : query, key);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      items.push(...res.body.data.entries);
      cursor = res.body.data.nextCursor;
      if (!res.body.data.hasMore) {
        expect(cursor).toBeNull();
        break;
      }
    }
    return items;
  }

  async function adSpend(storeId: string, start: string, end: string, key = ctx.a.live) {
    const res = await call(ctx.app, 'GET', `/v1/analytics/metrics?storeId=${storeId}&startDate=${start}&endDate=${end}`, { key });
    expect(res.status).toBe(200);
    return res.body.data;
  }

  function expectInvalid(res: ApiResponse, field: string, reason?: string) {
    const error = expectError(res, 400, 'invalid_request');
    expect(error.details?.field).toBe(field);
    if (reason) expect(error.details?.reason).toBe(reason);
  }

  it('records entries with the documented defaults', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const [entry, named] = await record(storeId, [
      { date: '2026-10-01', amount: 250.5, currency: 'usd' },
      { date: '2026-10-01', amount: 12, currency: 'USD', platform: 'google', campaignId: 'cmp_1', campaignName: 'Black Friday' },
    ]);
    expect(entry?.id).toMatch(SPEND_ID);
    expect(entry).toEqual({
      id: entry?.id,
      storeId,
      date: '2026-10-01',
      amount: 250.5,
      currency: 'USD',
      platform: 'meta',
      campaignId: null,
      campaignName: null,
      source: 'api',
      livemode: true,
      createdAt: expect.stringMatching(ISO_MS),
      updatedAt: expect.stringMatching(ISO_MS),
    });
    expect(named).toMatchObject({
      storeId,
      date: '2026-10-01',
      amount: 12,
      currency: 'USD',
      platform: 'google',
      campaignId: 'cmp_1',
      campaignName: 'Black Friday',
      livemode: true,
    });
    expect(named?.id).not.toBe(entry?.id);
  });

  it('upserts by (date, platform, campaignId): the same key replaces the amount', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const day = '2026-09-15';
    const [first] = await record(storeId, [{ date: day, amount: 100, currency: 'USD' }]);
    const [second] = await record(storeId, [{ date: day, amount: 40.25, currency: 'USD' }]);
    expect(second?.id).toBe(first?.id);
    expect(second?.amount).toBe(40.25);
    expect(second?.createdAt).toBe(first?.createdAt);

    // the explicit default platform is the same key
    const [third] = await record(storeId, [{ date: day, amount: 41, currency: 'USD', platform: 'meta' }]);
    expect(third?.id).toBe(first?.id);

    // another campaign, another platform or another day is a separate entry
    await record(storeId, [
      { date: day, amount: 7, currency: 'USD', campaignId: 'c1' },
      { date: day, amount: 8, currency: 'USD', campaignId: 'c2' },
      { date: day, amount: 9, currency: 'USD', platform: 'tiktok' },
      { date: '2026-09-16', amount: 10, currency: 'USD' },
    ]);
    // and re-posting a campaign replaces just that one
    await record(storeId, [{ date: day, amount: 70, currency: 'USD', campaignId: 'c1' }]);

    const items = await listAll(storeId, '?startDate=2026-09-01&endDate=2026-09-30');
    expect(items).toHaveLength(5);
    const byKey = Object.fromEntries(items.map((e) => [`${e.date}/${e.platform}/${e.campaignId}`, e.amount]));
    expect(byKey).toEqual({
      '2026-09-15/meta/null': 41,
      '2026-09-15/meta/c1': 70,
      '2026-09-15/meta/c2': 8,
      '2026-09-15/tiktok/null': 9,
      '2026-09-16/meta/null': 10,
    });
    expect((await adSpend(storeId, day, day)).adSpend).toBe(128);
    expect((await adSpend(storeId, '2026-09-01', '2026-09-30')).adSpend).toBe(138);
  });

  it('keeps amounts exact', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const day = utcDaysAgo(3);
    await record(storeId, [
      { date: day, amount: 0.1, currency: 'USD', campaignId: 'a' },
      { date: day, amount: 0.2, currency: 'USD', campaignId: 'b' },
    ]);
    expect((await adSpend(storeId, day, day)).adSpend).toBe(0.3);

    const yen = await makeStore(ctx.app, ctx.a.live, { currency: 'JPY' });
    const [entry] = await record(yen, [{ date: day, amount: 1500, currency: 'JPY' }]);
    expect(entry?.amount).toBe(1500);
    expect((await adSpend(yen, day, day)).adSpend).toBe(1500);

    const [cents] = await record(storeId, [{ date: day, amount: 19.99, currency: 'USD', campaignId: 'c' }]);
    expect(cents?.amount).toBe(19.99);
    expect((await adSpend(storeId, day, day)).adSpend).toBe(20.29);
  });

  it('validates entries', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const ok = { date: '2026-10-01', amount: 10, currency: 'USD' };
    expectInvalid(await post(storeId, { entries: [{ ...ok, date: '2026-02-30' }] }), 'entries[0].date', 'invalid_format');
    expectInvalid(await post(storeId, { entries: [ok, { ...ok, date: '2026/10/01' }] }), 'entries[1].date', 'invalid_format');
    expectInvalid(await post(storeId, { entries: [{ ...ok, amount: -0.01 }] }), 'entries[0].amount', 'out_of_range');
    expectInvalid(await post(storeId, { entries: [{ ...ok, amount: '10' }] }), 'entries[0].amount', 'invalid_type');
    const currency = expectError(await post(storeId, { entries: [{ ...ok, currency: 'ABC' }] }), 400, 'invalid_currency');
    expect(currency.details?.field).toBe('entries[0].currency');
    const second = expectError(await post(storeId, { entries: [ok, { ...ok, currency: 'dollars' }] }), 400, 'invalid_currency');
    expect(second.details?.field).toBe('entries[1].currency');
    expectInvalid(await post(storeId, { entries: [] }), 'entries', 'out_of_range');
    expectInvalid(await post(storeId, { entries: [{ ...ok, cost: 3 }] }), 'entries[0].cost', 'unknown_field');
    expectInvalid(await post(storeId, { entries: [ok], source: 'meta' }), 'source', 'unknown_field');
    const missing = expectError(await post(storeId, {}), 400, 'missing_required_field');
    expect(missing.details?.field).toBe('entries');
    const noAmount = expectError(
      await post(storeId, { entries: [{ date: '2026-10-01', currency: 'USD' }] }),
      400,
      'missing_required_field',
    );
    expect(noAmount.details?.field).toBe('entries[0].amount');

    // a request with one bad entry stores none of them
    await post(storeId, { entries: [ok, { ...ok, date: '2026-10-02', currency: 'ABC' }] });
    expect(await listAll(storeId, '?startDate=2026-09-01&endDate=2026-10-31')).toEqual([]);
  });

  it('lists a date range, newest day first, with pagination', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const entries = [];
    for (let d = 1; d <= 9; d++) entries.push({ date: `2026-08-0${d}`, amount: d, currency: 'USD' });
    await record(storeId, entries);
    await record(storeId, [{ date: '2026-08-05', amount: 0.5, currency: 'USD', campaignId: 'x' }]);

    const first = await get(storeId, '?startDate=2026-08-02&endDate=2026-08-08&limit=3');
    expect(first.status).toBe(200);
    expect(first.body.data.entries.map((e: SpendItem) => e.date)).toEqual(['2026-08-08', '2026-08-07', '2026-08-06']);
    expect(first.body.data.hasMore).toBe(true);

    const all = await listAll(storeId, '?startDate=2026-08-02&endDate=2026-08-08&limit=3');
    expect(all.map((e) => e.date)).toEqual([
      '2026-08-08',
      '2026-08-07',
      '2026-08-06',
      '2026-08-05',
      '2026-08-05',
      '2026-08-04',
      '2026-08-03',
      '2026-08-02',
    ]);
    expect(new Set(all.map((e) => e.id)).size).toBe(8);
    const fifth = all.filter((e) => e.date === '2026-08-05');
    // same day: by id, descending
    expect(fifth.map((e) => e.id)).toEqual(
      fifth
        .map((e) => e.id)
        .sort()
        .reverse(),
    );

    const single = await listAll(storeId, '?startDate=2026-08-09&endDate=2026-08-09');
    expect(single.map((e) => e.amount)).toEqual([9]);
  });

  it('lists the last 30 days by default', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    await record(storeId, [
      { date: utcDaysAgo(2), amount: 1, currency: 'USD' },
      { date: utcDaysAgo(45), amount: 2, currency: 'USD' },
    ]);
    const res = await get(storeId);
    expect(res.status).toBe(200);
    expect(res.body.data.entries.map((e: SpendItem) => e.amount)).toEqual([1]);
    expect(res.body.data.hasMore).toBe(false);
    expect(res.body.data.nextCursor).toBeNull();
  });

  it('validates the list query', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    expectInvalid(await get(storeId, '?startDate=2026-02-30'), 'startDate', 'invalid_format');
    expectInvalid(await get(storeId, '?startDate=2026-05-02&endDate=2026-05-01'), 'startDate');
    expectInvalid(await get(storeId, '?limit=0'), 'limit');
    expectInvalid(await get(storeId, '?cursor=forged.cursor'), 'cursor');
  });

  it('separates live and test spend', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const day = utcDaysAgo(4);
    await record(storeId, [{ date: day, amount: 10, currency: 'USD' }]);
    const [test] = await record(storeId, [{ date: day, amount: 999, currency: 'USD' }], ctx.a.test);
    expect(test?.livemode).toBe(false);

    const live = await listAll(storeId, `?startDate=${day}&endDate=${day}`);
    expect(live.map((e) => [e.amount, e.platform])).toEqual([[10, 'meta']]);
    const testList = await listAll(storeId, `?startDate=${day}&endDate=${day}`, ctx.a.test);
    expect(testList.map((e) => e.amount)).toEqual([999]);
    expect((await adSpend(storeId, day, day)).adSpend).toBe(10);
    expect((await adSpend(storeId, day, day, ctx.a.test)).adSpend).toBe(999);
  });

  it('still records and lists spend for an inactive store', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    expect(
      (await call(ctx.app, 'PATCH', `/v1/stores/${storeId}`, { key: ctx.a.live, body: { status: 'inactive' } })).status,
    ).toBe(200);
    const day = utcDaysAgo(1);
    await record(storeId, [{ date: day, amount: 3.5, currency: 'USD' }]);
    expect((await listAll(storeId, `?startDate=${day}&endDate=${day}`)).map((e) => e.amount)).toEqual([3.5]);
    expect((await adSpend(storeId, day, day)).adSpend).toBe(3.5);
  });

  it("answers store_not_found for another account's store and stores nothing", async () => {
    const foreign = await makeStore(ctx.app, ctx.b.live);
    const day = utcDaysAgo(1);
    expectError(await post(foreign, { entries: [{ date: day, amount: 5, currency: 'USD' }] }), 404, 'store_not_found');
    expectError(await get(foreign), 404, 'store_not_found');
    expectError(await post('st_unknown', { entries: [{ date: day, amount: 5, currency: 'USD' }] }), 404, 'store_not_found');
    const owner = await get(foreign, `?startDate=${day}&endDate=${day}`, ctx.b.live);
    expect(owner.body.data.entries).toEqual([]);
  });
});
