import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadRates } from '../../src/fx/operations.js';
import { call, clickBody, createTestContext, makeStore, type TestContext } from '../helpers.js';

const today = new Date().toISOString().slice(0, 10);
const D = (offset: number) => new Date(Date.parse(`${today}T00:00:00Z`) + offset * 86_400_000).toISOString().slice(0, 10);

/**
 * Spend in another currency than the store's (api.md §11 "Currencies"): converted with the rate of
 * its own day (as conversions' rates are chosen: that day, else the latest earlier within 7 days)
 * into adSpend and ROAS, exactly; a day without a rate listed under spendByCurrency, left out of
 * ROAS, with a `spend_not_converted` warning naming the currency and the days.
 */
describe('spend in other currencies', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext();
    // EUR base: 1 EUR = 1.25 USD three days ago and yesterday, 1.2 USD today; JPY only a month ago.
    const rates = [`${D(-3)},EUR,USD,1.25`, `${D(-1)},EUR,USD,1.25`, `${D(0)},EUR,USD,1.2`, `${D(-30)},EUR,JPY,160`];
    await loadRates(ctx.database, ['date,base,currency,rate', ...rates].join('\n'));
  });
  afterAll(async () => ctx?.close());

  const metrics = async (storeId: string) => {
    const res = await call(ctx.app, 'GET', `/v1/analytics/metrics?storeId=${storeId}&startDate=${D(-10)}&endDate=${D(0)}`, {
      key: ctx.a.live,
    });
    expect(res.status).toBe(200);
    return res.body.data;
  };

  it('converts each day at its rate and leaves days without one out of ROAS, with a warning', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live, { currency: 'EUR' });
    const spend = await call(ctx.app, 'POST', `/v1/stores/${storeId}/ad-spend`, {
      key: ctx.a.live,
      body: {
        entries: [
          { date: D(-1), amount: 100, currency: 'EUR', campaignId: 'a' },
          { date: D(-1), amount: 125, currency: 'USD', campaignId: 'b' }, // 100 EUR at 1.25
          { date: D(-2), amount: 60, currency: 'USD', campaignId: 'b' }, // no rate that day: the day before's, 48 EUR
          { date: D(0), amount: 0.01, currency: 'USD', campaignId: 'b' }, // 0.00833… EUR → 0.01 (cents, half to even)
          { date: D(-5), amount: 1000, currency: 'JPY', campaignId: 'c' }, // JPY's last rate is weeks before
          { date: D(-4), amount: 500, currency: 'JPY', campaignId: 'c' },
        ],
      },
    });
    expect(spend.status).toBe(200);
    const conversion = await call(ctx.app, 'POST', '/v1/track/click', {
      key: ctx.a.live,
      body: clickBody(storeId, { fbclid: 'fb_currency_1' }),
    });
    expect(conversion.status).toBe(200);
    const purchase = await call(ctx.app, 'POST', '/v1/track/conversion', {
      key: ctx.a.live,
      body: {
        storeId,
        eventType: 'Purchase',
        orderId: 'cur-1',
        eventValue: 496.02,
        currency: 'EUR',
        fbclid: 'fb_currency_1',
      },
    });
    expect(purchase.status).toBe(200);
    const data = await metrics(storeId);
    expect(data.adSpend).toBe(248.01); // 100 + 100 + 48 + 0.01
    expect(data.roas).toBe(2); // 496.02 / 248.01
    expect(data.spendByCurrency).toEqual({ JPY: 1500 });
    expect(data.adSpendByCurrency).toEqual({ JPY: 1500, USD: 185.01 });
    expect(data.warnings).toEqual([
      {
        code: 'spend_not_converted',
        currency: 'JPY',
        days: [D(-5), D(-4)],
        amount: 1500,
        message: expect.stringMatching(new RegExp(`^1500 JPY of ad spend on ${D(-5)}, ${D(-4)} has no exchange rate to EUR`)),
      },
    ]);
  });

  it('has no ROAS when the only spend cannot be converted', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live, { currency: 'EUR' });
    const spend = await call(ctx.app, 'POST', `/v1/stores/${storeId}/ad-spend`, {
      key: ctx.a.live,
      body: { entries: [{ date: D(-3), amount: 10, currency: 'GBP' }] },
    });
    expect(spend.status).toBe(200);
    const data = await metrics(storeId);
    expect(data).toMatchObject({ adSpend: 0, roas: null, spendByCurrency: { GBP: 10 } });
    expect(data.warnings.map((w: { currency: string }) => w.currency)).toEqual(['GBP']);
  });
});
