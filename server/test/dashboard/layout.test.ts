// The dashboard's conversions table and a store's tag snippet in a real browser (Debian's
// Chromium through playwright-core, against a real server process over HTTPS): long values and
// narrow screens stay inside the table's own box, and the snippet never passes a placeholder
// off as a key.
import { existsSync } from 'node:fs';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { request } from '../e2e/process.js';
import { CHROMIUM, type DashboardServer, signIn, startDashboard, TestPages } from './browser.js';

const EMAIL = 'layout@example.com';
const PASSWORD = 'a long enough password';
const chromiumPresent = existsSync(CHROMIUM);
if (!chromiumPresent) console.log('skipped: install chromium');

/** The longest order id a store's backend may send, without a single place to break it. */
const LONG_ORDER = `ORD-${'7'.repeat(249)}`;
const FBCLID = `IwAR${'x'.repeat(200)}`;
const STORE_NAME = 'Long Values Outdoor Supplies';

describe.skipIf(!chromiumPresent)('the dashboard with long values, on a phone and on a desktop', () => {
  let dashboard: DashboardServer;
  let base: string;
  let signedIn: Awaited<ReturnType<BrowserContext['storageState']>>;
  let storeId = '';
  let longConversionId = '';
  /** Uncaught page errors only: this file does not check console messages. */
  const pages = new TestPages(() => dashboard.browser, { console: false });

  async function newPage(width: number, state = signedIn): Promise<Page> {
    const page = await pages.open({ viewport: { width, height: 800 }, storageState: state });
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    return page;
  }

  /**
   * The conversions list once both of its reads are in: the conversions (a row named `order`)
   * and the stores, which name each row's store (until then a row shows the store's id, which
   * has no place to break and once made the phone table 223 px wider in CI).
   */
  async function conversionsListed(page: Page, order: string) {
    await page.goto(`${base}/dashboard/conversions`);
    await page.getByRole('link', { name: order }).waitFor();
    await page.getByRole('cell', { name: STORE_NAME }).first().waitFor();
  }

  /** How far the page scrolls sideways (0 when it fits the window). */
  const pageOverflow = (page: Page) => page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');

  beforeAll(async () => {
    dashboard = await startDashboard({
      prefix: 'waytrack-layout-',
      email: EMAIL,
      password: PASSWORD,
      env: { CAPI_SYNC_WAIT_MS: '0' },
    });
    base = dashboard.base;

    const store = await request(dashboard.server, 'POST', '/v1/stores', {
      key: dashboard.account.keys.live,
      body: { name: STORE_NAME, domain: 'long.example.com', platform: 'custom' },
    });
    storeId = store.body.data.id;
    const fbclid = FBCLID;
    await request(dashboard.server, 'POST', '/v1/track/click', {
      key: dashboard.account.keys.live,
      body: { storeId, fbclid, landingPage: `https://long.example.com/?fbclid=${fbclid}` },
    });
    for (const [orderId, extra] of [
      ['short-1', {}],
      [LONG_ORDER, { fbclid }],
    ] as const) {
      const res = await request(dashboard.server, 'POST', '/v1/track/conversion', {
        key: dashboard.account.keys.live,
        body: { storeId, eventType: 'Purchase', orderId, eventValue: 1234567.89, currency: 'USD', ...extra },
      });
      expect(res.status).toBe(200);
      if (orderId === LONG_ORDER) longConversionId = res.body.data.conversionId;
    }

    signedIn = await signIn(await newPage(1280, undefined), base, EMAIL, PASSWORD);
  }, 240_000);

  afterEach(async () => {
    expect(await pages.closeAll()).toEqual([]);
  });

  afterAll(async () => {
    await dashboard?.close();
  });

  it('on a 375 px phone the conversions table scrolls inside its own box; the page stays 375 px wide', async () => {
    const page = await newPage(375);
    await conversionsListed(page, 'short-1');
    expect(await pageOverflow(page)).toBeLessThanOrEqual(0);
    const box = page.locator('.table-wrap');
    const [clientWidth, scrollWidth] = await box.evaluate((el) => [el.clientWidth, el.scrollWidth]);
    // The box fits the screen, and what does not fit it scrolls inside it, sideways, without
    // moving the page; long values no longer make that a walk of thousands of pixels.
    console.log(`at 375 px: the conversions table is ${scrollWidth} px wide in its ${clientWidth} px box`);
    expect(clientWidth).toBeLessThanOrEqual(375);
    expect(scrollWidth, `the table is ${scrollWidth} px wide`).toBeLessThanOrEqual(3 * 375);
    await box.evaluate((el) => {
      el.scrollLeft = 200;
    });
    await expect(box.evaluate((el) => el.scrollLeft)).resolves.toBeGreaterThan(0);
    expect(await page.evaluate<number>('window.scrollX')).toBe(0);
    expect(await pageOverflow(page)).toBeLessThanOrEqual(0);
  });

  it('a 253-character order id neither stretches the desktop table nor hides: title on hover, whole on focus', async () => {
    const page = await newPage(1280);
    await conversionsListed(page, LONG_ORDER);
    const link = page.getByRole('link', { name: LONG_ORDER });
    expect(await pageOverflow(page)).toBeLessThanOrEqual(0);
    const [tableWidth, boxWidth] = await page
      .locator('.table-wrap')
      .evaluate((el) => [(el.querySelector('table') as { scrollWidth: number }).scrollWidth, el.clientWidth]);
    console.log(`at 1280 px with a 253-character order id: the table is ${tableWidth} px wide in its ${boxWidth} px box`);
    // The table fits its box on a desktop (main is at most 72rem wide).
    expect(tableWidth, `table ${tableWidth} px in a ${boxWidth} px box`).toBeLessThanOrEqual(boxWidth);
    // Its full value: the link's accessible name (above), its title on hover, and all of it on focus.
    await expect(link.getAttribute('title')).resolves.toBe(LONG_ORDER);
    const before = await link.boundingBox();
    await link.focus();
    const after = await link.boundingBox();
    expect(after?.height ?? 0).toBeGreaterThan((before?.height ?? 0) * 2);
    expect(after?.width ?? Number.POSITIVE_INFINITY).toBeLessThanOrEqual(boxWidth);
    // The clipped click id has its title; the conversion's own page (the link, by keyboard) fits
    // the screen too.
    const fbclid = page.locator('tr', { has: link }).locator('code');
    await expect(fbclid.getAttribute('title')).resolves.toBe(FBCLID);
    await link.press('Enter');
    await page.getByRole('heading', { level: 1, name: new RegExp(`order ${LONG_ORDER.slice(0, 20)}`) }).waitFor();
    expect(page.url()).toBe(`${base}/dashboard/conversions/${longConversionId}`);
    await page.getByText(FBCLID).first().waitFor();
    expect(await pageOverflow(page)).toBeLessThanOrEqual(0);
  });

  it('before a publishable key exists, the snippet says it has no key and offers to create one; then Copy copies the key', async () => {
    const page = await newPage(1280);
    await page.goto(`${base}/dashboard/stores/${storeId}`);
    const snippet = page.getByLabel('Tag snippet');
    await snippet.waitFor();
    const note = page.getByText('This store has no live publishable key yet');
    await note.waitFor();
    // No "Copy snippet" of a placeholder.
    await expect(page.getByRole('button', { name: 'Copy snippet' }).count()).resolves.toBe(0);
    await expect(snippet.getAttribute('aria-describedby')).resolves.toBe('tag-snippet-key');

    await page.getByRole('button', { name: 'Create live publishable key' }).click();
    const copy = page.getByRole('button', { name: 'Copy snippet' });
    await copy.waitFor();
    const value = await snippet.inputValue();
    expect(value).toMatch(/data-key="wt_pk_live_[0-9A-Za-z]{32,}"/);
    await copy.click();
    await page.getByText('Copied', { exact: true }).waitFor();
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(value);

    // Coming back later: a key exists, but it is never shown again. The page says which one the
    // snippet needs, still copies no placeholder, and still offers a new one.
    await page.reload();
    await snippet.waitFor();
    await page.getByText(/needs this store's live publishable key wt_pk_live_…[0-9A-Za-z]{4}/).waitFor();
    await expect(page.getByRole('button', { name: 'Copy snippet' }).count()).resolves.toBe(0);
    await page.getByRole('button', { name: 'Create live publishable key' }).waitFor();

    // In test mode, the live key does not count.
    await page.getByRole('switch', { name: 'Test mode' }).check();
    await page.getByText('This store has no test publishable key yet').waitFor();
  });

  it('the snippet state fits a 375 px phone too', async () => {
    const page = await newPage(375);
    await page.goto(`${base}/dashboard/stores/${storeId}`);
    await page.getByLabel('Tag snippet').waitFor();
    await page.getByRole('button', { name: /publishable key/ }).waitFor();
    expect(await pageOverflow(page)).toBeLessThanOrEqual(0);
  });
});
