import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, clickBody, conversionBody, createTestContext, makeStore, type TestContext } from '../helpers.js';
import { Receiver } from '../webhooks/receiver.js';

// api.md §12 "attributedTo names the click's platform" (issue 39 point 4): `clickIds` and
// `channel` wherever attributedTo appears, `fbclid` only when the credited click has one.

let ctx: TestContext;
let receiver: Receiver;
let storeId: string;
beforeAll(async () => {
  receiver = await Receiver.start();
  ctx = await createTestContext({
    env: { WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCALE: '0.00001' },
    webhooks: { pollMs: 20, ca: receiver.cert },
  });
  storeId = await makeStore(ctx.app, ctx.a.live);
  const hook = await call(ctx.app, 'POST', '/v1/webhooks', {
    key: ctx.a.live,
    body: { url: receiver.url('/attributed-to'), events: ['conversion.attributed'] },
  });
  expect(hook.status).toBe(201);
});
afterAll(async () => {
  await ctx?.close();
  await receiver?.close();
});

const ip = (n: number) => `198.51.100.${n}`;
const ua = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36';

async function clickWith(ids: Record<string, string>, n: number): Promise<string> {
  const body = { ...clickBody(storeId, { ipAddress: ip(n), userAgent: ua }), fbclid: undefined, ...ids };
  const res = await call(ctx.app, 'POST', '/v1/track/click', { key: ctx.a.live, body });
  expect(res.status).toBe(200);
  return res.body.data.clickId as string;
}

async function convert(overrides: Record<string, unknown>) {
  const res = await call(ctx.app, 'POST', '/v1/track/conversion', { key: ctx.a.live, body: conversionBody(storeId, overrides) });
  expect(res.status).toBe(200);
  return res.body.data;
}

const get = async (id: string) => (await call(ctx.app, 'GET', `/v1/conversions/${id}`, { key: ctx.a.live })).body.data;

async function webhookOf(conversionId: string) {
  const events = () =>
    receiver
      .ofType('conversion.attributed')
      .map((r) => JSON.parse(r.body).data)
      .filter((d) => d.conversionId === conversionId);
  await receiver.waitFor(() => events().length >= 1);
  return events()[events().length - 1];
}

describe('attributedTo names the click’s platform (api.md §12)', () => {
  it('a Google click: no fbclid, clickIds {gclid}, channel google_ads — in the answer, GET, the list and the webhook', async () => {
    const clickId = await clickWith({ gclid: 'Cj0KCQ-google-1' }, 1);
    const data = await convert({ gclid: 'Cj0KCQ-google-1' });
    const expected = { clickId, clickIds: { gclid: 'Cj0KCQ-google-1' }, channel: 'google_ads', confidenceScore: 100 };
    expect(data.attributedTo).toEqual(expected);
    expect((await get(data.conversionId)).attributedTo).toEqual(expected);
    const list = await call(ctx.app, 'GET', `/v1/conversions?storeId=${storeId}`, { key: ctx.a.live });
    const listed = list.body.data.conversions.find((c: { conversionId: string }) => c.conversionId === data.conversionId);
    expect(listed.attributedTo).toEqual(expected);
    const hook = await webhookOf(data.conversionId);
    expect(hook).toMatchObject({ attributedClickId: clickId, clickIds: { gclid: 'Cj0KCQ-google-1' }, channel: 'google_ads' });
    expect(hook).not.toHaveProperty('fbclid');
    // Stored with the result, not derived from the click's key.
    const row = await ctx.database.read
      .selectFrom('conversions')
      .select(['attributed_click_ids', 'attributed_fbclid'])
      .where('id', '=', data.conversionId)
      .executeTakeFirstOrThrow();
    expect(JSON.parse(row.attributed_click_ids ?? 'null')).toEqual({ gclid: 'Cj0KCQ-google-1' });
  });

  it('a Meta click: fbclid, clickIds {fbclid}, channel meta (by IP and user agent too)', async () => {
    const clickId = await clickWith({ fbclid: 'IwAR-meta-1' }, 2);
    const data = await convert({ ipAddress: ip(2), userAgent: ua });
    expect(data.attributedTo).toMatchObject({
      clickId,
      fbclid: 'IwAR-meta-1',
      clickIds: { fbclid: 'IwAR-meta-1' },
      channel: 'meta',
    });
    const hook = await webhookOf(data.conversionId);
    expect(hook).toMatchObject({ fbclid: 'IwAR-meta-1', clickIds: { fbclid: 'IwAR-meta-1' }, channel: 'meta' });
  });

  it('TikTok and Microsoft clicks name their channels; every id of a click is listed', async () => {
    await clickWith({ ttclid: 'E.C.P.tt-3' }, 3);
    expect((await convert({ ttclid: 'E.C.P.tt-3' })).attributedTo).toMatchObject({
      channel: 'tiktok',
      clickIds: { ttclid: 'E.C.P.tt-3' },
    });
    await clickWith({ msclkid: 'ms-4', wbraid: 'wb-4' }, 4);
    const ms = await convert({ msclkid: 'ms-4' });
    expect(ms.attributedTo.clickIds).toEqual({ wbraid: 'wb-4', msclkid: 'ms-4' });
    expect(ms.attributedTo.channel).toBe('microsoft');
    expect(ms.attributedTo).not.toHaveProperty('fbclid');
  });

  it('a click with several kinds: the kind the conversion named, else the first of fbclid, gclid, …', async () => {
    await clickWith({ fbclid: 'IwAR-both-5', gclid: 'G-both-5' }, 5);
    const named = await convert({ gclid: 'G-both-5' });
    expect(named.attributedTo).toMatchObject({
      fbclid: 'IwAR-both-5',
      clickIds: { fbclid: 'IwAR-both-5', gclid: 'G-both-5' },
      channel: 'google_ads',
    });
    const unnamed = await convert({ ipAddress: ip(5), userAgent: ua });
    expect(unnamed.attributedTo).toMatchObject({ channel: 'meta', clickIds: { fbclid: 'IwAR-both-5', gclid: 'G-both-5' } });
  });

  it('a batch’s conversion answers the same', async () => {
    await clickWith({ gbraid: 'gb-6' }, 6);
    const res = await call(ctx.app, 'POST', '/v1/track/batch', {
      key: ctx.a.live,
      body: { events: [{ type: 'conversion', ...conversionBody(storeId, { gbraid: 'gb-6' }) }] },
    });
    expect(res.status).toBe(200);
    const [entry] = res.body.data.results;
    expect(entry.data.attributedTo).toMatchObject({ clickIds: { gbraid: 'gb-6' }, channel: 'google_ads' });
    expect(entry.data.attributedTo).not.toHaveProperty('fbclid');
  });

  it('a row attributed before migration 0029 (column null) reads from its click key; re-attribution stores the ids', async () => {
    const clickId = await clickWith({ gclid: 'G-old-7', ttclid: 'tt-old-7' }, 7);
    const data = await convert({ ipAddress: ip(7), userAgent: ua });
    expect(data.attributedTo.clickIds).toEqual({ gclid: 'G-old-7', ttclid: 'tt-old-7' });
    await ctx.database.write((trx) =>
      trx
        .updateTable('conversions')
        .set({ attributed_click_ids: null, confidence: 60 })
        .where('id', '=', data.conversionId)
        .execute(),
    );
    // The click's key (`gclid:G-old-7`) holds one id: an old row shows that one.
    expect((await get(data.conversionId)).attributedTo).toEqual({
      clickId,
      clickIds: { gclid: 'G-old-7' },
      channel: 'google_ads',
      confidenceScore: 60,
    });
    const again = await call(ctx.app, 'POST', `/v1/conversions/${data.conversionId}/reattribute`, { key: ctx.a.live });
    expect(again.status).toBe(200);
    expect(again.body.data.attributedTo).toMatchObject({ clickId, clickIds: { gclid: 'G-old-7', ttclid: 'tt-old-7' } });
    expect((await get(data.conversionId)).attributedTo.clickIds).toEqual({ gclid: 'G-old-7', ttclid: 'tt-old-7' });
  });

  it('an old Meta row reads its fbclid; an unattributed conversion has no attributedTo', async () => {
    await clickWith({ fbclid: 'IwAR-old-8' }, 8);
    const data = await convert({ fbclid: 'IwAR-old-8' });
    await ctx.database.write((trx) =>
      trx.updateTable('conversions').set({ attributed_click_ids: null }).where('id', '=', data.conversionId).execute(),
    );
    expect((await get(data.conversionId)).attributedTo).toMatchObject({
      fbclid: 'IwAR-old-8',
      clickIds: { fbclid: 'IwAR-old-8' },
      channel: 'meta',
    });
    const none = await convert({ ipAddress: '192.0.2.99' });
    expect(none.attributed).toBe(false);
    expect(none).not.toHaveProperty('attributedTo');
  });
});
