// The dashboard's Match quality page in Chromium (api.md §10): per destination the average
// score, the share missing each key, and the change that would raise the score most.
import { existsSync, rmSync } from 'node:fs';
import type { Browser, Locator } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, request, type ServerProcess, serve } from '../e2e/process.js';
import { openTestDatabase, type TestDatabase } from '../engine.js';
import { tempDir } from '../helpers.js';
import { CHROMIUM, launchChromium } from './browser.js';

const EMAIL = 'quality@example.com';
const PASSWORD = 'a long enough password';
const chromiumPresent = existsSync(CHROMIUM);
// biome-ignore lint/performance/useDomNodeTextContent: the text as rendered, as a person reads it (table cells apart)
const text = (locator: Locator) => locator.innerText();

describe.skipIf(!chromiumPresent)('the Match quality page in Chromium', () => {
  let dataDir: string;
  let database: TestDatabase;
  let server: ServerProcess;
  let browser: Browser;
  let base: string;

  beforeAll(async () => {
    dataDir = tempDir('waytrack-mq-');
    database = await openTestDatabase(dataDir);
    await database.database.close();
    const created = cli(['account', 'create', '--email', EMAIL, '--password', PASSWORD, '--json'], database.env);
    if (created.status !== 0) throw new Error(created.stderr);
    const { keys } = JSON.parse(created.stdout) as { keys: { live: string } };
    server = await serve({ ...database.env, REDIS_URL: '', CAPI_SYNC_WAIT_MS: '0', META_GRAPH_URL: 'http://127.0.0.1:9' });
    base = server.url.replace('//127.0.0.1', '//localhost');
    const store = await request(server, 'POST', '/v1/stores', {
      key: keys.live,
      body: {
        name: 'Quality Shop',
        domain: 'q.example.com',
        platform: 'custom',
        pixelId: '123456789012345',
        capiAccessToken: 'EAA1',
      },
    });
    expect(store.status).toBe(201);
    // Two conversions with email, IP and user agent; neither has a click id, one a phone without country code.
    for (const [orderId, phone] of [
      ['q-1', '030 1234567'],
      ['q-2', undefined],
    ] as const) {
      const res = await request(server, 'POST', '/v1/track/conversion', {
        key: keys.live,
        body: {
          storeId: store.body.data.id,
          eventType: 'Purchase',
          orderId,
          eventValue: 20,
          currency: 'USD',
          customerData: { email: `${orderId}@example.com`, ...(phone && { phone }) },
          ipAddress: '203.0.113.5',
          userAgent: 'Mozilla/5.0',
        },
      });
      expect(res.status).toBe(200);
    }
    browser = await launchChromium(server.ca);
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await database?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('is in the navigation and says which change raises the score most', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-US', timezoneId: 'UTC' });
    const errors: string[] = [];
    const page = await context.newPage();
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(`${base}/dashboard`);
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview', exact: true }).waitFor();

    await page.getByRole('link', { name: 'Match quality', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Match quality', exact: true }).waitFor();
    expect(page.url()).toBe(`${base}/dashboard/match-quality`);
    const meta = page.getByRole('region', { name: 'Meta' });
    await meta.waitFor();
    // email 3 + IP/UA 1.5 each: 4.5 out of 10.
    await expect(text(meta.locator('dd').first())).resolves.toBe('4.5 / 10');
    await expect(text(meta.getByTestId('best-meta'))).resolves.toMatch(
      /^Biggest gain: click id is missing on 100(\.0+)?% of conversions; .*\(\+3\.00 points\)\.$/,
    );
    await expect(text(meta.getByRole('row', { name: /phone/ }))).resolves.toMatch(/phone\s+100/);
    await expect(meta.getByText(/phone without country code: 1 conversions/).count()).resolves.toBe(1);
    expect(errors).toEqual([]);
    await context.close();
  });
});
