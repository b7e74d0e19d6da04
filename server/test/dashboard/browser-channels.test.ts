// The dashboard in Chromium (api.md §11): the Channels page (channels with expandable campaigns,
// the spend chart, MER, spend sources, tracking health), the Customers page (cohorts) and the
// store page's spend sources — labelled, reachable with the keyboard, at desktop and 375 px, and
// every table downloads as CSV.
import { existsSync, readFileSync } from 'node:fs';
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

const EMAIL = 'channels-owner@example.com';
const PASSWORD = 'a long enough password';
const chromiumPresent = existsSync(CHROMIUM);

describe.skipIf(!chromiumPresent)('the dashboard in Chromium: channels, customers and spend sources', () => {
  let dashboard: DashboardServer;
  let base: string;
  let storeId = '';
  let signedIn: Awaited<ReturnType<BrowserContext['storageState']>>;
  const pages = new TestPages(() => dashboard.browser);
  const desktop = () => pages.open({ viewport: { width: 1280, height: 900 }, storageState: signedIn, acceptDownloads: true });
  const phone = () => pages.open({ viewport: { width: 375, height: 812 }, storageState: signedIn, acceptDownloads: true });
  const api = (method: string, url: string, body?: unknown) =>
    request(dashboard.server, method, url, { key: dashboard.account.keys.live, body });
  const today = new Date().toISOString().slice(0, 10);

  beforeAll(async () => {
    dashboard = await startDashboard({ prefix: 'waytrack-dashboard-channels-', email: EMAIL, password: PASSWORD });
    base = dashboard.base;
    const store = await api('POST', '/v1/stores', {
      name: 'Fjord Outfitters',
      domain: 'fjord.example',
      platform: 'shopify',
      currency: 'USD',
      timezone: 'UTC',
    });
    expect(store.status, JSON.stringify(store.body)).toBe(201);
    storeId = store.body.data.id;
    // Two Meta campaigns, a Google click, and a purchase without any ad.
    const clicks = [
      { fbclid: 'fb-summer-1', landingPage: 'https://fjord.example/?fbclid=fb-summer-1&campaign_id=111' },
      { fbclid: 'fb-winter-1', landingPage: 'https://fjord.example/?fbclid=fb-winter-1&campaign_id=222' },
      { gclid: 'g-search-1', landingPage: 'https://fjord.example/?gclid=g-search-1&campaign_id=9001' },
    ];
    for (const click of clicks) expect((await api('POST', '/v1/track/click', { storeId, ...click })).status).toBe(200);
    const purchases = [
      { orderId: 'o-1', eventValue: 120, fbclid: 'fb-summer-1', customerData: { email: 'ada@example.com' } },
      { orderId: 'o-2', eventValue: 80.5, fbclid: 'fb-winter-1', customerData: { email: 'bo@example.com' } },
      { orderId: 'o-3', eventValue: 60, gclid: 'g-search-1', customerData: { email: 'cy@example.com' } },
      {
        orderId: 'o-4',
        eventValue: 25,
        // Another network and browser than the ad clicks', no known customer: nothing links it to one.
        ipAddress: '198.51.100.7',
        userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0',
      },
    ];
    for (const p of purchases) {
      const res = await api('POST', '/v1/track/conversion', { storeId, eventType: 'Purchase', currency: 'USD', ...p });
      expect(res.status).toBe(200);
    }
    const spend = await api('POST', `/v1/stores/${storeId}/ad-spend`, {
      entries: [
        { date: today, amount: 50, currency: 'USD', platform: 'meta', campaignId: '111', campaignName: 'Summer "Sale", =big' },
        { date: today, amount: 30, currency: 'USD', platform: 'meta', campaignId: '222', campaignName: 'Winter' },
        { date: today, amount: 20, currency: 'USD', platform: 'google_ads', campaignId: '9001', campaignName: 'Search' },
      ],
    });
    expect(spend.status).toBe(200);
    signedIn = await signIn(await pages.open({ viewport: { width: 1280, height: 900 } }), base, EMAIL, PASSWORD);
    expect(await pages.closeAll()).toEqual([]);
  }, 240_000);

  afterEach(async () => {
    expect(await pages.closeAll()).toEqual([]);
  });

  afterAll(async () => {
    await dashboard?.close();
  });

  /** Tabs until the focused element's tag and text match `name` (at most `max` presses). */
  async function tabTo(page: Page, name: RegExp, max = 80) {
    for (let i = 0; i < max; i++) {
      await page.keyboard.press('Tab');
      const focused = await page.evaluate<string>(
        "(() => { const el = document.activeElement; return el ? el.tagName + ' ' + (el.textContent || el.getAttribute('aria-label') || '').trim() : ''; })()",
      );
      if (name.test(focused)) return;
    }
    throw new Error(`${name} never had the focus`);
  }

  /** Presses the focused download button and returns the CSV it saves. */
  async function downloadWithEnter(page: Page): Promise<string> {
    const [download] = await Promise.all([page.waitForEvent('download'), page.keyboard.press('Enter')]);
    return readFileSync((await download.path()) as string, 'utf8');
  }

  it('Channels: figures, channels with their campaigns expanded by keyboard, the chart, and the CSV (desktop)', async () => {
    const page = await desktop();
    await page.goto(`${base}/dashboard/channels?store=${storeId}`);
    await eventually(async () => expect(await text(figure(page, 'Ad spend'))).toBe('$100.00'));
    // Net revenue of the whole store (120 + 80.50 + 60 + 25) against all spend: MER 2.86.
    expect(await text(figure(page, 'Net revenue'))).toBe('$285.50');
    expect(await text(page.locator('dl.figures dd').nth(2))).toBe('2.86×');
    const table = page.getByRole('table', { name: /per channel and campaign/ });
    expect(await text(table)).toMatch(/Meta[\s\S]*Google Ads[\s\S]*Not attributed to an ad/);
    expect(await page.getByRole('img', { name: /Ad spend and net revenue per day/ }).count()).toBe(1);

    await tabTo(page, /^BUTTON ▸ Meta/);
    await page.keyboard.press('Enter');
    const expand = page.getByRole('button', { name: /Meta/ });
    expect(await expand.getAttribute('aria-expanded')).toBe('true');
    await eventually(async () => expect(await text(table)).toContain('Winter'));
    expect(await text(table)).toContain('222');

    await tabTo(page, /^BUTTON Download CSV/);
    const csv = await downloadWithEnter(page);
    const lines = csv.trim().split('\r\n');
    expect(lines[0]).toBe(
      'Channel,Campaign ID,Campaign,Spend,Clicks,Conversions,Revenue,Refunds,Net revenue,ROAS,CPA,New customers',
    );
    // A campaign name with quotes and a comma arrives quoted (RFC 4180).
    expect(csv).toContain('meta,111,"Summer ""Sale"", =big",50,');
    expect(lines.some((l) => l.startsWith('google_ads,9001,Search,20,'))).toBe(true);
    await screenshot(page, 'channels');
  });

  it('Channels at 375 px: nothing wider than the screen; tracking health and spend sources are listed with their sentences', async () => {
    const page = await phone();
    await page.goto(`${base}/dashboard/channels?store=${storeId}`);
    const health = page.getByRole('region', { name: 'Tracking health' });
    await eventually(async () => expect(await text(health)).not.toContain('Checking'));
    const sources = page.getByRole('region', { name: 'Spend sources' });
    await eventually(async () => expect(await text(sources)).toMatch(/Meta[\s\S]*not connected/));
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
    // The model is a labelled choice; changing it reloads the report under the new model.
    await page.getByLabel('Attribution model').selectOption('linear');
    await page.waitForURL(/model=linear/);
    await eventually(async () => expect(await text(figure(page, 'Ad spend'))).toBe('$100.00'));
  });

  it('Customers: the month cohort with its customers and CAC, by channel too, and its CSV (375 px, keyboard)', async () => {
    const page = await phone();
    await page.goto(`${base}/dashboard/customers?store=${storeId}`);
    const table = page.getByRole('table', { name: /Net revenue per customer/ });
    const month = today.slice(0, 7);
    // Three customers (the fourth purchase names none): the month's cohort.
    await eventually(async () => expect(await text(table.getByRole('row', { name: new RegExp(month) }))).toMatch(/\b3\b/));
    await page.getByLabel('Group by').selectOption('channel');
    await page.waitForURL(/by=channel/);
    await eventually(async () => expect(await text(table)).toContain('Meta'));
    await tabTo(page, /^BUTTON Download CSV/);
    const csv = await downloadWithEnter(page);
    expect(csv.split('\r\n')[0]).toMatch(/^Cohort,Channel,Customers,Spend,CAC,Net revenue per customer d0/);
    expect(csv).toContain(`${month},meta,`);
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
    await screenshot(page, 'customers');
  });

  it('the store page connects a spend source: a missing account is named beside its field, then it is connected', async () => {
    const page = await desktop();
    await page.goto(`${base}/dashboard/stores/${storeId}`);
    const meta = page.getByRole('group', { name: 'Meta spend' });
    await eventually(async () => expect(await meta.getByLabel('Ad account IDs').count()).toBe(1));
    // No account and no token anywhere (the store has no Meta destination): the API names the field.
    pages.expected.push(/status of 400 .*spend-sources\/meta/);
    await meta.getByRole('button', { name: 'Connect Meta spend' }).click();
    const error = meta.getByRole('alert');
    await eventually(async () => expect(await text(error)).toMatch(/adAccountIds|ad account/i));
    expect(await meta.getByLabel('Ad account IDs').getAttribute('aria-invalid')).toBe('true');
    await meta.getByLabel('Ad account IDs').fill('act_1234567890');
    await meta.getByLabel('Access token').fill('EAAB-spend-token');
    await meta.getByRole('button', { name: 'Connect Meta spend' }).click();
    await eventually(async () => expect(await text(meta.getByRole('status'))).toMatch(/Meta spend connected/));
    const listed = await api('GET', `/v1/stores/${storeId}/spend-sources`);
    const source = listed.body.data.spendSources.find((s: { kind: string }) => s.kind === 'meta');
    expect(source).toMatchObject({ configured: true, accounts: ['act_1234567890'] });
    // The token never comes back to the page.
    expect(await page.content()).not.toContain('EAAB-spend-token');
  });
});
