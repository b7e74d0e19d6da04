import { expect } from 'vitest';
import type { Reader } from '../../src/db/database.js';
import { type ApiResponse, call, clickBody, conversionBody, type TestContext } from '../helpers.js';

export const DAY_MS = 86_400_000;
export const HOUR_MS = 3_600_000;

/** The UTC calendar date `days` days before now (clicks must be within the last 90 days). */
export const utcDaysAgo = (days: number) => new Date(Date.now() - days * DAY_MS).toISOString().slice(0, 10);
export const addDays = (date: string, days: number) =>
  new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);

/** Campaign parameters of a click's landing page. */
export interface ClickParams {
  page?: string;
  utm_source?: string;
  utm_medium?: string;
  utm_campaign?: string;
  utm_content?: string;
  campaign_id?: string;
  adset_id?: string;
  ad_id?: string;
}

/** API helpers for analytics tests, bound to a test context (account a, live key by default). */
export function analyticsApi(ctx: () => TestContext) {
  const key = () => ctx().a.live;
  return {
    async click(storeId: string, fbclid: string, timestamp: string, params: ClickParams = {}, as = key()) {
      const { page = 'products/tent', ...utm } = params;
      const query = new URLSearchParams({ ...utm, fbclid } as Record<string, string>).toString();
      const res = await call(ctx().app, 'POST', '/v1/track/click', {
        key: as,
        body: clickBody(storeId, { fbclid, timestamp, landingPage: `https://shop.acme.test/${page}?${query}` }),
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.data as { clickId: string };
    },

    async convert(storeId: string, fields: Record<string, unknown>, as = key()) {
      const res = await call(ctx().app, 'POST', '/v1/track/conversion', { key: as, body: conversionBody(storeId, fields) });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.data as { conversionId: string; attributed: boolean };
    },

    async spend(storeId: string, entries: unknown[], as = key()) {
      const res = await call(ctx().app, 'POST', `/v1/stores/${storeId}/ad-spend`, { key: as, body: { entries } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    },

    get(path: string, as = key()): Promise<ApiResponse> {
      return call(ctx().app, 'GET', path, { key: as });
    },

    async getOk(path: string, as = key()) {
      const res = await call(ctx().app, 'GET', path, { key: as });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.data;
    },

    /**
     * Adds touchpoints to a stored conversion. Which clicks the attribution keeps as touchpoints
     * depends on its signal scores; writing them directly makes the multi-touch numbers exact.
     * Must run before the conversion is first read by an analytics query (the rollups fold a
     * conversion in once).
     */
    async addTouchpoints(conversionId: string, clicks: Array<{ clickId: string; clickTime: string }>) {
      await ctx().database.write((trx) =>
        trx
          .insertInto('touchpoints')
          .values(
            clicks.map((c) => ({
              conversion_id: conversionId,
              click_id: c.clickId,
              signal: 'fingerprint',
              score: 80,
              click_time: Date.parse(c.clickTime),
            })),
          )
          .execute(),
      );
    },
  };
}

/**
 * The month rollups (migration 0039) hold exactly the daily dimension rollups summed per local
 * month: every row of both, compared after the folds a test made.
 */
export async function expectMonthsMatchDays(db: Reader): Promise<void> {
  // In key order, with numbers as numbers (PostgreSQL returns bigints and their sums as strings).
  const numeric = new Set(['livemode', 'clicks', 'units', 'revenue_minor', 'refund_minor']);
  const rows = (found: Array<Record<string, unknown>>) =>
    found
      .map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, numeric.has(k) ? Number(v) : v])))
      .sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
  const clickKey = ['store_id', 'livemode', 'dimension', 'local_month', 'value'] as const;
  const clicksByMonth = await db
    .selectFrom('rollup_dimension_clicks')
    .select((eb) => [
      'store_id',
      'livemode',
      'dimension',
      eb.fn<string>('substr', ['local_date', eb.lit(1), eb.lit(7)]).as('local_month'),
      'value',
      eb.fn.sum<number>('clicks').as('clicks'),
    ])
    .groupBy([...clickKey])
    .execute();
  const monthClicks = await db
    .selectFrom('rollup_month_clicks')
    .select([...clickKey, 'clicks'])
    .execute();
  expect(rows(monthClicks)).toEqual(rows(clicksByMonth));

  const creditKey = ['store_id', 'livemode', 'dimension', 'model', 'local_month', 'value', 'currency'] as const;
  const creditsByMonth = await db
    .selectFrom('rollup_dimension_credits')
    .select((eb) => [
      'store_id',
      'livemode',
      'dimension',
      'model',
      eb.fn<string>('substr', ['local_date', eb.lit(1), eb.lit(7)]).as('local_month'),
      'value',
      'currency',
      eb.fn.sum<number>('units').as('units'),
      eb.fn.sum<number>('revenue_minor').as('revenue_minor'),
      eb.fn.sum<number>('refund_minor').as('refund_minor'),
    ])
    .groupBy([...creditKey])
    .execute();
  const monthCredits = await db
    .selectFrom('rollup_month_credits')
    .select([...creditKey, 'units', 'revenue_minor', 'refund_minor'])
    .execute();
  expect(rows(monthCredits)).toEqual(rows(creditsByMonth));
}
