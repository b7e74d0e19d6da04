// The dashboard in a real browser (api.md §5): Debian's Chromium driven by playwright-core,
// against a real server process over HTTPS, located by role and label as a person (or a screen
// reader) finds things. Screenshots of every page go to ./artifacts (git-ignored); a run with
// UPDATE_DASHBOARD_SCREENSHOTS=1 also refreshes the ones docs/dashboard.md shows.
import { existsSync } from 'node:fs';
import https from 'node:https';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { request, type ServerProcess } from '../e2e/process.js';
import { CHROMIUM, type DashboardServer, eventually, figure, screenshot, startDashboard, TestPages, text } from './browser.js';

const EMAIL = 'owner@example.com';
const PASSWORD = 'a long enough password';
const chromiumPresent = existsSync(CHROMIUM);
if (!chromiumPresent) console.log('skipped: install chromium');

// Page-side code is written as expressions: this project's TypeScript has no DOM library.
const isFocused = (locator: Locator) => locator.evaluate((el) => el === el.ownerDocument.activeElement);

describe.skipIf(!chromiumPresent)('the dashboard in Chromium', () => {
  let dashboard: DashboardServer;
  let server: ServerProcess;
  let base: string;
  let account: DashboardServer['account'];
  /** The signed-in browser's cookies, for the contexts of later tests. */
  let signedIn: Awaited<ReturnType<BrowserContext['storageState']>>;
  let storeId = '';
  let createdKey = '';
  let conversionId = '';
  /** Console errors a test expects (`pages.expected`): the 401 of a wrong password is the browser's own network log. */
  const pages = new TestPages(() => dashboard.browser);

  async function newPage(options: { signedIn?: boolean; width?: number } = {}): Promise<Page> {
    const page = await pages.open({
      viewport: { width: options.width ?? 1280, height: 800 },
      storageState: options.signedIn === false ? undefined : signedIn,
    });
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    page.setDefaultTimeout(20_000); // under the test's 30 s: a stuck locator fails naming itself
    return page;
  }

  /** Opens a page and returns how long after navigation started it was ready to use. */
  async function open(page: Page, url: string, ready: Locator): Promise<number> {
    await page.goto(`${base}${url}`);
    await ready.waitFor();
    return page.evaluate(() => performance.now());
  }

  const heading = (page: Page, name: string) => page.getByRole('heading', { level: 1, name, exact: true });

  beforeAll(async () => {
    // Forwarding goes to a port that refuses: a resent conversion stays pending, retried.
    dashboard = await startDashboard({
      prefix: 'waytrack-dashboard-',
      email: EMAIL,
      password: PASSWORD,
      env: { CAPI_SYNC_WAIT_MS: '0', META_GRAPH_URL: 'http://127.0.0.1:9' },
    });
    ({ server, base, account } = dashboard);
  }, 240_000);

  afterEach(async () => {
    expect(await pages.closeAll()).toEqual([]);
  });

  afterAll(async () => {
    await dashboard?.close();
  });

  it('signs in: a wrong password gets an alert that names neither field, the right one opens the page asked for', async () => {
    const page = await newPage({ signedIn: false });
    await page.goto(`${base}/dashboard/stores`);
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(text(page.getByRole('alert'))).resolves.toBe('Invalid email or password');
    pages.expected = [/status of 401 .*\/dashboard\/api\/session\)$/];
    await screenshot(page, 'sign-in');

    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await heading(page, 'Stores').waitFor();
    const cookie = (await page.context().cookies()).find((c) => c.name === '__Host-waytrack_session');
    expect(cookie).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Strict', path: '/' });
    signedIn = await page.context().storageState();
  });

  it('creates a store, and shows its tag snippet with a publishable key', async () => {
    const page = await newPage();
    await open(page, '/dashboard/stores', heading(page, 'Stores'));
    await page.getByRole('heading', { name: 'No stores yet' }).waitFor();
    await page.getByRole('button', { name: 'New store' }).click();
    await page.getByLabel('Name').fill('Acme Outdoor');
    await page.getByLabel('Domain').fill('shop.acme.example');
    await page.getByLabel('Platform').selectOption('woocommerce');
    await page.getByLabel('Currency').fill('USD');
    await page.getByLabel('Time zone').fill('UTC');
    await page.getByLabel('Attribution window (days)').fill('14');
    await expect(page.getByLabel('Pixel ID').inputValue()).resolves.toBe('');
    await expect(page.getByLabel('Conversions API access token').getAttribute('type')).resolves.toBe('password');
    await page.getByRole('button', { name: 'Create store' }).click();

    await heading(page, 'Acme Outdoor').waitFor();
    storeId = /\/dashboard\/stores\/(st_[a-z0-9]+)/.exec(page.url())?.[1] ?? '';
    expect(storeId).not.toBe('');
    const snippet = page.getByLabel('Tag snippet');
    await expect(snippet.inputValue()).resolves.toBe(`<script async src="${base}/tag.js" data-key="wt_pk_live_…"></script>`);
    await page.getByRole('button', { name: 'Create live publishable key' }).click();
    // The key's notice, or the error that says why not (one CI run saw neither the key in 15 s).
    const created = page.getByText('The snippet above now holds a new live publishable key');
    await created.or(page.getByRole('alert')).waitFor({ timeout: 30_000 });
    expect(await created.isVisible(), await text(page.locator('main'))).toBe(true);
    expect(await snippet.inputValue()).toMatch(/data-key="wt_pk_live_[0-9A-Za-z]{32,}"/);
    await page.getByRole('button', { name: 'Copy snippet' }).click();
    await page.getByText('Copied', { exact: true }).waitFor();
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(await snippet.inputValue());
    await screenshot(page, 'store');

    await page.getByRole('link', { name: 'Stores', exact: true }).first().click();
    const row = page.getByRole('row', { name: /Acme Outdoor/ });
    await expect(text(row)).resolves.toMatch(/shop\.acme\.example\s+WooCommerce\s+Active\s+Not configured/);
    await screenshot(page, 'stores');
    // Many steps, each waiting on Chromium: 11 s alone on two cores, over 30 s under a whole CI run.
  }, 90_000);

  it('creates an API key, shown once with Copy, that works over HTTPS', async () => {
    const page = await newPage();
    await open(page, '/dashboard/settings/api-keys', heading(page, 'API keys'));
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByLabel('Name').fill('Checkout backend');
    await page.getByRole('radio', { name: 'Live' }).check();
    await page.getByRole('checkbox', { name: 'All scopes (*)' }).uncheck();
    for (const scope of ['clicks:write', 'conversions:write', 'spend:write', 'stores:read']) {
      await page.getByRole('checkbox', { name: scope }).check();
    }
    await page.getByRole('button', { name: 'Create', exact: true }).click();

    const shown = page.getByRole('textbox', { name: 'New key' });
    createdKey = await shown.inputValue();
    expect(createdKey).toMatch(/^wt_live_[0-9A-Za-z]{32,}$/);
    await expect(shown.getAttribute('readonly')).resolves.not.toBeNull();
    await page.getByText('it will not be shown again').waitFor();
    await page.getByRole('button', { name: 'Copy', exact: true }).click();
    await page.getByText('Copied', { exact: true }).waitFor();
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(createdKey);
    await screenshot(page, 'api-keys');

    const stores = await request(server, 'GET', '/v1/stores', { key: createdKey });
    expect(stores.status).toBe(200);
    expect(stores.body.data.stores.map((s: { id: string }) => s.id)).toEqual([storeId]);
    await page.getByRole('button', { name: 'Done' }).click();
    await expect(page.getByRole('textbox', { name: 'New key' }).count()).resolves.toBe(0);
    // Listed by its hint, never in full, with when it was used.
    const row = page.getByRole('row', { name: /Checkout backend/ });
    await expect(text(row)).resolves.toContain(`wt_live_…${createdKey.slice(-4)}`);
    expect(await page.content()).not.toContain(createdKey);
    await eventually(async () => {
      await page.reload();
      expect(await text(page.getByRole('row', { name: /Checkout backend/ }))).not.toMatch(/Never/);
    });
  });

  it('shows the figures and the daily chart, and follows clicks, conversions and spend sent through the API', async () => {
    const page = await newPage();
    await open(page, '/dashboard', figure(page, 'Clicks'));
    await expect(page.getByLabel('Store').inputValue()).resolves.toBe(storeId);
    await expect(text(figure(page, 'Clicks'))).resolves.toBe('0');
    const chart = page.getByRole('img', { name: /^Daily/ });
    await expect(chart.getAttribute('aria-label')).resolves.toMatch(/: 0 clicks, 0 conversions, \$0\.00 revenue$/);

    const fbclid = `IwAR${Date.now()}`;
    for (const id of [fbclid, `${fbclid}b`]) {
      const click = await request(server, 'POST', '/v1/track/click', {
        key: createdKey,
        body: { fbclid: id, storeId, landingPage: `https://shop.acme.example/?fbclid=${id}` },
      });
      expect(click.status).toBe(200);
    }
    const conversion = await request(server, 'POST', '/v1/track/conversion', {
      key: createdKey,
      body: {
        storeId,
        eventType: 'Purchase',
        orderId: 'order-1001',
        eventValue: 49.99,
        currency: 'USD',
        fbclid,
        consent: { adUserData: 'denied' },
        limitedDataUse: { country: 'US', state: 'CA' },
      },
    });
    expect(conversion.body.data.attributed).toBe(true);
    conversionId = conversion.body.data.conversionId;

    await page.reload();
    await eventually(async () => expect(await text(figure(page, 'Clicks'))).toBe('2'));
    expect(await text(figure(page, 'Conversions'))).toBe('1');
    expect(await text(figure(page, 'Revenue'))).toBe('$49.99');
    expect(await text(figure(page, 'Conversion rate'))).toBe('50%');
    expect(await text(figure(page, 'Average order value'))).toBe('$49.99');
    expect(await text(figure(page, 'ROAS'))).toBe('—');
    await eventually(async () =>
      expect(await chart.getAttribute('aria-label')).toMatch(/: 2 clicks, 1 conversions, \$49\.99 revenue$/),
    );

    const today = await page.getByLabel('To', { exact: true }).inputValue();
    const spend = await request(server, 'POST', `/v1/stores/${storeId}/ad-spend`, {
      key: createdKey,
      body: { entries: [{ date: today, amount: 10, currency: 'USD' }] },
    });
    expect(spend.status).toBe(200);
    await page.reload();
    await eventually(async () => expect(await text(figure(page, 'ROAS'))).toBe('5.00×'));
    await screenshot(page, 'overview');

    // Other dates: nothing then, in the figures and in the chart.
    const yesterday = new Date(Date.parse(`${today}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
    await page.getByLabel('To', { exact: true }).fill(yesterday);
    await eventually(async () => expect(await text(figure(page, 'Clicks'))).toBe('0'));
    // The chart's label is set by an effect after the figures render (daily-chart.tsx): wait for it too.
    await eventually(async () => expect(await chart.getAttribute('aria-label')).toMatch(/to \d{4}-\d{2}-\d{2}: 0 clicks/));
    expect(new URL(page.url()).searchParams.get('to')).toBe(yesterday);
  });

  it('test mode shows test data only, on every page, and stays on after a reload', async () => {
    const test = await request(server, 'POST', '/v1/track/conversion', {
      key: account.keys.test,
      body: { storeId, eventType: 'Purchase', orderId: 'test-order-1', eventValue: 20, currency: 'USD' },
    });
    expect(test.status).toBe(200);
    const page = await newPage();
    await open(page, '/dashboard', figure(page, 'Clicks'));
    await eventually(async () => expect(await text(figure(page, 'Conversions'))).toBe('1'));
    expect(await text(figure(page, 'Revenue'))).toBe('$49.99');

    const toggle = page.getByRole('switch', { name: 'Test mode' });
    await expect(toggle.isChecked()).resolves.toBe(false);
    await toggle.check();
    await page.getByText('Test mode: you are looking at test data').waitFor();
    await eventually(async () => expect(await text(figure(page, 'Revenue'))).toBe('$20.00'));
    expect(await text(figure(page, 'Clicks'))).toBe('0');
    expect(await text(figure(page, 'Conversions'))).toBe('1');
    expect(await text(figure(page, 'ROAS'))).toBe('—');
    await screenshot(page, 'overview-test-mode');

    await page.getByRole('link', { name: 'Conversions', exact: true }).click();
    await heading(page, 'Conversions').waitFor();
    await page.getByRole('link', { name: 'test-order-1' }).waitFor();
    await expect(page.getByRole('link', { name: 'order-1001' }).count()).resolves.toBe(0);
    await page.reload();
    await page.getByRole('link', { name: 'test-order-1' }).waitFor();
    await expect(page.getByRole('switch', { name: 'Test mode' }).isChecked()).resolves.toBe(true);

    await page.getByRole('switch', { name: 'Test mode' }).uncheck();
    await page.getByRole('link', { name: 'order-1001' }).waitFor();
    await expect(page.getByRole('link', { name: 'test-order-1' }).count()).resolves.toBe(0);
  });

  it('lists conversions with filters, and explains a conversion: signal, score, touchpoints, forwarding, Resend', async () => {
    // A Google click's conversion: the Click column names its kind, not an fbclid (api.md §12).
    const gclid = `Cj0KCQ${Date.now()}`;
    const googleClick = await request(server, 'POST', '/v1/track/click', {
      key: createdKey,
      body: { gclid, storeId, landingPage: `https://shop.acme.example/?gclid=${gclid}` },
    });
    expect(googleClick.status).toBe(200);
    const google = await request(server, 'POST', '/v1/track/conversion', {
      key: createdKey,
      body: { storeId, eventType: 'Purchase', orderId: 'order-1002', eventValue: 10, currency: 'USD', gclid },
    });
    expect(google.body.data.attributedTo).toMatchObject({ clickIds: { gclid }, channel: 'google_ads' });
    const page = await newPage();
    await open(page, '/dashboard/conversions', page.getByRole('link', { name: 'order-1001' }));
    await expect(text(page.getByRole('columnheader', { name: 'Click', exact: true }))).resolves.toBe('Click');
    const row = page.getByRole('row', { name: /order-1001/ });
    // The store column shows the store's name once the store list has arrived (its id until then).
    await eventually(async () =>
      expect(await text(row)).toMatch(
        /Acme Outdoor\s+Purchase\s+order-1001\s+\$49\.99\s+fbclid · IwAR\d+\s+· 100% confidence\s+Skipped/,
      ),
    );
    await expect(text(page.getByRole('row', { name: /order-1002/ }))).resolves.toMatch(
      new RegExp(`order-1002\\s+\\$10\\.00\\s+gclid · ${gclid}\\s+· 100% confidence`),
    );
    await page.getByLabel('Attribution').selectOption('false');
    await page.getByRole('heading', { name: 'No conversions match' }).waitFor();
    await page.getByLabel('Attribution').selectOption('true');
    await row.waitFor();
    await screenshot(page, 'conversions');

    // A click anywhere on the row opens it.
    await row.getByRole('cell', { name: 'Purchase' }).click();
    await heading(page, 'Purchase · order order-1001').waitFor();
    expect(page.url()).toBe(`${base}/dashboard/conversions/${conversionId}`);
    await expect(text(page.getByRole('region', { name: 'Attribution' }))).resolves.toMatch(
      /100% confidence\. Signal: Explicit reference — the conversion named the click/,
    );
    await expect(
      page
        .getByRole('table', { name: /Touchpoints/ })
        .getByRole('row')
        .count(),
    ).resolves.toBe(2);
    // The candidates as scored, with their evidence (api.md §13 "Explanation").
    await expect(text(page.getByRole('table', { name: /Candidates as scored/ }))).resolves.toMatch(/Explicit reference.*100%/);
    // The consent recorded with it (api.md §10).
    const consent = text(page.getByRole('region', { name: 'Consent' }));
    await expect(consent).resolves.toMatch(/Ad storage\s*Granted/);
    await expect(consent).resolves.toMatch(/Ad user data\s*Denied — no customer data/);
    await expect(consent).resolves.toMatch(/Limited data use\s*Yes \(CA, US\)/);
    const forwarding = page.getByRole('region', { name: 'Forwarding to Meta' });
    await expect(text(forwarding)).resolves.toMatch(/Status\s+Skipped/);
    // Why it was not sent, in the API's own words (capi.message).
    await forwarding.getByText(/Not sent to Meta: the store had no pixelId and capiAccessToken/).waitFor();

    // No Resend while the store cannot forward: the page says what to do instead.
    await expect(forwarding.getByRole('button', { name: 'Resend' }).count()).resolves.toBe(0);
    await forwarding.getByText('configure forwarding (pixel ID and access token)').waitFor();

    // Configure forwarding on the store page, then resend: the conversion is queued again.
    await page.getByRole('link', { name: 'Acme Outdoor' }).first().click();
    await heading(page, 'Acme Outdoor').waitFor();
    const meta = page.getByRole('region', { name: 'Meta' });
    await meta.getByLabel('Pixel ID').fill('123456789012345');
    await meta.getByLabel('Conversions API access token').fill('EAAB-dashboard-test-token');
    await meta.getByRole('button', { name: 'Save Meta' }).click();
    await meta.getByText('Meta settings saved.').waitFor();
    await meta.getByText('Configured. It is never shown again').waitFor();
    await expect(meta.getByLabel('Conversions API access token').inputValue()).resolves.toBe('');
    expect(await page.content()).not.toContain('EAAB-dashboard-test-token');

    await page.goBack();
    await heading(page, 'Purchase · order order-1001').waitFor();
    await page.getByRole('button', { name: 'Resend' }).click();
    await eventually(async () =>
      expect(await text(page.getByRole('region', { name: 'Forwarding to Meta' }))).toMatch(/Status\s+Pending/),
    );
    await expect(page.getByRole('button', { name: 'Resend' }).count()).resolves.toBe(0);
    await screenshot(page, 'conversion');

    // The Google click's conversion names its click by kind, in the sentence and the touchpoints.
    await page.goto(`${base}/dashboard/conversions/${google.body.data.conversionId}`);
    await heading(page, 'Purchase · order order-1002').waitFor();
    await expect(text(page.getByRole('region', { name: 'Attribution' }))).resolves.toContain(
      `(gclid · ${gclid}) with 100% confidence`,
    );
    await expect(text(page.getByRole('table', { name: /Touchpoints/ }))).resolves.toMatch(new RegExp(`gclid · ${gclid}`));
    expect(await page.content()).not.toContain(`gclid:${gclid}`);
  });

  it('deactivates and reactivates a store', async () => {
    const page = await newPage();
    await open(page, `/dashboard/stores/${storeId}`, heading(page, 'Acme Outdoor'));
    await page.getByRole('button', { name: 'Deactivate' }).click();
    await page.getByRole('heading', { name: 'Status: Inactive' }).waitFor();
    const click = await request(server, 'POST', '/v1/track/click', {
      key: createdKey,
      body: { fbclid: 'IwARinactive', storeId, landingPage: 'https://shop.acme.example/' },
    });
    expect(click.body.error.code).toBe('store_not_found');
    await page.getByRole('button', { name: 'Reactivate' }).click();
    await page.getByRole('heading', { name: 'Status: Active' }).waitFor();
  });

  it('revokes a key after confirmation; the API refuses it within 5 s', async () => {
    const page = await newPage();
    await open(page, '/dashboard/settings/api-keys', page.getByRole('row', { name: /Checkout backend/ }));
    await page.getByRole('button', { name: 'Revoke Checkout backend' }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke Checkout backend?' });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await expect(dialog.count()).resolves.toBe(0);
    expect((await request(server, 'GET', '/v1/stores', { key: createdKey })).status).toBe(200);

    await page.getByRole('button', { name: 'Revoke Checkout backend' }).click();
    const revokedAt = Date.now();
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await eventually(async () => expect(await text(page.getByRole('row', { name: /Checkout backend/ }))).toMatch(/Revoked/));
    await eventually(
      async () => expect((await request(server, 'GET', '/v1/stores', { key: createdKey })).status).toBe(401),
      5000,
    );
    expect(Date.now() - revokedAt).toBeLessThan(5000);
  });

  // How soon each is ready after a reload (under a second) is a latency bound, measured with
  // the load tests, alone: server/test/load/dashboard-ready.test.ts.
  it('deep links and reloads land on their page', async () => {
    const page = await newPage();
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
    for (const [url, ready] of visits) {
      // Once by its link, then reloaded.
      await open(page, url, ready(page));
      await page.reload();
      await ready(page).waitFor();
    }
  }, 60_000);

  it('fits a 375 px wide screen: no page scrolls sideways', async () => {
    const page = await newPage({ width: 375 });
    for (const [url, ready] of [
      ['/dashboard', figure(page, 'Clicks')],
      ['/dashboard/stores', page.getByRole('row', { name: /Acme Outdoor/ })],
      [`/dashboard/stores/${storeId}`, page.getByLabel('Tag snippet')],
      ['/dashboard/conversions', page.getByRole('link', { name: 'order-1001' })],
      [`/dashboard/conversions/${conversionId}`, page.getByRole('region', { name: 'Attribution' })],
      ['/dashboard/settings/api-keys', page.getByRole('row', { name: /Checkout backend/ })],
    ] as const) {
      await open(page, url, ready);
      const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
      // When it fails, the message names the elements that stick out.
      const wide =
        overflow > 0
          ? await page.evaluate<string>(
              "[...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > innerWidth + 1).slice(0, 5).map((e) => e.tagName + '.' + e.className).join(', ')",
            )
          : '';
      expect(overflow, `${url} is ${overflow} px too wide: ${wide}`).toBeLessThanOrEqual(0);
    }
    await page.goto(`${base}/dashboard`);
    await figure(page, 'Clicks').waitFor();
    await screenshot(page, 'overview-375px');
  });

  it('signs in with the keyboard alone, with a visible focus', async () => {
    const page = await newPage({ signedIn: false });
    await page.goto(`${base}/dashboard`);
    const email = page.getByLabel('Email');
    await email.waitFor();
    // The first field has the focus; Tab moves through the form in order.
    await expect(isFocused(email)).resolves.toBe(true);
    await page.keyboard.type(EMAIL);
    await page.keyboard.press('Tab');
    await expect(isFocused(page.getByLabel('Password'))).resolves.toBe(true);
    await page.keyboard.type(PASSWORD);
    await page.keyboard.press('Tab');
    const button = page.getByRole('button', { name: 'Sign in' });
    await expect(isFocused(button)).resolves.toBe(true);
    const outline = await button.evaluate((el) => el.ownerDocument.defaultView?.getComputedStyle(el).outlineStyle);
    expect(outline).not.toBe('none');
    await page.keyboard.press('Enter');
    await heading(page, 'Overview').waitFor();

    // Navigation by keyboard too: Tab to the Stores link, Enter (once the navigation is drawn: a
    // busy machine draws it after the heading).
    await page.getByRole('link', { name: 'Stores', exact: true }).first().waitFor();
    for (let i = 0; i < 20; i++) {
      await page.keyboard.press('Tab');
      if (await page.evaluate<boolean>("document.activeElement?.textContent === 'Stores'")) break;
    }
    await page.keyboard.press('Enter');
    await heading(page, 'Stores').waitFor();
  });

  it('signs out: the session ends on the server, not only in the browser', async () => {
    const page = await newPage();
    await open(page, '/dashboard', heading(page, 'Overview'));
    const cookie = (await page.context().cookies()).find((c) => c.name === '__Host-waytrack_session');
    expect(cookie).toBeDefined();
    const asOwner = () =>
      new Promise<number>((resolve, reject) => {
        const req = https.request(
          new URL('/dashboard/api/keys', server.url),
          { ca: server.ca, servername: 'localhost', headers: { cookie: `${cookie?.name}=${cookie?.value}` } },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.end();
      });
    expect(await asOwner()).toBe(200);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(await asOwner()).toBe(401);
  });
});
