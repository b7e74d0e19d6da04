// The dashboard's Reconciliation page in a real browser (Debian's Chromium through
// playwright-core, against a real server process over HTTPS): the day's counts per
// destination, a count that opens exactly its conversions, and a print view without the
// navigation.
import { existsSync, rmSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, request, type ServerProcess, serve } from '../e2e/process.js';
import { openTestDatabase, type TestDatabase } from '../engine.js';
import { tempDir } from '../helpers.js';
import { CHROMIUM, launchChromium } from './browser.js';

const EMAIL = 'reconcile@example.com';
const PASSWORD = 'a long enough password';
const chromiumPresent = existsSync(CHROMIUM);
if (!chromiumPresent) console.log('skipped: install chromium');

describe.skipIf(!chromiumPresent)('the dashboard’s reconciliation page', () => {
  let dataDir: string;
  let database: TestDatabase;
  let server: ServerProcess;
  let browser: Browser;
  let base: string;
  let context: BrowserContext;
  let page: Page;
  const pageErrors: string[] = [];
  const orders = ['recon-1', 'recon-2'];
  let today = '';

  beforeAll(async () => {
    dataDir = tempDir('waytrack-recon-');
    database = await openTestDatabase(dataDir);
    await database.database.close();
    const created = cli(['account', 'create', '--email', EMAIL, '--password', PASSWORD, '--json'], database.env);
    if (created.status !== 0) throw new Error(created.stderr);
    const account = JSON.parse(created.stdout) as { keys: { live: string } };
    // Meta is configured, but unreachable: the conversions stay pending (retried).
    server = await serve({ ...database.env, REDIS_URL: '', CAPI_SYNC_WAIT_MS: '0', META_GRAPH_URL: 'http://127.0.0.1:9' });
    base = server.url.replace('//127.0.0.1', '//localhost');
    browser = await launchChromium(server.ca);
    const store = await request(server, 'POST', '/v1/stores', {
      key: account.keys.live,
      body: {
        name: 'Reconciled Outdoor',
        domain: 'recon.example.com',
        platform: 'custom',
        pixelId: '1234567890',
        capiAccessToken: 'EAAtoken',
      },
    });
    expect(store.status).toBe(201);
    const storeId = store.body.data.id as string;
    for (const orderId of orders) {
      const res = await request(server, 'POST', '/v1/track/conversion', {
        key: account.keys.live,
        body: { storeId, eventType: 'Purchase', orderId, eventValue: 10, currency: 'USD' },
      });
      expect(res.status).toBe(200);
      today = (res.body.data.timestamp as string).slice(0, 10);
    }
    context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-US', timezoneId: 'UTC' });
    page = await context.newPage();
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await page.goto(`${base}/dashboard`);
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
  }, 240_000);

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await server?.stop();
    await database?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('shows the day per destination; a count opens exactly its conversions; printing leaves the navigation out', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Reconciliation' }).click();
    await page.getByRole('heading', { level: 1, name: 'Reconciliation' }).waitFor();
    const row = page.getByRole('row', { name: new RegExp(today) });
    await row.waitFor();
    await expect(row.getByRole('link', { name: '2 received' }).isVisible()).resolves.toBe(true);
    // Meta receives both, neither is delivered yet; Google Ads and TikTok receive none (no click ids).
    const pending = row.getByRole('link', { name: `2 pending, Meta ${today}` });
    await expect(pending.isVisible()).resolves.toBe(true);
    await expect(row.getByRole('link', { name: /Google Ads/ }).count()).resolves.toBe(0);

    await page.emulateMedia({ media: 'print' });
    await expect(page.getByRole('navigation', { name: 'Main' }).isVisible()).resolves.toBe(false);
    await expect(page.getByRole('button', { name: 'Print' }).isVisible()).resolves.toBe(false);
    await expect(row.isVisible()).resolves.toBe(true);
    await page.emulateMedia({ media: 'screen' });

    await pending.click();
    await page.getByRole('heading', { level: 1, name: 'Conversions' }).waitFor();
    expect(new URL(page.url()).searchParams.get('forwardingStatus')).toBe('pending');
    for (const orderId of orders) await page.getByRole('link', { name: orderId }).waitFor();
    await expect(page.locator('tbody tr').count()).resolves.toBe(2);
    await expect(page.getByText('Also filtered by').isVisible()).resolves.toBe(true);
    expect(pageErrors).toEqual([]);
  });
});
