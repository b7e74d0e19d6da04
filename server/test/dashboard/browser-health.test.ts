// The dashboard in Chromium (api.md §5, §12): a failing destination is red on its store's page with
// the reason (this server could not resolve the platform's host), the overview has a banner naming
// it, and `Test connection` answers beside the button — each reachable with the keyboard, at 375 px.
import { existsSync } from 'node:fs';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { request } from '../e2e/process.js';
import { CHROMIUM, type DashboardServer, eventually, screenshot, signIn, startDashboard, TestPages, text } from './browser.js';

const EMAIL = 'health-owner@example.com';
const PASSWORD = 'a long enough password';
const chromiumPresent = existsSync(CHROMIUM);

describe.skipIf(!chromiumPresent)('the dashboard in Chromium: destination health', () => {
  let dashboard: DashboardServer;
  let base: string;
  let storeId = '';
  let signedIn: Awaited<ReturnType<BrowserContext['storageState']>>;
  const pages = new TestPages(() => dashboard.browser);
  const phone = (state: typeof signedIn) => pages.open({ viewport: { width: 375, height: 812 }, storageState: state });
  const api = (method: string, url: string, body?: unknown) =>
    request(dashboard.server, method, url, { key: dashboard.account.keys.live, body });

  beforeAll(async () => {
    // Meta's address never resolves: every attempt fails on this server's side, and a job older
    // than a second with nothing delivered turns the destination failing at the next check.
    dashboard = await startDashboard({
      prefix: 'waytrack-dashboard-health-',
      email: EMAIL,
      password: PASSWORD,
      env: { CAPI_SYNC_WAIT_MS: '0', META_GRAPH_URL: 'http://nonexistent.invalid', DESTINATION_ALERT_AFTER_S: '1' },
    });
    base = dashboard.base;
    const store = await api('POST', '/v1/stores', {
      name: 'Harbor Supply',
      domain: 'harbor.example',
      platform: 'shopify',
      pixelId: '123456789012345',
      capiAccessToken: 'EAAB-health-token',
    });
    expect(store.status).toBe(201);
    storeId = store.body.data.id;
    const conversion = await api('POST', '/v1/track/conversion', {
      storeId,
      eventType: 'Purchase',
      orderId: 'health-1',
      eventValue: 20,
      currency: 'USD',
    });
    expect(conversion.status).toBe(200);
    await eventually(async () => {
      const list = await api('GET', `/v1/stores/${storeId}/destinations`);
      expect(list.body.data.destinations[0].health.status).toBe('failing');
    }, 30_000);
    signedIn = await signIn(await pages.open({ viewport: { width: 1280, height: 900 } }), base, EMAIL, PASSWORD);
    expect(await pages.closeAll()).toEqual([]);
  }, 240_000);

  afterEach(async () => {
    expect(await pages.closeAll()).toEqual([]);
  });

  afterAll(async () => {
    await dashboard?.close();
  });

  /** Tabs until `locator` has the focus (at most `max` presses); fails when it never does. */
  async function tabTo(page: Page, name: RegExp, max = 60) {
    for (let i = 0; i < max; i++) {
      await page.keyboard.press('Tab');
      const focused = await page.evaluate<string>(
        "(() => { const el = document.activeElement; return el ? el.tagName + ' ' + (el.textContent || el.getAttribute('aria-label') || '') : ''; })()",
      );
      if (name.test(focused)) return;
    }
    throw new Error(`${name} never had the focus`);
  }

  it('the store page shows Meta failing in red with the reason, and Test connection answers (keyboard, 375 px)', async () => {
    const page = await phone(signedIn);
    await page.goto(`${base}/dashboard/stores/${storeId}`);
    const meta = page.getByRole('region', { name: 'Meta' });
    await eventually(async () => expect(await text(meta)).toContain('Failing'));
    const reason = meta.locator('.health-failing').first();
    expect(await text(reason)).toMatch(/Meta is failing\. .*This server could not resolve nonexistent\.invalid/s);
    // Red: the danger colour, not only words.
    expect(await reason.evaluate((el) => el.ownerDocument.defaultView?.getComputedStyle(el).color)).toBe('rgb(185, 28, 28)');

    await tabTo(page, /^BUTTON Test connection/);
    await page.keyboard.press('Enter');
    const result = meta.getByRole('status').filter({ hasText: /nonexistent/ });
    await eventually(async () => expect(await text(result)).toMatch(/^✗ This server could not resolve nonexistent\.invalid/));
    // Nothing wider than the phone's screen.
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
    await screenshot(page, 'destination-health-store');
  });

  it('the overview has a banner naming the failing destination, its store and the reason, linking to it', async () => {
    const page = await phone(signedIn);
    await page.goto(`${base}/dashboard`);
    const banner = page.getByRole('alert').filter({ hasText: 'A destination is failing' });
    await eventually(async () =>
      expect(await text(banner)).toMatch(/Meta for Harbor Supply:.*could not resolve nonexistent\.invalid/s),
    );
    await tabTo(page, /^A Open Harbor Supply's destinations/);
    await page.keyboard.press('Enter');
    await page.waitForURL(new RegExp(`/dashboard/stores/${storeId}`));
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
  });
});
