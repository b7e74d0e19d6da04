import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FxError, loadRates, restate } from '../../src/fx/operations.js';
import { call, createTestContext, makeStore, type TestContext } from '../helpers.js';

// Dated exchange rates recorded with conversions, on the engine under test (docs/operations.md "Exchange rates").
describe('exchange rates', () => {
  let ctx: TestContext;
  let storeId: string;
  const ids: Record<string, string> = {};

  const RATES = ['date,base,currency,rate', '2026-11-19,EUR,USD,1.2', '2026-11-20,EUR,USD,1.25', '2026-11-20,EUR,JPY,160'].join(
    '\n',
  );

  beforeAll(async () => {
    ctx = await createTestContext();
    // Tokyo: 2026-11-19T20:00Z is already the 20th there.
    storeId = await makeStore(ctx.app, ctx.a.live, { currency: 'USD', timezone: 'Asia/Tokyo' });
  });
  afterAll(async () => ctx?.close());

  async function convert(name: string, eventValue: number, currency: string, timestamp: string) {
    const res = await call(ctx.app, 'POST', '/v1/track/conversion', {
      key: ctx.a.live,
      body: { storeId, eventType: 'Purchase', orderId: name, eventValue, currency, timestamp },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    ids[name] = res.body.data.conversionId;
  }

  const item = async (name: string) =>
    (await call(ctx.app, 'GET', `/v1/conversions/${ids[name]}`, { key: ctx.a.live })).body.data;
  const metrics = async () =>
    (
      await call(ctx.app, 'GET', `/v1/analytics/metrics?storeId=${storeId}&startDate=2026-11-01&endDate=2026-11-26`, {
        key: ctx.a.live,
      })
    ).body.data;

  it('loads a file once; loading it again changes nothing', async () => {
    const first = await loadRates(ctx.database, RATES);
    expect(first).toMatchObject({
      base: 'EUR',
      rates: 3,
      added: 3,
      changed: [],
      unchanged: 0,
      firstDate: '2026-11-19',
      lastDate: '2026-11-20',
    });
    const again = await loadRates(ctx.database, RATES);
    expect(again).toMatchObject({ added: 0, changed: [], unchanged: 3 });
    await expect(loadRates(ctx.database, 'date,base,currency,rate\n2026-11-20,USD,EUR,0.8')).rejects.toThrow(FxError);
  });

  it('records the rate of the conversion’s own day in the store’s time zone, exactly', async () => {
    await convert('eur-20', 100, 'EUR', '2026-11-19T20:00:00Z');
    await convert('jpy-22', 1000, 'JPY', '2026-11-22T03:00:00Z');
    await convert('gbp-21', 10, 'GBP', '2026-11-21T03:00:00Z');
    await convert('eur-10', 100, 'EUR', '2026-11-10T03:00:00Z');
    await convert('usd-20', 50, 'USD', '2026-11-20T03:00:00Z');
    expect((await item('eur-20')).fx).toEqual({ currency: 'USD', rate: '1.25', rateDate: '2026-11-20', value: 125 });
    // No rate on the 22nd or 21st: the 20th's; 1000 × 1.25 / 160 = 7.8125 → 7.81.
    expect((await item('jpy-22')).fx).toEqual({ currency: 'USD', rate: '0.0078125', rateDate: '2026-11-20', value: 7.81 });
    expect((await item('gbp-21')).fx).toBeUndefined();
    // More than 7 days before the first rate: none.
    expect((await item('eur-10')).fx).toBeUndefined();
    expect((await item('usd-20')).fx).toBeUndefined();
  });

  it('metrics show revenue converted at the recorded rates, with what has no rate apart', async () => {
    const m = await metrics();
    expect(m.totalRevenue).toBe(50);
    expect(m.revenueByCurrency).toEqual({ EUR: 200, GBP: 10, JPY: 1000 });
    expect(m.converted).toEqual({ totalRevenue: 182.81, attributedRevenue: 0, unconvertedByCurrency: { EUR: 100, GBP: 10 } });
  });

  it('a rate loaded later changes no past figure until a restatement, which lists every change', async () => {
    const later = await loadRates(ctx.database, 'date,base,currency,rate\n2026-11-20,EUR,USD,1.3\n2026-11-20,EUR,GBP,0.8\n');
    expect(later).toMatchObject({ added: 1, changed: [{ date: '2026-11-20', currency: 'USD', from: '1.25', to: '1.3' }] });
    expect((await item('eur-20')).fx.value).toBe(125);
    expect((await metrics()).converted.totalRevenue).toBe(182.81);

    const preview = await restate(ctx.database, { from: '2026-11-20', to: '2026-11-22', dryRun: true });
    expect(preview.map((c) => [c.conversionId, c.before?.value ?? null, c.after?.value ?? null])).toEqual([
      [ids['eur-20'], 125, 130],
      [ids['gbp-21'], null, 16.25],
      // 1000 × 1.3 / 160 = 8.125 → 8.12 (half to even)
      [ids['jpy-22'], 7.81, 8.12],
    ]);
    expect((await item('eur-20')).fx.value).toBe(125);

    const done = await restate(ctx.database, { from: '2026-11-20', to: '2026-11-22' });
    expect(done).toEqual(preview);
    expect((await item('gbp-21')).fx).toEqual({ currency: 'USD', rate: '1.625', rateDate: '2026-11-20', value: 16.25 });
    expect((await metrics()).converted).toEqual({
      totalRevenue: 204.37,
      attributedRevenue: 0,
      unconvertedByCurrency: { EUR: 100 },
    });
    // Nothing left to restate; the conversion of the 10th is outside the range and keeps no rate.
    expect(await restate(ctx.database, { from: '2026-11-01', to: '2026-11-30' })).toEqual([]);
    await expect(restate(ctx.database, { from: '2026-11-30', to: '2026-11-01' })).rejects.toThrow(
      '--from must not be after --to',
    );
  });
});
