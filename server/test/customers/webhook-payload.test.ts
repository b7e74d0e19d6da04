import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, clickBody, conversionBody, createTestContext, makeStore, type TestContext } from '../helpers.js';

const DAY_MS = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();

/** `conversion.attributed` carries `customer: {new}` as known when it was written (docs/api.md "Customers and cohorts"). */
describe('customer in the conversion.attributed payload', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    // The messages are read from the outbox; the dispatcher never gets to send them.
    ctx = await createTestContext({ env: { WEBHOOKS_ALLOW_PRIVATE: 'true' }, webhooks: { pollMs: 3_600_000 } });
  });
  afterAll(async () => ctx?.close());

  it('says new for a first purchase, not for the next, and nothing without email and phone', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const hook = await call(ctx.app, 'POST', '/v1/webhooks', {
      key: ctx.a.live,
      body: { url: 'https://127.0.0.1:9/hooks', events: ['conversion.attributed'] },
    });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    const now = Date.now();
    const attributed = async (overrides: Record<string, unknown>, at: number) => {
      const click = clickBody(storeId, { timestamp: iso(at - 60_000) });
      expect((await call(ctx.app, 'POST', '/v1/track/click', { key: ctx.a.live, body: click })).status).toBe(200);
      const body = conversionBody(storeId, { fbclid: click.fbclid, timestamp: iso(at), ...overrides });
      const res = await call(ctx.app, 'POST', '/v1/track/conversion', { key: ctx.a.live, body });
      expect(res.body.data.attributed).toBe(true);
      return res.body.data.conversionId as string;
    };
    const first = await attributed({ customerData: { email: 'w@example.com' } }, now - 2 * DAY_MS);
    const second = await attributed({ customerData: { email: 'w@example.com' } }, now - DAY_MS);
    // Earlier than the first, recorded after it: new when written.
    const earlier = await attributed({ customerData: { email: 'w@example.com' } }, now - 3 * DAY_MS);
    const anonymous = await attributed({}, now);
    const messages = await ctx.database.read.selectFrom('webhook_messages').select(['payload']).execute();
    const byConversion = new Map(
      messages.map((m) => {
        const data = (JSON.parse(m.payload) as { data: { conversionId: string; customer?: unknown } }).data;
        return [data.conversionId, data] as const;
      }),
    );
    expect(byConversion.get(first)?.customer).toEqual({ new: true });
    expect(byConversion.get(second)?.customer).toEqual({ new: false });
    expect(byConversion.get(earlier)?.customer).toEqual({ new: true });
    expect(byConversion.get(anonymous)).toBeDefined();
    expect(byConversion.get(anonymous)?.customer).toBeUndefined();
  });
});
