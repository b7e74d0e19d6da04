// Dashboard pages in Chromium, each ready in under a second after a reload (api.md §5): a
// latency bound, so it runs with the load tests, after every other test file and alone. What
// each page shows is checked by server/test/dashboard/browser.test.ts.
import { existsSync } from 'node:fs';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, type DashboardServer, figure, signIn, startDashboard, TestPages } from '../dashboard/browser.js';
import { cli, request } from '../e2e/process.js';

const EMAIL = 'ready@example.com';
const PASSWORD = 'a long enough password';
const chromiumPresent = existsSync(CHROMIUM);
if (!chromiumPresent) console.log('skipped: install chromium');

describe.skipIf(!chromiumPresent)('dashboard pages in Chromium', () => {
  let dashboard: DashboardServer;
  let signedIn: Awaited<ReturnType<BrowserContext['storageState']>>;
  let storeId = '';
  let conversionId = '';
  const pages = new TestPages(() => dashboard.browser);

  beforeAll(async () => {
    dashboard = await startDashboard({
      prefix: 'waytrack-dashboard-ready-',
      email: EMAIL,
      password: PASSWORD,
      env: { CAPI_SYNC_WAIT_MS: '0', META_GRAPH_URL: 'http://127.0.0.1:9' },
    });
    const { server, account } = dashboard;
    const key = account.keys.live;
    const store = await request(server, 'POST', '/v1/stores', {
      key,
      body: { name: 'Acme Outdoor', domain: 'shop.acme.example', platform: 'woocommerce' },
    });
    expect(store.status).toBe(201);
    storeId = store.body.data.id;
    const fbclid = 'IwAR1001';
    const click = await request(server, 'POST', '/v1/track/click', {
      key,
      body: { storeId, fbclid, landingPage: `https://shop.acme.example/?fbclid=${fbclid}` },
    });
    expect(click.status).toBe(200);
    const conversion = await request(server, 'POST', '/v1/track/conversion', {
      key,
      body: { storeId, eventType: 'Purchase', orderId: 'order-1001', eventValue: 49.99, currency: 'USD', fbclid },
    });
    expect(conversion.status).toBe(200);
    conversionId = conversion.body.data.conversionId;
    const created = cli(
      [
        'keys',
        'create',
        '--account',
        account.accountId,
        '--mode',
        'live',
        '--scopes',
        'stores:read',
        '--name',
        'Checkout backend',
      ],
      dashboard.env,
    );
    expect(created.status, created.stderr).toBe(0);
    signedIn = await signIn(await pages.open({}), dashboard.base, EMAIL, PASSWORD);
  }, 240_000);

  afterEach(async () => {
    expect(await pages.closeAll()).toEqual([]);
  });

  afterAll(async () => {
    await dashboard?.close();
  });

  it('deep links and reloads land on their page, each ready in under a second', async () => {
    const page = await pages.open({ viewport: { width: 1280, height: 800 }, storageState: signedIn });
    page.setDefaultTimeout(20_000);
    const heading = (p: Page, name: string) => p.getByRole('heading', { level: 1, name, exact: true });
    const visits: Array<[string, (p: Page) => Locator]> = [
      [`/dashboard?store=${storeId}`, (p) => figure(p, 'ROAS')],
      ['/dashboard/stores', (p) => p.getByRole('row', { name: /Acme Outdoor/ })],
      [`/dashboard/stores/${storeId}`, (p) => p.getByLabel('Tag snippet')],
      ['/dashboard/conversions', (p) => p.getByRole('link', { name: 'order-1001' })],
      [`/dashboard/conversions/${conversionId}`, (p) => p.getByRole('region', { name: 'Forwarding to Meta' })],
      ['/dashboard/settings/api-keys', (p) => p.getByRole('row', { name: /Checkout backend/ })],
      ['/dashboard/settings', (p) => heading(p, 'API keys')],
      ['/dashboard/no-such-page', (p) => heading(p, 'Page not found')],
    ];
    const timings: string[] = [];
    for (const [url, ready] of visits) {
      // Warm once (the first visit of a context compiles the script), then measure a reload.
      await page.goto(`${dashboard.base}${url}`);
      await ready(page).waitFor();
      await page.reload();
      await ready(page).waitFor();
      const ms = await page.evaluate(() => performance.now());
      timings.push(`${url}: ${Math.round(ms)} ms`);
      expect(ms, url).toBeLessThan(1000);
    }
    console.log(`dashboard pages ready after reload: ${timings.join(', ')}`);
  }, 60_000);
});
