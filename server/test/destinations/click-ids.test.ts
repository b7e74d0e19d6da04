import { afterEach, describe, expect, it } from 'vitest';
import { call, createTestContext, makeStore, type TestContext } from '../helpers.js';

let ctx: TestContext;
afterEach(async () => ctx?.close());

const click = (storeId: string, body: Record<string, unknown>, landingPage = 'https://shop.example.com/p') => ({
  storeId,
  landingPage,
  ...body,
});

describe('click ids (api.md §8)', () => {
  it('takes gclid, gbraid, wbraid, ttclid, msclkid beside fbclid, echoes them, and lists them', async () => {
    ctx = await createTestContext();
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const res = await call(ctx.app, 'POST', '/v1/track/click', {
      key: ctx.a.live,
      body: click(storeId, { gclid: 'Cj0KCQ-abc_1', ttclid: 'E.C.P.tt-1', ttp: 'ttp-browser-1' }),
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ gclid: 'Cj0KCQ-abc_1', ttclid: 'E.C.P.tt-1', duplicate: false });
    expect(res.body.data.fbclid).toBeUndefined();
    const got = await call(ctx.app, 'GET', `/v1/clicks/${res.body.data.clickId}`, { key: ctx.a.live });
    expect(got.body.data).toMatchObject({
      fbclid: null,
      fbc: null,
      gclid: 'Cj0KCQ-abc_1',
      ttclid: 'E.C.P.tt-1',
      ttp: 'ttp-browser-1',
      msclkid: null,
    });
    const list = await call(ctx.app, 'GET', `/v1/clicks?storeId=${storeId}`, { key: ctx.a.live });
    expect(list.body.data.clicks[0].gclid).toBe('Cj0KCQ-abc_1');
  });

  it('requires at least one id, naming the ten; validates each with its own code', async () => {
    ctx = await createTestContext();
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const none = await call(ctx.app, 'POST', '/v1/track/click', { key: ctx.a.live, body: click(storeId, {}) });
    expect(none.status).toBe(400);
    expect(none.body.error.code).toBe('missing_required_field');
    expect(none.body.error.details).toMatchObject({
      field: 'fbclid',
      anyOf: ['fbclid', 'gclid', 'gbraid', 'wbraid', 'ttclid', 'msclkid', 'epik', 'ScCid', 'rdt_cid', 'li_fat_id'],
    });
    for (const kind of ['gclid', 'gbraid', 'wbraid', 'ttclid', 'msclkid', 'epik', 'ScCid', 'rdt_cid', 'li_fat_id']) {
      const bad = await call(ctx.app, 'POST', '/v1/track/click', { key: ctx.a.live, body: click(storeId, { [kind]: 'a b' }) });
      expect(bad.status).toBe(400);
      expect(bad.body.error.code).toBe('invalid_click_id');
      expect(bad.body.error.details.field).toBe(kind);
      const long = await call(ctx.app, 'POST', '/v1/track/click', {
        key: ctx.a.live,
        body: click(storeId, { [kind]: 'x'.repeat(501) }),
      });
      expect(long.body.error.code).toBe('invalid_click_id');
    }
    const badFb = await call(ctx.app, 'POST', '/v1/track/click', { key: ctx.a.live, body: click(storeId, { fbclid: 'a b' }) });
    expect(badFb.body.error.code).toBe('invalid_fbclid');
  });

  it('takes ids from the landing page when the body omits them', async () => {
    ctx = await createTestContext();
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const res = await call(ctx.app, 'POST', '/v1/track/click', {
      key: ctx.a.live,
      body: click(storeId, {}, 'https://shop.example.com/p?gclid=G-page&msclkid=M-page&fbclid=F-page'),
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ gclid: 'G-page', msclkid: 'M-page', fbclid: 'F-page' });
    const body = await call(ctx.app, 'POST', '/v1/track/click', {
      key: ctx.a.live,
      body: click(storeId, { gclid: 'G-body' }, 'https://shop.example.com/p?gclid=G-other'),
    });
    expect(body.body.data.gclid).toBe('G-body');
  });

  it('is a duplicate when any of its ids was recorded for the store and mode; the first click answers', async () => {
    ctx = await createTestContext();
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const first = await call(ctx.app, 'POST', '/v1/track/click', {
      key: ctx.a.live,
      body: click(storeId, { gclid: 'G-1', ttclid: 'T-1' }),
    });
    const again = await call(ctx.app, 'POST', '/v1/track/click', { key: ctx.a.live, body: click(storeId, { ttclid: 'T-1' }) });
    expect(again.body.data).toMatchObject({ clickId: first.body.data.clickId, duplicate: true, ttclid: 'T-1' });
    const mixed = await call(ctx.app, 'POST', '/v1/track/click', {
      key: ctx.a.live,
      body: click(storeId, { fbclid: 'F-new', gclid: 'G-1' }),
    });
    expect(mixed.body.data).toMatchObject({ clickId: first.body.data.clickId, duplicate: true });
    // An fbclid recorded first is found by a later multi-id click too.
    const fb = await call(ctx.app, 'POST', '/v1/track/click', { key: ctx.a.live, body: click(storeId, { fbclid: 'F-2' }) });
    const fbAgain = await call(ctx.app, 'POST', '/v1/track/click', {
      key: ctx.a.live,
      body: click(storeId, { fbclid: 'F-2', wbraid: 'W-9' }),
    });
    expect(fbAgain.body.data).toMatchObject({ clickId: fb.body.data.clickId, duplicate: true });
    // Another mode and the same kind with another value are new clicks; the same value of another kind too.
    const test = await call(ctx.app, 'POST', '/v1/track/click', { key: ctx.a.test, body: click(storeId, { ttclid: 'T-1' }) });
    expect(test.body.data.duplicate).toBe(false);
    const otherKind = await call(ctx.app, 'POST', '/v1/track/click', { key: ctx.a.live, body: click(storeId, { gclid: 'T-1' }) });
    expect(otherKind.body.data.duplicate).toBe(false);
    // Concurrent identical clicks: one click.
    const same = await Promise.all(
      Array.from({ length: 8 }, () =>
        call(ctx.app, 'POST', '/v1/track/click', { key: ctx.a.live, body: click(storeId, { gbraid: 'B-concurrent' }) }),
      ),
    );
    expect(new Set(same.map((r) => r.body.data.clickId)).size).toBe(1);
    expect(same.filter((r) => r.body.data.duplicate === false)).toHaveLength(1);
  });

  it('takes Pinterest, Snapchat, Reddit and LinkedIn ids (api.md §12) from the body or the page, each its own key', async () => {
    ctx = await createTestContext();
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const page = 'https://shop.example.com/p?epik=dj0yJnU9Q-1&ScCid=5c1d-ab&li_fat_id=9c1e-2b';
    const res = await call(ctx.app, 'POST', '/v1/track/click', {
      key: ctx.a.live,
      body: click(storeId, { rdt_cid: '1700000000.t2_abc' }, page),
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      epik: 'dj0yJnU9Q-1',
      ScCid: '5c1d-ab',
      rdt_cid: '1700000000.t2_abc',
      li_fat_id: '9c1e-2b',
      duplicate: false,
    });
    const got = await call(ctx.app, 'GET', `/v1/clicks/${res.body.data.clickId}`, { key: ctx.a.live });
    expect(got.body.data).toMatchObject({
      epik: 'dj0yJnU9Q-1',
      ScCid: '5c1d-ab',
      rdt_cid: '1700000000.t2_abc',
      li_fat_id: '9c1e-2b',
    });
    // Each id alone finds the click again; another value is a new click.
    for (const [kind, value] of Object.entries({ epik: 'dj0yJnU9Q-1', ScCid: '5c1d-ab', li_fat_id: '9c1e-2b' })) {
      const again = await call(ctx.app, 'POST', '/v1/track/click', { key: ctx.a.live, body: click(storeId, { [kind]: value }) });
      expect(again.body.data).toMatchObject({ clickId: res.body.data.clickId, duplicate: true });
    }
    const other = await call(ctx.app, 'POST', '/v1/track/click', {
      key: ctx.a.live,
      body: click(storeId, { li_fat_id: 'other' }),
    });
    expect(other.body.data.duplicate).toBe(false);
    // A conversion naming one of them is credited to that click at 100, its channel the platform's.
    const conv = await call(ctx.app, 'POST', '/v1/track/conversion', {
      key: ctx.a.live,
      body: {
        storeId,
        eventType: 'Purchase',
        orderId: 'o-p',
        eventValue: 10,
        currency: 'USD',
        rdt_cid: '1700000000.t2_abc',
        scid: 's-1',
        rdtUuid: 'u-1',
      },
    });
    expect(conv.status).toBe(200);
    expect(conv.body.data.attributedTo).toMatchObject({
      clickId: res.body.data.clickId,
      confidenceScore: 100,
      channel: 'reddit',
    });
    expect(conv.body.data.attributedTo.clickIds).toMatchObject({ epik: 'dj0yJnU9Q-1', rdt_cid: '1700000000.t2_abc' });
  });

  it('conversions name clicks by gclid, ttclid, … with confidence 100', async () => {
    ctx = await createTestContext();
    const storeId = await makeStore(ctx.app, ctx.a.live, { minConfidence: 50 });
    const c = await call(ctx.app, 'POST', '/v1/track/click', { key: ctx.a.live, body: click(storeId, { ttclid: 'TT-ref' }) });
    const conv = await call(ctx.app, 'POST', '/v1/track/conversion', {
      key: ctx.a.live,
      body: { storeId, eventType: 'Purchase', orderId: 'o-1', eventValue: 10, currency: 'USD', ttclid: 'TT-ref', ttp: 'ttp-1' },
    });
    expect(conv.status).toBe(200);
    expect(conv.body.data.attributedTo).toMatchObject({ clickId: c.body.data.clickId, confidenceScore: 100 });
    const bad = await call(ctx.app, 'POST', '/v1/track/conversion', {
      key: ctx.a.live,
      body: { storeId, eventType: 'Purchase', orderId: 'o-2', eventValue: 10, currency: 'USD', gclid: 'no spaces' },
    });
    expect(bad.body.error).toMatchObject({ code: 'invalid_click_id', details: { field: 'gclid' } });
  });
});
