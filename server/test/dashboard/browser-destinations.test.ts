// The dashboard in Chromium (api.md §5, §8, §9): a store's destinations configured from its page
// (secrets write-only, the API's field errors beside their field), and refunds on the overview
// and on a conversion's page. Same set-up as browser.test.ts: a real server process over HTTPS,
// Debian's Chromium, pages located by role and label.
import { existsSync } from 'node:fs';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { request } from '../e2e/process.js';
import {
  CHROMIUM,
  type DashboardServer,
  eventually,
  figure,
  screenshot,
  signIn,
  startDashboard,
  TestPages,
  text,
} from './browser.js';

const EMAIL = 'dest-owner@example.com';
const PASSWORD = 'a long enough password';
const chromiumPresent = existsSync(CHROMIUM);

const GOOGLE_SECRETS = ['dev-token-SECRET-1', 'oauth-client-SECRET-2', '1//refresh-SECRET-3'];
const ACTION = 'customers/1234567890/conversionActions/987654321';

const fact = (page: Page, label: string) =>
  page
    .locator('dl.facts div')
    .filter({ has: page.locator('dt', { hasText: new RegExp(`^${label}$`) }) })
    .locator('dd');

describe.skipIf(!chromiumPresent)('the dashboard in Chromium: destinations and refunds', () => {
  let dashboard: DashboardServer;
  let base: string;
  let storeId = '';
  let signedIn: Awaited<ReturnType<BrowserContext['storageState']>>;
  const pages = new TestPages(() => dashboard.browser);

  const newPage = (state?: typeof signedIn) => pages.open({ viewport: { width: 1280, height: 900 }, storageState: state });
  const api = (method: string, url: string, body?: unknown) =>
    request(dashboard.server, method, url, { key: dashboard.account.keys.live, body });

  beforeAll(async () => {
    // Forwarding goes to ports that refuse: nothing here waits for a platform.
    dashboard = await startDashboard({
      prefix: 'waytrack-dashboard-dest-',
      email: EMAIL,
      password: PASSWORD,
      env: {
        CAPI_SYNC_WAIT_MS: '0',
        META_GRAPH_URL: 'http://127.0.0.1:9',
        GOOGLE_ADS_API_URL: 'http://127.0.0.1:9',
        GOOGLE_OAUTH_TOKEN_URL: 'http://127.0.0.1:9/token',
        TIKTOK_API_URL: 'http://127.0.0.1:9',
      },
    });
    base = dashboard.base;
    const store = await api('POST', '/v1/stores', { name: 'Fjord Gear', domain: 'fjord.example', platform: 'shopify' });
    expect(store.status).toBe(201);
    storeId = store.body.data.id;
    signedIn = await signIn(await newPage(), base, EMAIL, PASSWORD);
  }, 240_000);

  afterEach(async () => {
    expect(await pages.closeAll()).toEqual([]);
  });

  afterAll(async () => {
    await dashboard?.close();
  });

  it('configures Google Ads from the store page: field errors beside their field, secrets write-only and kept when blank', async () => {
    const page = await newPage(signedIn);
    await page.goto(`${base}/dashboard/stores/${storeId}`);
    const google = page.getByRole('region', { name: 'Google Ads' });
    await eventually(async () => expect(await text(google)).toContain('Not configured'));

    await google.getByLabel('Customer ID', { exact: true }).fill('123-456-7890');
    await google.getByLabel('Conversion action').fill(ACTION);
    // A developer token is the Google Ads API's: Data Manager (the default) refuses one.
    await expect(google.getByLabel('API', { exact: true }).inputValue()).resolves.toBe('data_manager');
    await google.getByLabel('API', { exact: true }).selectOption('google_ads_api');
    await google.getByLabel('Developer token').fill(GOOGLE_SECRETS[0] as string);
    await google.getByLabel('OAuth client ID').fill('1234-abc.apps.googleusercontent.com');
    await google.getByLabel('OAuth client secret').fill(GOOGLE_SECRETS[1] as string);
    await google.getByLabel('OAuth refresh token').fill(GOOGLE_SECRETS[2] as string);
    for (const label of ['Developer token', 'OAuth client secret', 'OAuth refresh token']) {
      await expect(google.getByLabel(label).getAttribute('type')).resolves.toBe('password');
    }
    await google.getByRole('button', { name: 'Save Google Ads' }).click();
    // The API's message, beside the field it names (details.field), tied to it for screen readers.
    const customerId = google.getByLabel('Customer ID', { exact: true });
    await eventually(async () => expect(await customerId.getAttribute('aria-invalid')).toBe('true'));
    const errorId = (await customerId.getAttribute('aria-describedby'))?.split(' ').find((i) => i.endsWith('-error'));
    expect(errorId).toBeDefined();
    await expect(text(page.locator(`#${errorId}`))).resolves.toBe('customerId has an invalid format: 10 digits, without dashes');
    pages.expected = [/status of 400 .*destinations\/google_ads\)$/];
    await expect(google.getByLabel('Conversion action').getAttribute('aria-invalid')).resolves.toBeNull();

    await customerId.fill('1234567890');
    await google.getByRole('button', { name: 'Save Google Ads' }).click();
    await google.getByText('Google Ads settings saved.').waitFor();
    await expect(text(google)).resolves.toMatch(/Configured\s+Last changed/);
    // Secrets leave the page once saved: blank inputs, "Configured" beside each, nowhere in the page.
    for (const label of ['Developer token', 'OAuth client secret', 'OAuth refresh token']) {
      await expect(google.getByLabel(label).inputValue()).resolves.toBe('');
    }
    await expect(google.getByText('Configured. It is never shown again').count()).resolves.toBe(3);
    const html = await page.content();
    for (const secret of GOOGLE_SECRETS) expect(html).not.toContain(secret);
    await expect(google.getByLabel('Customer ID', { exact: true }).inputValue()).resolves.toBe('1234567890');
    await expect(google.getByLabel('Conversion action').inputValue()).resolves.toBe(ACTION);

    // A map of conversion actions, secrets left blank: the stored ones are kept (the API requires them).
    await google.getByLabel('Conversion action').fill(`Purchase = ${ACTION}\nLead = customers/1234567890/conversionActions/111`);
    await google.getByRole('button', { name: 'Save Google Ads' }).click();
    await google.getByText('Google Ads settings saved.').waitFor();
    // The previous save's message is still shown: this save is known done once the API has it.
    await eventually(async () => {
      const listed = await api('GET', `/v1/stores/${storeId}/destinations`);
      const stored = listed.body.data.destinations.find((d: { kind: string }) => d.kind === 'google_ads');
      expect(stored).toMatchObject({
        configured: true,
        settings: {
          api: 'google_ads_api',
          customerId: '1234567890',
          conversionAction: { Purchase: ACTION, Lead: 'customers/1234567890/conversionActions/111' },
          developerTokenConfigured: true,
          oauth: { clientId: '1234-abc.apps.googleusercontent.com', clientSecretConfigured: true, refreshTokenConfigured: true },
        },
      });
    });
    await page.reload();
    await eventually(async () =>
      expect(await google.getByLabel('Conversion action').inputValue()).toBe(
        `Purchase = ${ACTION}\nLead = customers/1234567890/conversionActions/111`,
      ),
    );
    await screenshot(page, 'store-destinations');

    // TikTok's missing secret is named beside it too.
    const tiktok = page.getByRole('region', { name: 'TikTok' });
    await tiktok.getByLabel('Pixel code').fill('CABCDEFGHIJ1234567');
    await tiktok.getByRole('button', { name: 'Save TikTok' }).click();
    await eventually(async () => expect(await tiktok.getByLabel('Access token').getAttribute('aria-invalid')).toBe('true'));
    await tiktok.getByText('accessToken is required').waitFor();
    pages.expected.push(/status of 400 .*destinations\/tiktok\)$/);

    // Microsoft Advertising: a tag id that is not digits is named beside its field; then saved, the token never shown.
    const microsoft = page.getByRole('region', { name: 'Microsoft Advertising' });
    await microsoft.getByLabel('UET tag ID').fill('abc');
    await microsoft.getByLabel('Conversions API token').fill('ms-browser-token-1');
    await microsoft.getByRole('button', { name: 'Save Microsoft Advertising' }).click();
    await eventually(async () => expect(await microsoft.getByLabel('UET tag ID').getAttribute('aria-invalid')).toBe('true'));
    pages.expected.push(/status of 400 .*destinations\/microsoft\)$/);
    await microsoft.getByLabel('UET tag ID').fill('343210987');
    await microsoft.getByRole('button', { name: 'Save Microsoft Advertising' }).click();
    await microsoft.getByText('Microsoft Advertising settings saved.').waitFor();
    await expect(microsoft.getByLabel('Conversions API token').inputValue()).resolves.toBe('');
    expect(await page.content()).not.toContain('ms-browser-token-1');
    const listedMs = await api('GET', `/v1/stores/${storeId}/destinations`);
    expect(listedMs.body.data.destinations.find((d: { kind: string }) => d.kind === 'microsoft')).toMatchObject({
      configured: true,
      settings: { tagId: '343210987', accessTokenConfigured: true },
    });
    // Pinterest: its test mode is a choice sent as a boolean; the token is never shown again.
    const pinterest = page.getByRole('region', { name: 'Pinterest' });
    await pinterest.getByLabel('Ad account ID').fill('549755885175');
    await pinterest.getByLabel('Conversion access token').fill('pina-browser-token');
    await pinterest.getByLabel('Test mode').selectOption('true');
    await pinterest.getByRole('button', { name: 'Save Pinterest' }).click();
    await eventually(async () => {
      const saved = await api('GET', `/v1/stores/${storeId}/destinations`);
      const entry = saved.body.data.destinations.find((d: { kind: string }) => d.kind === 'pinterest');
      expect(entry.settings).toEqual({ adAccountId: '549755885175', testMode: true, accessTokenConfigured: true });
    });
    // The form clears the secret once it has read the save's answer (which may come after the API shows it saved).
    await eventually(async () => expect(await pinterest.getByLabel('Conversion access token').inputValue()).toBe(''));

    // Removal asks first; then the platform is no longer configured.
    await google.getByRole('button', { name: 'Remove Google Ads' }).click();
    const confirm = google.getByRole('group', { name: 'Remove Google Ads?' });
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await expect(confirm.count()).resolves.toBe(0);
    await google.getByRole('button', { name: 'Remove Google Ads' }).click();
    await confirm.getByRole('button', { name: 'Remove', exact: true }).click();
    await google.getByText('Google Ads removed').waitFor();
    await expect(text(google)).resolves.toContain('Not configured');
    const after = await api('GET', `/v1/stores/${storeId}/destinations`);
    expect(after.body.data.destinations.find((d: { kind: string }) => d.kind === 'google_ads').configured).toBe(false);
  });

  it('configures Meta there too: the store says forwarding is configured', async () => {
    const page = await newPage(signedIn);
    await page.goto(`${base}/dashboard/stores/${storeId}`);
    const meta = page.getByRole('region', { name: 'Meta' });
    await meta.getByLabel('Pixel ID').fill('123456789012345');
    await meta.getByLabel('Conversions API access token').fill('EAAB-destinations-token');
    await meta.getByRole('button', { name: 'Save Meta' }).click();
    await meta.getByText('Meta settings saved.').waitFor();
    await page.getByText('Meta forwarding configured').waitFor();
    expect(await page.content()).not.toContain('EAAB-destinations-token');
    const store = await api('GET', `/v1/stores/${storeId}`);
    expect(store.body.data).toMatchObject({ pixelId: '123456789012345', capiConfigured: true });
  });

  it('shows refunds, net revenue and net ROAS on the overview, and what was refunded on the conversion', async () => {
    const fbclid = `IwAR${Date.now()}`;
    expect(
      (await api('POST', '/v1/track/click', { storeId, fbclid, landingPage: `https://fjord.example/?fbclid=${fbclid}` })).status,
    ).toBe(200);
    const conversion = await api('POST', '/v1/track/conversion', {
      storeId,
      eventType: 'Purchase',
      orderId: 'order-77',
      eventValue: 49.99,
      currency: 'USD',
      fbclid,
    });
    expect(conversion.body.data.attributed).toBe(true);
    const page = await newPage(signedIn);
    await page.goto(`${base}/dashboard?store=${storeId}`);
    await eventually(async () => expect(await text(figure(page, 'Revenue'))).toBe('$49.99'));
    expect(await text(figure(page, 'Refunds'))).toBe('$0.00');
    expect(await text(figure(page, 'Net revenue'))).toBe('$49.99');

    const today = await page.getByLabel('To', { exact: true }).inputValue();
    expect(
      (await api('POST', `/v1/stores/${storeId}/ad-spend`, { entries: [{ date: today, amount: 10, currency: 'USD' }] })).status,
    ).toBe(200);
    const refund = await api('POST', '/v1/track/refund', {
      storeId,
      orderId: 'order-77',
      refundId: 're_77_1',
      amount: 19.99,
      currency: 'USD',
    });
    expect(refund.body.data).toMatchObject({ refundedTotal: 19.99, remaining: 30 });

    await page.reload();
    await eventually(async () => expect(await text(figure(page, 'Refunds'))).toBe('$19.99'));
    expect(await text(figure(page, 'Revenue'))).toBe('$49.99');
    expect(await text(figure(page, 'Net revenue'))).toBe('$30.00');
    // (49.99 attributed − 19.99 refunded) ÷ 10 spent.
    expect(await text(figure(page, 'ROAS'))).toBe('3.00×');
    await page.getByText('ROAS is net of the refunds of attributed conversions').waitFor();
    await screenshot(page, 'overview-refunds');

    await page.goto(`${base}/dashboard/conversions/${conversion.body.data.conversionId}`);
    await page.getByRole('heading', { level: 1, name: 'Purchase · order order-77' }).waitFor();
    expect(await text(fact(page, 'Value'))).toBe('$49.99');
    expect(await text(fact(page, 'Refunded'))).toBe('$19.99');
    expect(await text(fact(page, 'Remaining'))).toBe('$30.00');
  });
});
