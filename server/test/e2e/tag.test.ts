// The browser tag (api.md §6) in a real Chromium against a real server process: a shop's
// landing page with the snippet sets _fbc and _fbp and records the click once; a page on a
// foreign origin is refused (403 origin_not_allowed) without a script error in the page.
//
// Chromium trusts the server's self-signed certificate through an SPKI pin
// (--ignore-certificate-errors-spki-list with the SHA-256 of the certificate's public key):
// only that key is accepted, every other certificate is still verified. The shop's pages are
// served over https with the same key under made-up host names (--host-resolver-rules), so
// the store-domain rule is exercised as in production.
import { execFileSync } from 'node:child_process';
import { createHash, createPublicKey } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext, chromium, type Page, type Request } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openTestDatabase, type TestDatabase } from '../engine.js';
import { cli, request, type ServerProcess, serve } from './process.js';

const CHROMIUM = '/usr/bin/chromium';
const HAS_CHROMIUM = existsSync(CHROMIUM);
if (!HAS_CHROMIUM) console.log('skipped: install chromium');

const TAG_BUILD = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../packages/tag/scripts/build.mjs');
const DAY_MS = 24 * 60 * 60 * 1000;

/** The page a shop serves: the snippet of api.md §6 and nothing else of ours. */
function landingHtml(tagUrl: string, key: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>Shop</title>
<script async src="${tagUrl}" data-key="${key}"></script></head>
<body><h1>Tent</h1></body></html>`;
}

/** The snippet's stub (docs/consent.md): queues waytrack(...) calls made before the tag loads. */
const STUB = 'window.waytrack=window.waytrack||function(){(window.waytrack.q=window.waytrack.q||[]).push(arguments)};';

/** Pages with a consent banner's calls (docs/consent.md), by path; undefined for the plain landing page. */
function consentHtml(pathname: string, tagUrl: string, key: string): string | undefined {
  const pages: Record<string, [string, string]> = {
    '/consent-stub': [`${STUB}waytrack('consent',{adStorage:'denied',adUserData:'granted'});`, ''],
    '/consent-gtag': [
      "window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments)}gtag('consent','default',{ad_storage:'granted',ad_user_data:'granted',ad_personalization:'granted'});gtag('consent','update',{ad_user_data:'denied',ad_personalization:'denied'});",
      '',
    ],
    '/consent-wait': [STUB, ' data-consent="wait"'],
  };
  const page = pages[pathname];
  if (!page) return undefined;
  return `<!doctype html><html><head><meta charset="utf-8"><title>Shop</title>
<script>${page[0]}</script><script async src="${tagUrl}" data-key="${key}"${page[1]}></script></head>
<body><h1>Tent</h1></body></html>`;
}

/** base64(SHA-256(SubjectPublicKeyInfo)) of a PEM certificate: what Chromium's SPKI pin takes. */
function spkiPin(certPem: Buffer): string {
  const der = createPublicKey(certPem).export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(der).digest('base64');
}

interface Identifiers {
  fbc: string | null;
  fbp: string | null;
  visitorId: string | null;
  fingerprint: string | null;
}

/** What the tag's `window.waytrack.identifiers()` returns in the page (run there, not here). */
function identifiersOf(page: Page): Promise<Identifiers> {
  return page.evaluate('window.waytrack.identifiers()') as Promise<Identifiers>;
}

/** One HTTPS POST as given (headers included, Origin too), trusting the server's certificate. */
function post(url: string, headers: Record<string, string>, body: string, ca: Buffer) {
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary response shapes
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: any }>((resolve, reject) => {
    const req = https.request(url, { method: 'POST', ca, servername: 'localhost', headers }, (res) => {
      let data = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        data += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(data) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function listen(server: http.Server | https.Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

describe.skipIf(!HAS_CHROMIUM)('the browser tag in Chromium (end to end)', () => {
  let dataDir: string;
  let testDb: TestDatabase;
  let server: ServerProcess;
  let liveKey: string;
  let storeId: string;
  let publishableKey: string;
  let shop: https.Server;
  let devShop: http.Server;
  let shopPort: number;
  let devPort: number;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let pageErrors: Error[];
  let clickRequests: Request[];
  let userAgent: string;

  beforeAll(async () => {
    execFileSync(process.execPath, [TAG_BUILD], { stdio: 'inherit' });
    dataDir = mkdtempSync(path.join(tmpdir(), 'waytrack-tag-'));
    testDb = await openTestDatabase(dataDir);
    await testDb.database.close();
    // Without Redis: per-visitor buckets of 127.0.0.1 would be shared with every other test server of the run.
    server = await serve({ ...testDb.env, REDIS_URL: '' });

    const account = cli(['account', 'create', '--email', 'tag@example.com', '--json'], testDb.env);
    expect(account.status).toBe(0);
    liveKey = JSON.parse(account.stdout).keys.live;
    const store = await request(server, 'POST', '/v1/stores', {
      key: liveKey,
      body: { name: 'Tag Shop', domain: 'shop.example', platform: 'custom' },
    });
    expect(store.status).toBe(201);
    storeId = store.body.data.id;
    const created = cli(['keys', 'create', '--publishable', '--store', storeId, '--json'], testDb.env);
    expect(created.status).toBe(0);
    publishableKey = JSON.parse(created.stdout).key;

    // The shop: https with the server's own key and certificate, and a plain-http development copy.
    const tagUrl = `${server.url}/tag.js`;
    const page = (req: http.IncomingMessage, res: http.ServerResponse) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      const pathname = new URL(req.url ?? '/', 'https://shop.example').pathname;
      res.end(consentHtml(pathname, tagUrl, publishableKey) ?? landingHtml(tagUrl, publishableKey));
    };
    const tlsDir = path.join(dataDir, 'tls');
    const cert = readFileSync(path.join(tlsDir, 'localhost-cert.pem'));
    shop = https.createServer({ cert, key: readFileSync(path.join(tlsDir, 'localhost-key.pem')) }, page);
    devShop = http.createServer(page);
    shopPort = await listen(shop);
    devPort = await listen(devShop);

    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      chromiumSandbox: false,
      args: [
        '--no-sandbox',
        `--ignore-certificate-errors-spki-list=${spkiPin(cert)}`,
        '--host-resolver-rules=MAP shop.example 127.0.0.1, MAP *.shop.example 127.0.0.1, MAP evil.example 127.0.0.1',
      ],
    });
    const probe = await browser.newPage();
    userAgent = (await probe.evaluate('navigator.userAgent')) as string;
    await probe.close();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    shop?.close();
    devShop?.close();
    await server?.stop('SIGKILL');
    await testDb?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  beforeEach(async () => {
    // Headless Chromium names itself HeadlessChrome, which the server rightly flags as a bot.
    context = await browser.newContext({ userAgent: userAgent.replace('HeadlessChrome', 'Chrome') });
    page = await context.newPage();
    pageErrors = [];
    clickRequests = [];
    page.on('pageerror', (error) => pageErrors.push(error));
    page.on('request', (req) => {
      if (req.method() === 'POST' && req.url().endsWith('/v1/track/click')) clickRequests.push(req);
    });
  });

  afterEach(async () => {
    await context?.close();
  });

  /** Opens a landing URL and waits for the tag's click request's answer. */
  async function land(url: string) {
    const answer = page.waitForResponse((res) => res.request().method() === 'POST' && res.url().endsWith('/v1/track/click'));
    await page.goto(url);
    return answer;
  }

  async function clicksWith(fbclid: string) {
    const res = await request(server, 'GET', `/v1/clicks?storeId=${storeId}&limit=100`, { key: liveKey });
    expect(res.status).toBe(200);
    return (res.body.data.clicks as Record<string, unknown>[]).filter((c) => c.fbclid === fbclid);
  }

  async function cookie(name: string) {
    return (await context.cookies()).find((c) => c.name === name);
  }

  it("on the store's page: sets _fbc and _fbp, records the click, and a reload sends nothing", async () => {
    const fbclid = `IwAR.e2e-${Date.now()}`;
    const url = `https://www.shop.example:${shopPort}/landing?utm_source=facebook&fbclid=${fbclid}`;
    const before = Date.now();
    const answer = await land(url);
    expect(answer.status()).toBe(200);
    expect(answer.headers()['access-control-allow-origin']).toBe(`https://www.shop.example:${shopPort}`);

    const fbc = await cookie('_fbc');
    const fbp = await cookie('_fbp');
    expect(fbc?.value).toMatch(new RegExp(`^fb\\.1\\.(\\d+)\\.${fbclid.replace('.', '\\.')}$`));
    const fbcTime = Number(fbc?.value.split('.')[2]);
    expect(fbcTime).toBeGreaterThanOrEqual(before);
    expect(fbcTime).toBeLessThanOrEqual(Date.now());
    expect(fbp?.value).toMatch(/^fb\.1\.\d+\.[1-9]\d{9}$/);
    for (const c of [fbc, fbp]) {
      expect(c).toMatchObject({ path: '/', sameSite: 'Lax', secure: true, httpOnly: false, domain: 'www.shop.example' });
      // 90 days, give or take the time the test took.
      expect(Math.abs((c?.expires ?? 0) * 1000 - (before + 90 * DAY_MS))).toBeLessThan(60_000);
    }
    // The visitor id (api.md §13): 16 random bytes in base64url, kept 400 days.
    const vid = await cookie('_wt_vid');
    expect(vid?.value).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(vid).toMatchObject({ path: '/', sameSite: 'Lax', secure: true, httpOnly: false, domain: 'www.shop.example' });
    expect(Math.abs((vid?.expires ?? 0) * 1000 - (before + 400 * DAY_MS))).toBeLessThan(60_000);

    const identifiers = await identifiersOf(page);
    // A page reached through a Meta ad: the other platforms' ids are null (api.md §8).
    expect(identifiers).toEqual({
      fbc: fbc?.value,
      fbp: fbp?.value,
      gclid: null,
      gbraid: null,
      wbraid: null,
      ttclid: null,
      msclkid: null,
      epik: null,
      ScCid: null,
      rdt_cid: null,
      li_fat_id: null,
      ttp: null,
      scid: null,
      rdtUuid: null,
      visitorId: vid?.value,
      fingerprint: expect.stringMatching(/^[0-9a-f]{16}$/),
      consent: {},
    });

    const [click] = await clicksWith(fbclid);
    expect(click).toMatchObject({
      fbclid,
      landingPage: url,
      ipAddress: '127.0.0.1',
      fbp: fbp?.value,
      visitorId: vid?.value,
      fingerprint: identifiers.fingerprint,
      utm: { source: 'facebook' },
      isBot: false,
    });
    expect(click?.userAgent).toContain('Chrome');

    // Reload: the tag runs again, keeps the cookies as they are and sends nothing.
    clickRequests.length = 0;
    await page.reload();
    await page.waitForFunction('"waytrack" in window');
    await page.waitForTimeout(500);
    expect(clickRequests).toHaveLength(0);
    expect((await cookie('_fbc'))?.value).toBe(fbc?.value);
    expect((await cookie('_fbp'))?.value).toBe(fbp?.value);
    expect((await cookie('_wt_vid'))?.value).toBe(vid?.value);
    expect(await clicksWith(fbclid)).toHaveLength(1);

    // Another page of the shop (a checkout) reads the same identifiers.
    await page.goto(`https://www.shop.example:${shopPort}/checkout`);
    await page.waitForFunction('"waytrack" in window');
    expect(await identifiersOf(page)).toEqual(identifiers);
    expect(clickRequests).toHaveLength(0);

    // waytrack('eventId') (api.md §12): a fresh id per call, for the pixel and the conversion to share.
    const eventIds = (await page.evaluate("[window.waytrack('eventId'), window.waytrack('eventId')]")) as string[];
    for (const id of eventIds) expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(eventIds[0]).not.toBe(eventIds[1]);
    expect(await page.evaluate("window.waytrack('consent', {adStorage: 'granted'})")).toBeUndefined();
    expect(pageErrors).toEqual([]);
  });

  it('consent queued before the tag: ad storage denied writes no ad cookie; the click carries its consent', async () => {
    const fbclid = `stub-${Date.now()}`;
    const answer = await land(`https://shop.example:${shopPort}/consent-stub?fbclid=${fbclid}&gclid=G-${fbclid}`);
    expect(answer.status()).toBe(200);
    const names = (await context.cookies()).map((c) => c.name);
    for (const name of ['_fbc', '_fbp', '_gcl_aw', '_wt_vid']) expect(names).not.toContain(name);
    const [click] = await clicksWith(fbclid);
    expect(click).toMatchObject({
      fbclid,
      gclid: `G-${fbclid}`,
      fbp: null,
      visitorId: null,
      consent: { adStorage: 'denied', adUserData: 'granted', adPersonalization: 'granted' },
    });
    const identifiers = (await identifiersOf(page)) as Identifiers & { consent: unknown; gclid: unknown };
    expect(identifiers).toMatchObject({
      fbc: null,
      fbp: null,
      gclid: null,
      consent: { adStorage: 'denied', adUserData: 'granted' },
    });
    expect(pageErrors).toEqual([]);
  });

  it("reads Google's Consent Mode state from dataLayer (default, then update)", async () => {
    const fbclid = `gtag-${Date.now()}`;
    const answer = await land(`https://shop.example:${shopPort}/consent-gtag?fbclid=${fbclid}`);
    expect(answer.status()).toBe(200);
    const [click] = await clicksWith(fbclid);
    expect(click?.consent).toEqual({ adStorage: 'granted', adUserData: 'denied', adPersonalization: 'denied' });
    // Ad storage granted: the cookies are set; user data denied: the browser id is not sent.
    expect((await cookie('_fbc'))?.value).toContain(fbclid);
    expect(click?.fbp).toBeNull();
    expect((await cookie('_wt_vid'))?.value).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(click?.visitorId).toBeNull();
    expect(pageErrors).toEqual([]);
  });

  it('data-consent="wait": the click waits for the banner’s answer', async () => {
    const fbclid = `wait-${Date.now()}`;
    await page.goto(`https://shop.example:${shopPort}/consent-wait?fbclid=${fbclid}`);
    await page.waitForFunction('typeof window.waytrack.identifiers === "function"');
    await page.waitForTimeout(300);
    expect(clickRequests).toHaveLength(0);
    expect(await cookie('_fbc')).toBeUndefined();
    expect(await cookie('_wt_vid')).toBeUndefined();
    const answer = page.waitForResponse((res) => res.request().method() === 'POST' && res.url().endsWith('/v1/track/click'));
    await page.evaluate("waytrack('consent', {ad_storage: 'granted', ad_user_data: 'granted', ad_personalization: 'denied'})");
    expect((await answer).status()).toBe(200);
    const [click] = await clicksWith(fbclid);
    expect(click?.consent).toEqual({ adStorage: 'granted', adUserData: 'granted', adPersonalization: 'denied' });
    expect((await cookie('_fbc'))?.value).toContain(fbclid);
    expect(click?.visitorId).toBe((await cookie('_wt_vid'))?.value);
    expect(click?.visitorId).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(pageErrors).toEqual([]);
  });

  it("waytrack('identify', …) sends only hashes with the browser's ids; a conversion from another device credits the browser's click", async () => {
    const sent: string[] = [];
    page.on('request', (req) => sent.push(`${req.url()} ${req.postData() ?? ''}`));
    const fbclid = `identify-${Date.now()}`;
    expect((await land(`https://shop.example:${shopPort}/landing?fbclid=${fbclid}`)).status()).toBe(200);
    const visitorId = (await cookie('_wt_vid'))?.value;
    const fbp = (await cookie('_fbp'))?.value;
    expect(visitorId).toMatch(/^[A-Za-z0-9_-]{22}$/);

    // Later, on the account page: the shop tells the tag who this is.
    await page.goto(`https://shop.example:${shopPort}/account`);
    await page.waitForFunction('typeof window.waytrack.identifiers === "function"');
    const answer = page.waitForResponse((res) => res.request().method() === 'POST' && res.url().endsWith('/v1/track/identify'));
    await page.evaluate("waytrack('identify', {email: '  Jane.Identify@Example.COM ', phone: '+1 (650) 555-0199'})");
    const response = await answer;
    expect(response.status()).toBe(200);
    expect(JSON.parse(response.request().postData() ?? '{}')).toEqual({
      visitorId,
      fbp,
      email: createHash('sha256').update('jane.identify@example.com').digest('hex'),
      phone: createHash('sha256').update('16505550199').digest('hex'),
    });
    expect((await response.json()).data).toMatchObject({ storeId, identified: true, links: 2 });
    // The plain email and phone never left the page.
    expect(sent.length).toBeGreaterThan(0);
    for (const line of sent) expect(line).not.toMatch(/jane\.identify|example\.com|6505550199|555-0199/i);

    // The order from a laptop: no browser id, another IP and user agent, the same email.
    const conversion = await request(server, 'POST', '/v1/track/conversion', {
      key: liveKey,
      body: {
        storeId,
        eventType: 'Purchase',
        orderId: `identify-${fbclid}`,
        eventValue: 30,
        currency: 'USD',
        customerData: { email: 'jane.identify@example.com' },
        ipAddress: '203.0.113.80',
        userAgent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36',
      },
    });
    expect(conversion.status).toBe(200);
    const [click] = await clicksWith(fbclid);
    expect(conversion.body.data).toMatchObject({ attributed: true, attributedTo: { clickId: click?.clickId, fbclid } });
    const explained = await request(server, 'GET', `/v1/conversions/${conversion.body.data.conversionId}`, { key: liveKey });
    const evidence = explained.body.data.attribution.candidates[0].evidence as Array<{ kind: string }>;
    expect(evidence.map((e) => e.kind)).toContain('identity');
    expect(pageErrors).toEqual([]);
  });

  it("waytrack('identify', …) with ad user data denied sends nothing", async () => {
    await page.goto(`https://shop.example:${shopPort}/consent-gtag`);
    await page.waitForFunction('typeof window.waytrack.identifiers === "function"');
    const identifies: string[] = [];
    page.on('request', (req) => {
      if (req.url().endsWith('/v1/track/identify')) identifies.push(req.method());
    });
    await page.evaluate("waytrack('identify', {email: 'denied@example.com'})");
    await page.waitForTimeout(500);
    expect(identifies).toEqual([]);
    expect(pageErrors).toEqual([]);
  });

  it("Pinterest, Snapchat, Reddit and LinkedIn ids: each kept in its platform's cookie, recorded, and read back by identifiers()", async () => {
    const n = Date.now();
    const ids = { epik: `dj0yJnU9-${n}`, ScCid: `5c1d-${n}`, rdt_cid: `${n}.t2_abc`, li_fat_id: `9c1e-${n}` };
    const query = Object.entries(ids)
      .map(([kind, value]) => `${kind}=${value}`)
      .join('&');
    // Snap's and Reddit's own pixels set their browser ids; the tag only reads them.
    await context.addCookies([
      { name: '_scid', value: 'snap-browser-1', domain: 'shop.example', path: '/' },
      { name: '_rdt_uuid', value: '1700000000000.reddit-browser-1', domain: 'shop.example', path: '/' },
    ]);
    const answer = await land(`https://shop.example:${shopPort}/landing?${query}`);
    expect(answer.status()).toBe(200);
    expect((await answer.json()).data).toMatchObject(ids);
    expect({
      epik: (await cookie('_epik'))?.value,
      ScCid: (await cookie('_scclid'))?.value,
      rdt_cid: (await cookie('_rdt_cid'))?.value,
      li_fat_id: (await cookie('li_fat_id'))?.value,
    }).toEqual(ids);
    expect(await page.evaluate('window.waytrack.identifiers()')).toMatchObject({
      ...ids,
      scid: 'snap-browser-1',
      rdtUuid: '1700000000000.reddit-browser-1',
    });
    expect(pageErrors).toEqual([]);
  });

  it('keeps an existing _fbc for the same fbclid (its time is the click time)', async () => {
    const fbclid = `keep-${Date.now()}`;
    const earlier = `fb.1.1700000000000.${fbclid}`;
    await context.addCookies([{ name: '_fbc', value: earlier, domain: 'shop.example', path: '/' }]);
    const answer = await land(`https://shop.example:${shopPort}/landing?fbclid=${fbclid}`);
    expect(answer.status()).toBe(200);
    expect((await context.cookies()).filter((c) => c.name === '_fbc').map((c) => c.value)).toEqual([earlier]);
    expect(pageErrors).toEqual([]);
  });

  it('from a development page on http://127.0.0.1: records the click, cookies without Secure', async () => {
    const fbclid = `dev-${Date.now()}`;
    const answer = await land(`http://127.0.0.1:${devPort}/landing?fbclid=${fbclid}`);
    expect(answer.status()).toBe(200);
    expect(await cookie('_fbc')).toMatchObject({ secure: false, sameSite: 'Lax' });
    expect(await clicksWith(fbclid)).toHaveLength(1);
    expect(pageErrors).toEqual([]);
  });

  it('a page on a foreign origin is refused (403 origin_not_allowed) and the page has no script error', async () => {
    const fbclid = `foreign-${Date.now()}`;
    const origin = `https://evil.example:${shopPort}`;
    // Chromium hides a refused cross-origin answer from the page, and from Playwright's response
    // events too; the DevTools protocol still reports its status line.
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    const posts = new Set<string>();
    const statuses = new Map<string, number>();
    const corsErrors = new Map<string, string>();
    cdp.on('Network.requestWillBeSent', (e) => {
      if (e.request.method === 'POST' && e.request.url.endsWith('/v1/track/click')) posts.add(e.requestId);
    });
    cdp.on('Network.responseReceivedExtraInfo', (e) => statuses.set(e.requestId, e.statusCode));
    cdp.on('Network.loadingFailed', (e) => corsErrors.set(e.requestId, e.corsErrorStatus?.corsError ?? e.errorText));
    await page.goto(`${origin}/landing?fbclid=${fbclid}`);
    await expect
      .poll(() => [...posts].map((id) => [statuses.get(id), corsErrors.get(id)]))
      .toEqual([[403, 'MissingAllowOriginHeader']]);
    await page.waitForTimeout(200);
    expect(pageErrors).toEqual([]);
    expect(await clicksWith(fbclid)).toHaveLength(0);

    // The same request from outside the browser shows why: the origin is not the store's.
    const [sent] = clickRequests;
    const replay = await post(sent?.url() ?? '', (await sent?.allHeaders()) ?? {}, sent?.postData() ?? '', server.ca);
    expect(replay.status).toBe(403);
    expect(replay.body.error).toMatchObject({ code: 'forbidden', details: { reason: 'origin_not_allowed' } });
    expect(replay.headers['access-control-allow-origin']).toBeUndefined();

    // The page's own identifiers still work.
    const { fbc } = await identifiersOf(page);
    expect(fbc).toMatch(new RegExp(`\\.${fbclid}$`));
  });
});
