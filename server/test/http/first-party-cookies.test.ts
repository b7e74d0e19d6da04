// api.md §13 "Cookies that last" (docs/first-party.md): a tag request that came through the
// store's own origin (the shop's proxy says `Forwarded: host=<store domain>`, the page is on that
// host) is answered with Set-Cookie for the browser ids it carried, 400 days, host-only; any
// other request (direct, a foreign host, a secret key, ad storage denied) gets none.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublishableKey } from '../../src/accounts/publishable.js';
import { ALL_GRANTED } from '../../src/consent/consent.js';
import { forwardedHost } from '../../src/routes/first-party.js';
import { FIRST_PARTY_COOKIE_MAX_AGE_S, firstPartyCookies, hostnameOf } from '../../src/tracking/first-party-cookies.js';
import { type ApiResponse, call, clickBody, createTestContext, makeStore, type TestContext } from '../helpers.js';

const DOMAIN = 'shop.acme.test';
const SHOP = `https://${DOMAIN}`;
const FBP = 'fb.1.1764300000000.1234567890';
const TTP = '2PQ0AkXFi7kbQ8pK9ZbNnD4bLYl';
const VISITOR = 'wt.4f9c2a7d1e8b6c3f5a0d9e2b';
const ATTRIBUTES = `Max-Age=${FIRST_PARTY_COOKIE_MAX_AGE_S}; Path=/; Secure; SameSite=Lax`;

describe('forwardedHost', () => {
  it.each([
    ['host=shop.acme.test', 'shop.acme.test'],
    ['for=203.0.113.7;proto=https;host=shop.acme.test', 'shop.acme.test'],
    ['for="[2001:db8::1]:4711";Host="www.shop.acme.test:8443";proto=https', 'www.shop.acme.test:8443'],
    ['host=shop.acme.test, host=waytrack.example', 'shop.acme.test'],
    ['for="a,b";host=first.example, host=second.example', 'first.example'],
  ])('%s → %s', (header, host) => {
    expect(forwardedHost(header)).toBe(host);
  });

  it('is undefined without a host parameter or header', () => {
    expect(forwardedHost(undefined)).toBeUndefined();
    expect(forwardedHost('for=203.0.113.7;proto=https')).toBeUndefined();
    // Only the first element (the client side) counts.
    expect(forwardedHost('for=1.2.3.4, host=shop.acme.test')).toBeUndefined();
  });
});

describe('firstPartyCookies', () => {
  const base = { proxiedHost: DOMAIN, origin: SHOP, storeDomain: DOMAIN, consent: ALL_GRANTED };

  it('sets each well-formed id for 400 days, Secure, SameSite=Lax, Path=/, host-only', () => {
    const fbc = 'fb.1.1764300000000.IwAR1abc_-.x';
    expect(firstPartyCookies({ ...base, ids: { visitorId: VISITOR, fbc, fbp: FBP, ttp: TTP } })).toEqual([
      `_wt_vid=${VISITOR}; ${ATTRIBUTES}`,
      `_fbc=${fbc}; ${ATTRIBUTES}`,
      `_fbp=${FBP}; ${ATTRIBUTES}`,
      `_ttp=${TTP}; ${ATTRIBUTES}`,
    ]);
    expect(FIRST_PARTY_COOKIE_MAX_AGE_S).toBe(34_560_000);
  });

  it('reflects nothing that is not an id of its shape', () => {
    const cookies = firstPartyCookies({
      ...base,
      ids: {
        visitorId: 'x; Domain=evil.example',
        fbc: 'fb.1.x.abc',
        fbp: 'fb.1.123.abc\r\nSet-Cookie: a=b',
        ttp: 'a b',
      },
    });
    expect(cookies).toEqual([]);
    expect(firstPartyCookies({ ...base, ids: { visitorId: 'v'.repeat(129) } })).toEqual([]);
  });

  it.each([
    ['a foreign host', { proxiedHost: 'evil.example' }],
    ['a host that only ends like the domain', { proxiedHost: `evil${DOMAIN}`, origin: `https://evil${DOMAIN}` }],
    ['a page on another host than the proxy’s', { origin: `https://www.${DOMAIN}` }],
    ['no Origin', { origin: undefined }],
    ['no proxied host', { proxiedHost: undefined }],
    ['a malformed host', { proxiedHost: `${DOMAIN}/x` }],
    ['ad storage denied', { consent: { ...ALL_GRANTED, adStorage: 'denied' as const } }],
  ])('sets none for %s', (_name, change) => {
    expect(firstPartyCookies({ ...base, ids: { visitorId: VISITOR, fbp: FBP }, ...change })).toEqual([]);
  });

  it('accepts a subdomain of the store with a port, in any case', () => {
    const cookies = firstPartyCookies({
      ...base,
      proxiedHost: `WWW.${DOMAIN.toUpperCase()}:8443`,
      origin: `https://www.${DOMAIN}:8443`,
      ids: { visitorId: VISITOR },
    });
    expect(cookies).toEqual([`_wt_vid=${VISITOR}; ${ATTRIBUTES}`]);
    expect(hostnameOf('[::1]:80')).toBeUndefined();
  });
});

describe('POST /v1/track/click through the shop’s origin', () => {
  let ctx: TestContext;
  let storeId: string;
  let key: string;
  beforeAll(async () => {
    ctx = await createTestContext();
    storeId = await makeStore(ctx.app, ctx.a.live);
    ({ key } = await createPublishableKey(ctx.database, ctx.a.accountId, {
      storeId,
      mode: 'live',
      origins: ['https://partner.example'],
    }));
  });
  afterAll(async () => ctx.close());

  function tagClick(overrides: Record<string, unknown> = {}) {
    const { storeId: _store, ipAddress: _ip, ...body } = clickBody('unused', overrides);
    return { ...body, visitorId: VISITOR, fbp: FBP, ttp: TTP, ...overrides };
  }

  function send(headers: Record<string, string>, body: unknown = tagClick(), withKey = key): Promise<ApiResponse> {
    return call(ctx.app, 'POST', '/v1/track/click', { key: withKey, body, headers });
  }

  function setCookies(res: ApiResponse): string[] {
    const header = res.headers['set-cookie'];
    return header === undefined ? [] : Array.isArray(header) ? header : [header];
  }

  it('answers with the four cookies and records the click', async () => {
    const body = tagClick();
    const res = await send({ origin: SHOP, forwarded: `for=198.51.100.4;proto=https;host=${DOMAIN}` }, body);
    expect(res.status).toBe(200);
    const data = res.body.data as { clickId: string; timestamp: string };
    expect(setCookies(res)).toEqual([
      `_wt_vid=${VISITOR}; ${ATTRIBUTES}`,
      `_fbc=fb.1.${Date.parse(data.timestamp)}.${body.fbclid}; ${ATTRIBUTES}`,
      `_fbp=${FBP}; ${ATTRIBUTES}`,
      `_ttp=${TTP}; ${ATTRIBUTES}`,
    ]);
    expect(res.headers['cache-control']).toBe('private, no-store');
    const click = await call(ctx.app, 'GET', `/v1/clicks/${data.clickId}`, { key: ctx.a.live });
    expect(click.body.data).toMatchObject({ storeId, visitorId: VISITOR, fbp: FBP, ttp: TTP, fbclid: body.fbclid });
    // The fbc cookie is the click's own, so a conversion sending it names this click.
    expect(setCookies(res)[1]).toBe(`_fbc=${click.body.data.fbc}; ${ATTRIBUTES}`);
  });

  it('on a subdomain of the store too', async () => {
    const res = await send({ origin: `https://www.${DOMAIN}`, forwarded: `host="www.${DOMAIN}"` });
    expect(res.status).toBe(200);
    expect(setCookies(res)).toHaveLength(4);
  });

  it('sets none for a foreign host, a page elsewhere, or a direct request, and still records the click', async () => {
    const cases: Record<string, string>[] = [
      { origin: SHOP, forwarded: 'host=evil.example' },
      { origin: 'https://partner.example', forwarded: `host=${DOMAIN}` },
      { origin: SHOP },
      { origin: SHOP, 'x-forwarded-host': DOMAIN },
    ];
    for (const headers of cases) {
      const res = await send(headers);
      expect(res.status, JSON.stringify(headers)).toBe(200);
      expect(setCookies(res), JSON.stringify(headers)).toEqual([]);
    }
  });

  it('sets none for a secret key (a shop backend, not a browser)', async () => {
    const res = await send({ forwarded: `host=${DOMAIN}` }, clickBody(storeId, { visitorId: VISITOR }), ctx.a.live);
    expect(res.status).toBe(200);
    expect(setCookies(res)).toEqual([]);
  });

  it('sets none with ad storage denied, and only the well-formed ids otherwise', async () => {
    const denied = await send(
      { origin: SHOP, forwarded: `host=${DOMAIN}` },
      tagClick({ consent: { adStorage: 'denied', adUserData: 'denied' } }),
    );
    expect(denied.status).toBe(200);
    expect(setCookies(denied)).toEqual([]);
    const odd = await send({ origin: SHOP, forwarded: `host=${DOMAIN}` }, tagClick({ ttp: 'a;b', visitorId: 'v w' }));
    expect(odd.status).toBe(200);
    expect(setCookies(odd).map((cookie) => cookie.split('=')[0])).toEqual(['_fbc', '_fbp']);
  });
});

describe('POST /v1/track/identify through the shop’s origin', () => {
  let ctx: TestContext;
  let key: string;
  beforeAll(async () => {
    ctx = await createTestContext();
    const storeId = await makeStore(ctx.app, ctx.a.live);
    ({ key } = await createPublishableKey(ctx.database, ctx.a.accountId, { storeId, mode: 'live' }));
  });
  afterAll(async () => ctx.close());

  const body = { visitorId: VISITOR, fbp: FBP, ttp: TTP, email: 'a'.repeat(64) };

  it('answers with the browser ids it carried as lasting cookies', async () => {
    const res = await call(ctx.app, 'POST', '/v1/track/identify', {
      key,
      body,
      headers: { origin: SHOP, forwarded: `host=${DOMAIN};proto=https` },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.identified).toBe(true);
    expect(res.headers['set-cookie']).toEqual([
      `_wt_vid=${VISITOR}; ${ATTRIBUTES}`,
      `_fbp=${FBP}; ${ATTRIBUTES}`,
      `_ttp=${TTP}; ${ATTRIBUTES}`,
    ]);
  });

  it('and none straight to Waytrack or for a foreign host', async () => {
    const cases: Record<string, string>[] = [{ origin: SHOP }, { origin: SHOP, forwarded: 'host=evil.example' }];
    for (const headers of cases) {
      const res = await call(ctx.app, 'POST', '/v1/track/identify', { key, body, headers });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.headers['set-cookie']).toBeUndefined();
    }
  });
});
