import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, clickBody, conversionBody, createTestContext, makeStore, type TestContext } from '../helpers.js';

// Test and live never mix (api.md §1), but a conversion whose click reference names a click of
// the other mode says so (docs/api.md "An id of the other mode"), in the POST answer and in the
// attribution explanation — naming the reference and the mode, never anything of the click.

describe('a click reference of the other mode', () => {
  let ctx: TestContext;
  let storeId: string;
  let liveClick: { clickId: string; fbclid: string };
  let testClick: { clickId: string; fbclid: string };
  // Different IP and user agent: no weaker signal may link the conversions below.
  const apart = { ipAddress: '198.51.100.9', userAgent: 'curl/8.0' };

  beforeAll(async () => {
    ctx = await createTestContext();
    storeId = await makeStore(ctx.app, ctx.a.live);
    liveClick = (await call(ctx.app, 'POST', '/v1/track/click', { key: ctx.a.live, body: clickBody(storeId) })).body.data;
    testClick = (await call(ctx.app, 'POST', '/v1/track/click', { key: ctx.a.test, body: clickBody(storeId) })).body.data;
  });
  afterAll(async () => ctx.close());

  const sentences = {
    live: (field: string) =>
      `The ${field} names no click in test mode: a click with that ${field} exists in live mode (test and live data never mix; record the conversion in live mode, e.g. with a wt_live_ key)`,
    test: (field: string) =>
      `The ${field} names no click in live mode: a click with that ${field} exists in test mode (test and live data never mix; record the conversion in test mode, e.g. with a wt_test_ key)`,
  };

  it.each([
    ['fbclid', 'test', (c: { fbclid: string }) => ({ fbclid: c.fbclid })],
    ['clickId', 'test', (c: { clickId: string }) => ({ clickId: c.clickId })],
    ['fbc', 'test', (c: { fbclid: string }) => ({ fbc: `fb.1.${Date.now()}.${c.fbclid}` })],
    ['fbclid', 'live', (c: { fbclid: string }) => ({ fbclid: c.fbclid })],
  ] as const)(
    'a %s of a click of the other mode, sent with a %s key, is named in the answer and the explanation',
    async (field, mode, reference) => {
      const key = mode === 'test' ? ctx.a.test : ctx.a.live;
      const click = mode === 'test' ? liveClick : testClick;
      const other = mode === 'test' ? 'live' : 'test';
      const sent = await call(ctx.app, 'POST', '/v1/track/conversion', {
        key,
        body: conversionBody(storeId, { ...apart, ...reference(click as never) }),
      });
      expect(sent.status).toBe(200);
      expect(sent.body.data.attributed).toBe(false);
      const hint = { field, reason: 'exists_in_other_mode', mode: other, message: sentences[other](field) };
      expect(sent.body.data.clickInOtherMode).toEqual(hint);

      const read = await call(ctx.app, 'GET', `/v1/conversions/${sent.body.data.conversionId}`, { key });
      const attribution = read.body.data.attribution;
      expect(attribution).toMatchObject({ reason: 'no_candidates', clickInOtherMode: hint });
      expect(attribution.message).toMatch(/^No candidate click: /);
      expect(attribution.message).toContain(sentences[other](field));
      // Nothing of the other mode's click is revealed.
      expect(JSON.stringify(read.body)).not.toContain(click.clickId);
      if (field !== 'fbclid' && field !== 'fbc') expect(JSON.stringify(sent.body)).not.toContain(click.fbclid);

      // The same in the reattribute answer.
      const again = await call(ctx.app, 'POST', `/v1/conversions/${sent.body.data.conversionId}/reattribute`, { key });
      expect(again.body.data.attribution.clickInOtherMode).toEqual(hint);
    },
  );

  it('a reference of its own mode, one of nothing, or one of another store has no hint', async () => {
    const otherStore = await makeStore(ctx.app, ctx.a.live, { name: 'Other store' });
    for (const [key, body] of [
      [ctx.a.live, conversionBody(storeId, { fbclid: liveClick.fbclid })],
      [ctx.a.test, conversionBody(storeId, { ...apart, fbclid: 'fbclid_of_nothing' })],
      [ctx.a.test, conversionBody(otherStore, { ...apart, fbclid: liveClick.fbclid })],
      [ctx.a.test, conversionBody(storeId, { ...apart })],
    ] as const) {
      const sent = await call(ctx.app, 'POST', '/v1/track/conversion', { key, body });
      expect(sent.status).toBe(200);
      expect(sent.body.data.clickInOtherMode).toBeUndefined();
      const read = await call(ctx.app, 'GET', `/v1/conversions/${sent.body.data.conversionId}`, { key });
      expect(read.body.data.attribution.clickInOtherMode).toBeUndefined();
    }
  });

  it('a reference to a click of its own mode outside the window is not called a mode mix-up', async () => {
    const old = new Date(Date.now() - 30 * 86_400_000).toISOString();
    const fbclid = `fbclid_both_${Date.now()}`;
    await call(ctx.app, 'POST', '/v1/track/click', { key: ctx.a.test, body: clickBody(storeId, { fbclid, timestamp: old }) });
    await call(ctx.app, 'POST', '/v1/track/click', { key: ctx.a.live, body: clickBody(storeId, { fbclid }) });
    const sent = await call(ctx.app, 'POST', '/v1/track/conversion', {
      key: ctx.a.test,
      body: conversionBody(storeId, { ...apart, fbclid }),
    });
    expect(sent.body.data.attributed).toBe(false);
    expect(sent.body.data.clickInOtherMode).toBeUndefined();
  });
});
