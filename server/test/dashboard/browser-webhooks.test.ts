// The dashboard in Chromium (api.md §9, issue 25 point 6): a store's shop-webhook setup on its
// page (the URL to paste, the secret write-only), and the Webhooks page: an endpoint created
// (its secret shown once), its deliveries after a conversion and a refund, one re-sent, the
// endpoint deleted. A real server process over HTTPS; the merchant's endpoint is a local https
// receiver, trusted through NODE_EXTRA_CA_CERTS (WEBHOOKS_ALLOW_PRIVATE lets it be on loopback).
import { existsSync } from 'node:fs';
import type { BrowserContext } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { request } from '../e2e/process.js';
import { Receiver } from '../webhooks/receiver.js';
import {
  CHROMIUM,
  type DashboardServer,
  eventually as eventuallyIn,
  screenshot,
  signIn,
  startDashboard,
  TestPages,
  text,
} from './browser.js';

const EMAIL = 'hooks-owner@example.com';
const PASSWORD = 'a long enough password';
const SHOPIFY_SECRET = 'shpss_dashboard_SECRET_7f3a';
const chromiumPresent = existsSync(CHROMIUM);

/** Deliveries go out from the server's background dispatcher: up to 10 s. */
const eventually = (check: () => Promise<void>) => eventuallyIn(check, 10_000);

describe.skipIf(!chromiumPresent)('the dashboard in Chromium: shop webhooks and webhooks out', () => {
  let dashboard: DashboardServer;
  let receiver: Receiver;
  let base: string;
  let storeId = '';
  let signedIn: Awaited<ReturnType<BrowserContext['storageState']>>;
  const pages = new TestPages(() => dashboard.browser);

  const newPage = (state?: typeof signedIn) =>
    pages.open({
      viewport: { width: 1280, height: 900 },
      storageState: state,
      permissions: ['clipboard-read', 'clipboard-write'],
    });
  const api = (method: string, url: string, body?: unknown) =>
    request(dashboard.server, method, url, { key: dashboard.account.keys.live, body });

  beforeAll(async () => {
    receiver = await Receiver.start();
    dashboard = await startDashboard({
      prefix: 'waytrack-dashboard-hooks-',
      email: EMAIL,
      password: PASSWORD,
      env: {
        CAPI_SYNC_WAIT_MS: '0',
        META_GRAPH_URL: 'http://127.0.0.1:9',
        WEBHOOKS_ALLOW_PRIVATE: 'true',
        NODE_EXTRA_CA_CERTS: receiver.certPath,
      },
    });
    base = dashboard.base;
    const store = await api('POST', '/v1/stores', { name: 'Harbor Goods', domain: 'harbor.example', platform: 'shopify' });
    expect(store.status).toBe(201);
    storeId = store.body.data.id;
    signedIn = await signIn(await newPage(), base, EMAIL, PASSWORD);
  }, 240_000);

  afterEach(async () => {
    expect(await pages.closeAll()).toEqual([]);
  });

  afterAll(async () => {
    await dashboard?.close();
    await receiver?.close();
  });

  it('sets the Shopify secret from the store page: the URL to paste shown, the secret never shown back, then cleared', async () => {
    const page = await newPage(signedIn);
    await page.goto(`${base}/dashboard/stores/${storeId}`);
    const shopify = page.getByRole('region', { name: 'Shopify' });
    await eventually(async () => expect(await text(shopify)).toContain('Not configured'));
    const url = `${base}/v1/webhooks/shopify/${storeId}`;
    await expect(text(shopify.getByTestId('shop-shopify-url'))).resolves.toBe(url);
    await expect(text(shopify)).resolves.toContain('orders/paid');
    await expect(text(shopify)).resolves.toContain('refunds/create');
    await shopify.getByRole('button', { name: 'Copy Shopify URL' }).click();
    await shopify.getByText('Copied').waitFor();
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(url);
    const woo = page.getByRole('region', { name: 'WooCommerce' });
    await expect(text(woo.getByTestId('shop-woocommerce-url'))).resolves.toBe(`${base}/v1/webhooks/woocommerce/${storeId}`);

    const secret = shopify.getByLabel('Shopify signing secret');
    await expect(secret.getAttribute('type')).resolves.toBe('password');
    await secret.fill(SHOPIFY_SECRET);
    await shopify.getByRole('button', { name: 'Save Shopify secret' }).click();
    await page.getByText('Shopify secret saved').waitFor();
    await expect(text(shopify)).resolves.toContain('Configured');
    await expect(shopify.getByLabel('Shopify signing secret').inputValue()).resolves.toBe('');
    expect(await page.content()).not.toContain(SHOPIFY_SECRET);
    const stored = await api('GET', `/v1/stores/${storeId}`);
    expect(stored.body.data).toMatchObject({ shopifyWebhookConfigured: true, woocommerceWebhookConfigured: false });
    expect(JSON.stringify(stored.body)).not.toContain(SHOPIFY_SECRET);

    // After a reload: configured, still nothing of the secret.
    await page.reload();
    await eventually(async () => expect(await text(shopify)).toContain('Configured. It is never shown again'));
    expect(await page.content()).not.toContain(SHOPIFY_SECRET);

    await shopify.getByRole('button', { name: 'Clear Shopify secret' }).click();
    await page.getByText('Shopify secret cleared').waitFor();
    await expect(text(shopify)).resolves.toContain('Not configured');
    expect((await api('GET', `/v1/stores/${storeId}`)).body.data.shopifyWebhookConfigured).toBe(false);
  });

  it('creates an endpoint (secret once), lists its deliveries, re-sends one, deletes it', async () => {
    const page = await newPage(signedIn);
    await page.goto(`${base}/dashboard`);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
    await page.getByText('No endpoints yet').waitFor();

    // No event chosen: the API's error beside the events.
    await page.getByLabel('Endpoint URL').fill(receiver.url('/dashboard'));
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const events = page.getByRole('group', { name: 'Events' });
    await eventually(async () => expect(await events.getAttribute('aria-invalid')).toBe('true'));
    await expect(text(page.locator('#webhook-events-error'))).resolves.toMatch(/events/);
    pages.expected = [/status of 400 .*\/dashboard\/api\/webhooks\)$/];

    await events.getByLabel('conversion.attributed').check();
    await events.getByLabel('refund.recorded').check();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const shown = page.getByTestId('webhook-secret');
    await shown.waitFor();
    const secret = await text(shown);
    expect(secret).toMatch(/^whsec_/);
    await page.getByText('it is shown only this once').waitFor();
    const endpoint = page.getByRole('listitem', { name: receiver.url('/dashboard') });
    await eventually(async () => expect(await text(endpoint)).toContain('Enabled'));
    await expect(text(endpoint)).resolves.toContain('conversion.attributed, refund.recorded');
    await page.reload();
    await endpoint.waitFor();
    expect(await page.content()).not.toContain(secret);

    // A conversion and a refund: two messages for the endpoint.
    const fbclid = `IwAR${Date.now()}`;
    await api('POST', '/v1/track/click', { storeId, fbclid, landingPage: `https://harbor.example/?fbclid=${fbclid}` });
    const conversion = await api('POST', '/v1/track/conversion', {
      storeId,
      eventType: 'Purchase',
      orderId: 'order-hooks-1',
      eventValue: 80,
      currency: 'USD',
      fbclid,
    });
    expect(conversion.body.data.attributed).toBe(true);
    const refund = await api('POST', '/v1/track/refund', {
      storeId,
      orderId: 'order-hooks-1',
      refundId: 're_hooks_1',
      amount: 20,
      currency: 'USD',
    });
    expect(refund.status).toBe(200);
    await receiver.waitFor(
      () => receiver.ofType('refund.recorded').length === 1 && receiver.ofType('conversion.attributed').length === 1,
    );
    // The list shows attempts, each recorded once the receiver's answer is back (after it got the
    // message), and it is read once, when it opens: open it once both are recorded.
    const hooks = await api('GET', '/v1/webhooks');
    const hook = (hooks.body.data.webhooks as Array<{ id: string; url: string }>).find(
      (w) => w.url === receiver.url('/dashboard'),
    );
    expect(hook, 'the endpoint the page created').toBeDefined();
    await eventually(async () => {
      const attempts = await api('GET', `/v1/webhooks/${hook?.id}/deliveries`);
      expect(attempts.status).toBe(200);
      expect(attempts.body.data.deliveries.map((d: { event: string }) => d.event).sort()).toEqual([
        'conversion.attributed',
        'refund.recorded',
      ]);
    });

    await endpoint.getByRole('button', { name: 'Show deliveries' }).click();
    const deliveries = page.getByRole('region', { name: `Deliveries to ${receiver.url('/dashboard')}` });
    const refundRow = deliveries.getByRole('row').filter({ hasText: 'refund.recorded' });
    await eventually(async () => expect(await refundRow.count()).toBe(1));
    await expect(text(refundRow)).resolves.toMatch(/refund\.recorded\s+1\s+Succeeded\s+200/);
    await expect(deliveries.getByRole('row').filter({ hasText: 'conversion.attributed' }).count()).resolves.toBe(1);

    await refundRow.getByRole('button', { name: 'Re-send refund.recorded attempt 1' }).click();
    await deliveries.getByText('Re-sent refund.recorded: attempt 2 succeeded (HTTP 200).').waitFor();
    await eventually(async () => expect(await refundRow.count()).toBe(2));
    await expect(text(refundRow.first())).resolves.toMatch(/refund\.recorded\s+2\s+Succeeded\s+200/);
    const received = receiver.ofType('refund.recorded');
    expect(received).toHaveLength(2);
    expect(received[1]?.headers['webhook-id']).toBe(received[0]?.headers['webhook-id']);
    await screenshot(page, 'webhooks');

    // Delete asks first.
    await endpoint.getByRole('button', { name: 'Delete' }).click();
    const confirm = endpoint.getByRole('group', { name: 'Delete this endpoint?' });
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await expect(confirm.count()).resolves.toBe(0);
    await endpoint.getByRole('button', { name: 'Delete' }).click();
    await confirm.getByRole('button', { name: 'Delete endpoint' }).click();
    await page.getByText('removed: nothing more is sent to it').waitFor();
    await page.getByText('No endpoints yet').waitFor();
    expect((await api('GET', '/v1/webhooks')).body.data.webhooks).toEqual([]);
  });
});
