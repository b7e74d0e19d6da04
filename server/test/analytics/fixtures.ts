import { expect } from 'vitest';
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
