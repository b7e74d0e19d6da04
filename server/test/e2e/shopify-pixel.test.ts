// The Shopify checkout pixel (api.md §13 "Shopify checkout"; packages/tag/src/shopify-pixel.ts)
// in a real Chromium against a real server process. A shop's landing page with the tag records
// the ad click and sets the browser's cookies; the shop's thank-you page then runs the pixel as
// Shopify runs a custom pixel: in an iframe sandboxed without allow-same-origin (so its requests
// carry `Origin: null`), with the sandbox's API emulated — `analytics.subscribe`, the
// asynchronous `browser.cookie.get`/`set` (answered by the top frame over postMessage), `init` —
// and fires `checkout_completed` with the payload Shopify documents (Web Pixels API,
// PixelEventsCheckoutCompleted). The server must record the order with the browser's ids.
// Certificates and host names as in tag.test.ts (SPKI pin, --host-resolver-rules).
import { execFileSync } from 'node:child_process';
import { createHash, createPublicKey } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { openTestDatabase, type TestDatabase } from '../engine.js';
import { cli, request, type ServerProcess, serve } from './process.js';

const CHROMIUM = '/usr/bin/chromium';
const HAS_CHROMIUM = existsSync(CHROMIUM);
if (!HAS_CHROMIUM) console.log('skipped: install chromium');

const TAG_BUILD = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../packages/tag/scripts/build.mjs');

/**
 * The sandbox: Shopify's standard API as a custom pixel sees it (free variables of its code),
 * the cookie calls answered asynchronously by the top frame, then the pixel's own code.
 */
function sandboxHtml(pixel: string, marketingAllowed: boolean): string {
  const init = {
    context: { document: { location: { pathname: '/checkouts/c/b6f1e2/thank-you' } } },
    customerPrivacy: {
      analyticsProcessingAllowed: true,
      marketingAllowed,
      preferencesProcessingAllowed: true,
      saleOfDataAllowed: marketingAllowed,
    },
    data: { customer: null, cart: null, shop: { name: 'Pixel Shop', paymentSettings: { currencyCode: 'USD' } } },
  };
  const code = `
const listeners = {};
const pending = {};
let next = 0;
const analytics = {
  subscribe(name, callback) { (listeners[name] = listeners[name] || []).push(callback); return Promise.resolve(); },
};
const ask = (message) => new Promise((resolve) => {
  const id = ++next;
  pending[id] = resolve;
  parent.postMessage({ ...message, id }, '*');
});
const browser = {
  cookie: { get: (name) => ask({ type: 'cookie-get', name }), set: (cookie) => ask({ type: 'cookie-set', cookie }) },
};
const init = ${JSON.stringify(init)};
// The test's window on the pixel: each request it makes is reported to the top frame, then made.
const realFetch = fetch;
fetch = (url, options) => {
  parent.postMessage({ type: 'sent', url: String(url), body: options && options.body, headers: options && options.headers }, '*');
  return realFetch(url, options).then(
    (res) => { parent.postMessage({ type: 'answered', status: res.status }, '*'); return res; },
    (error) => { parent.postMessage({ type: 'answered', status: 0, error: String(error) }, '*'); throw error; },
  );
};
window.addEventListener('message', (e) => {
  const m = e.data;
  if (m.type === 'answer' && pending[m.id]) { pending[m.id](m.value); delete pending[m.id]; }
  if (m.type === 'event') for (const callback of listeners[m.name] || []) callback(m.event);
});
(function (analytics, browser, init) {
${pixel}
})(analytics, browser, init);
parent.postMessage({ type: 'ready' }, '*');`;
  return `<!doctype html><html><head><meta charset="utf-8"></head><body><script>${code.replaceAll('</', '<\\/')}</script></body></html>`;
}

/** The shop's thank-you page: the pixel's sandboxed frame, and Shopify's side of the sandbox's API. */
function thankYouHtml(orderId: string, pixel: string, marketingAllowed: boolean): string {
  const top = `
const readCookie = (name) => {
  for (const part of document.cookie.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return decodeURIComponent(part.slice(eq + 1).trim());
  }
  return '';
};
// PixelEventsCheckoutCompleted, as Shopify documents it (fields the pixel does not read included).
const checkoutCompleted = () => ({
  id: 'sh-88153c5a-8F2D-4CCA-3231-EF5C032A4C3B',
  clientId: 'xxx-xxx-xxx-xxx',
  name: 'checkout_completed',
  type: 'standard',
  seq: 3,
  timestamp: new Date().toISOString(),
  context: {
    document: { location: { href: location.href, host: location.host, pathname: location.pathname, protocol: location.protocol, search: '' }, referrer: '', title: document.title, characterSet: 'UTF-8' },
    navigator: { userAgent: navigator.userAgent, language: navigator.language, cookieEnabled: true, languages: [...navigator.languages] },
    window: { innerHeight: innerHeight, innerWidth: innerWidth, location: { href: location.href } },
  },
  data: {
    checkout: {
      token: 'b6f1e2c4d5a6',
      currencyCode: 'USD',
      email: 'jon@example.com',
      phone: null,
      order: { id: ${JSON.stringify(orderId)}, customer: { id: '706405506930370084', isFirstOrder: true } },
      totalPrice: { amount: 199.65, currencyCode: 'USD' },
      subtotalPrice: { amount: 179.65, currencyCode: 'USD' },
      totalTax: { amount: 0, currencyCode: 'USD' },
      shippingLine: { price: { amount: 20, currencyCode: 'USD' } },
      discountApplications: [],
      lineItems: [
        { id: '866550311766439020', quantity: 1, title: 'IPod Nano - 8GB', variant: { id: '808950810', price: { amount: 59, currencyCode: 'USD' }, product: { id: '632910392', title: 'IPod Nano - 8GB' } } },
      ],
    },
  },
});
const frame = document.createElement('iframe');
frame.setAttribute('sandbox', 'allow-scripts');
frame.srcdoc = ${JSON.stringify(sandboxHtml(pixel, marketingAllowed))};
window.addEventListener('message', (e) => {
  if (e.source !== frame.contentWindow) return;
  const m = e.data;
  const answer = (value) => setTimeout(() => frame.contentWindow.postMessage({ type: 'answer', id: m.id, value }, '*'), 5);
  if (m.type === 'cookie-get') answer(readCookie(m.name));
  if (m.type === 'cookie-set') { document.cookie = m.cookie; answer(m.cookie); }
  if (m.type === 'sent' || m.type === 'answered') (window.pixelTraffic = window.pixelTraffic || []).push(m);
  if (m.type === 'ready') frame.contentWindow.postMessage({ type: 'event', name: 'checkout_completed', event: checkoutCompleted() }, '*');
});
document.body.appendChild(frame);`;
  return `<!doctype html><html><head><meta charset="utf-8"><title>Thank you</title></head>
<body><h1>Thank you for your order</h1><script>${top.replaceAll('</', '<\\/')}</script></body></html>`;
}

function spkiPin(certPem: Buffer): string {
  const der = createPublicKey(certPem).export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(der).digest('base64');
}

describe.skipIf(!HAS_CHROMIUM)('the Shopify checkout pixel in Chromium (end to end)', () => {
  let dataDir: string;
  let testDb: TestDatabase;
  let reader: Database;
  let server: ServerProcess;
  let liveKey: string;
  let storeId: string;
  let publishableKey: string;
  let pixel: string;
  let shop: https.Server;
  let shopPort: number;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let pageErrors: Error[];
  let userAgent: string;

  beforeAll(async () => {
    execFileSync(process.execPath, [TAG_BUILD], { stdio: 'inherit' });
    dataDir = mkdtempSync(path.join(tmpdir(), 'waytrack-pixel-'));
    testDb = await openTestDatabase(dataDir);
    await testDb.database.close();
    server = await serve({ ...testDb.env, REDIS_URL: '' });
    const account = cli(['account', 'create', '--email', 'pixel@example.com', '--json'], testDb.env);
    expect(account.status, account.stderr).toBe(0);
    liveKey = JSON.parse(account.stdout).keys.live;
    const store = await request(server, 'POST', '/v1/stores', {
      key: liveKey,
      body: { name: 'Pixel Shop', domain: 'shop.example', platform: 'shopify' },
    });
    expect(store.status).toBe(201);
    storeId = store.body.data.id;
    const created = cli(['keys', 'create', '--publishable', '--store', storeId, '--json'], testDb.env);
    expect(created.status, created.stderr).toBe(0);
    publishableKey = JSON.parse(created.stdout).key;

    // What the merchant pastes: the server fills in its own address and, given, the key.
    const served = await request(server, 'GET', `/shopify-pixel.js?key=${publishableKey}`);
    expect(served.status).toBe(200);
    pixel = served.body as string;
    expect(pixel).toContain(`const WAYTRACK_KEY = '${publishableKey}'`);
    expect(pixel).toContain(`const WAYTRACK_ENDPOINT = '${new URL('/v1/track/checkout', server.url).href}'`);
    expect(pixel).not.toContain('WAYTRACK_HOST');

    const tagUrl = `${server.url}/tag.js`;
    const tlsDir = path.join(dataDir, 'tls');
    const cert = readFileSync(path.join(tlsDir, 'localhost-cert.pem'));
    shop = https.createServer({ cert, key: readFileSync(path.join(tlsDir, 'localhost-key.pem')) }, (req, res) => {
      const url = new URL(req.url ?? '/', 'https://shop.example');
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      if (url.pathname.endsWith('/thank-you')) {
        res.end(thankYouHtml(url.searchParams.get('order') ?? '', pixel, url.searchParams.get('marketing') !== 'denied'));
        return;
      }
      res.end(`<!doctype html><html><head><meta charset="utf-8"><title>Shop</title>
<script async src="${tagUrl}" data-key="${publishableKey}"></script></head><body><h1>Tent</h1></body></html>`);
    });
    shopPort = await new Promise((resolve) => shop.listen(0, '127.0.0.1', () => resolve((shop.address() as AddressInfo).port)));
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      chromiumSandbox: false,
      args: [
        '--no-sandbox',
        `--ignore-certificate-errors-spki-list=${spkiPin(cert)}`,
        '--host-resolver-rules=MAP shop.example 127.0.0.1, MAP *.shop.example 127.0.0.1',
      ],
    });
    const probe = await browser.newPage();
    userAgent = (await probe.evaluate('navigator.userAgent')) as string;
    await probe.close();
    reader = testDb.openAnother();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    shop?.close();
    await reader?.close();
    await server?.stop('SIGKILL');
    await testDb?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  beforeEach(async () => {
    context = await browser.newContext({ userAgent: userAgent.replace('HeadlessChrome', 'Chrome') });
    page = await context.newPage();
    pageErrors = [];
    page.on('pageerror', (error) => pageErrors.push(error));
  });

  afterEach(async () => {
    await context?.close();
  });

  /** What the pixel sent and the answer it read (reported by the emulated sandbox), once answered. */
  async function pixelTraffic() {
    await page.waitForFunction('(window.pixelTraffic || []).some((m) => m.type === "answered")', undefined, { timeout: 20_000 });
    const traffic = (await page.evaluate('window.pixelTraffic')) as Array<Record<string, unknown>>;
    const sent = traffic.filter((m) => m.type === 'sent');
    expect(sent).toHaveLength(1);
    return {
      url: sent[0]?.url as string,
      headers: sent[0]?.headers as Record<string, string>,
      body: JSON.parse(sent[0]?.body as string) as Record<string, unknown>,
      answer: traffic.find((m) => m.type === 'answered') as { status: number; error?: string },
    };
  }

  /** The ad click through the tag, then a gclid and TikTok's id as their own scripts would have left them. */
  async function arriveFromAd(fbclid: string) {
    const click = page.waitForResponse((res) => res.request().method() === 'POST' && res.url().endsWith('/v1/track/click'));
    await page.goto(`https://www.shop.example:${shopPort}/products/tent?utm_source=facebook&fbclid=${fbclid}`);
    expect((await click).status()).toBe(200);
    await context.addCookies([
      { name: '_gcl_aw', value: `GCL.${Math.floor(Date.now() / 1000)}.Cj0KCQ-pixel-e2e`, domain: 'www.shop.example', path: '/' },
      { name: '_ttp', value: 'ttp-e2e-2f7c9a', domain: 'www.shop.example', path: '/' },
    ]);
    const cookies = Object.fromEntries((await context.cookies()).map((c) => [c.name, c.value]));
    expect(cookies._wt_vid).toMatch(/^[A-Za-z0-9_-]{22}$/);
    return cookies;
  }

  async function conversionOf(orderId: string) {
    const res = await request(server, 'GET', `/v1/conversions?storeId=${storeId}&limit=100`, { key: liveKey });
    expect(res.status).toBe(200);
    return (res.body.data.conversions as Array<Record<string, unknown>>).filter((c) => c.orderId === orderId);
  }

  it('on checkout_completed, sends the order with the browser’s ids from the sandbox (Origin: null); the server records them', async () => {
    const fbclid = `IwAR.pixel-${Date.now()}`;
    const cookies = await arriveFromAd(fbclid);
    const orderId = String(5_100_000_000_000 + (Date.now() % 1_000_000));
    const thankYou = `https://www.shop.example:${shopPort}/checkouts/c/b6f1e2/thank-you?order=${orderId}`;
    await page.goto(thankYou);
    const traffic = await pixelTraffic();
    expect(traffic.url).toBe(new URL('/v1/track/checkout', server.url).href);
    expect(traffic.headers).toEqual({ authorization: `Bearer ${publishableKey}`, 'content-type': 'application/json' });
    // A status the frame can read: CORS let the sandbox's `Origin: null` through (preflight and answer, routes/checkout.ts).
    expect(traffic.answer).toEqual({ type: 'answered', status: 200 });
    expect(traffic.body).toEqual({
      orderId,
      eventValue: 199.65,
      currency: 'USD',
      eventId: orderId,
      eventSourceUrl: thankYou,
      userAgent: expect.stringContaining('Chrome'),
      timestamp: expect.any(String),
      consent: { adStorage: 'granted', adUserData: 'granted', adPersonalization: 'granted' },
      visitorId: cookies._wt_vid,
      fbc: cookies._fbc,
      fbp: cookies._fbp,
      ttp: 'ttp-e2e-2f7c9a',
      gclid: 'Cj0KCQ-pixel-e2e',
    });

    const [conversion] = await conversionOf(orderId);
    expect(conversion).toMatchObject({
      eventType: 'Purchase',
      eventValue: 199.65,
      currency: 'USD',
      eventId: orderId,
      attributed: true,
      attributedTo: { confidenceScore: 100 },
    });
    const row = await reader.read
      .selectFrom('conversions')
      .select(['visitor_id', 'fbp', 'ttp', 'ref_fbc', 'ref_ids', 'ip_address', 'event_source_url', 'source'])
      .where('order_id', '=', orderId)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({
      visitor_id: cookies._wt_vid,
      fbp: cookies._fbp,
      ttp: 'ttp-e2e-2f7c9a',
      ref_fbc: cookies._fbc,
      ref_ids: JSON.stringify({ gclid: 'Cj0KCQ-pixel-e2e' }),
      ip_address: '127.0.0.1',
      event_source_url: thankYou,
      source: 'pixel',
    });
    // The click the tag recorded on landing is the one credited.
    const clicks = await request(server, 'GET', `/v1/clicks?storeId=${storeId}&limit=100`, { key: liveKey });
    const click = (clicks.body.data.clicks as Array<Record<string, unknown>>).find((c) => c.fbclid === fbclid);
    expect((conversion?.attributedTo as Record<string, unknown>)?.clickId).toBe(click?.clickId);
    expect(pageErrors).toEqual([]);
  });

  it('without marketing consent, sends the order and the refusal, no cookie', async () => {
    await arriveFromAd(`IwAR.denied-${Date.now()}`);
    const orderId = String(5_200_000_000_000 + (Date.now() % 1_000_000));
    await page.goto(`https://www.shop.example:${shopPort}/checkouts/c/c7d8/thank-you?order=${orderId}&marketing=denied`);
    const traffic = await pixelTraffic();
    expect(traffic.answer.status).toBe(200);
    const sent = traffic.body;
    expect(sent.consent).toEqual({ adStorage: 'denied', adUserData: 'denied', adPersonalization: 'denied' });
    for (const field of ['visitorId', 'fbc', 'fbp', 'ttp', 'gclid']) expect(sent).not.toHaveProperty(field);
    expect(await conversionOf(orderId)).toHaveLength(1);
    expect(pageErrors).toEqual([]);
  });
});
