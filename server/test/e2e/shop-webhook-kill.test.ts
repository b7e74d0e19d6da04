import { createHmac } from 'node:crypto';
import https from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINE } from '../engine.js';
import { shopifyOrderJson } from '../shops/payloads.js';
import { cli, databaseForProcesses, request, type ServerProcess, serve } from './process.js';

/**
 * kill -9 between receipt and acknowledgement of a shop webhook (api.md §9: durable first, then
 * acknowledged): the real server is killed with SIGKILL once the order's conversion is durable
 * and before the delivery is recorded or answered (crash point `shop-webhook`, server/src/crash-point.ts).
 * Shopify, unanswered, delivers the same webhook again to the restarted server: the order is
 * there exactly once, and a third delivery is answered from the delivery record.
 */
const SECRET = 'kill-test-shopify-secret';

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary response shapes
function deliver(server: ServerProcess, storeId: string, raw: string, webhookId: string): Promise<{ status: number; body: any }> {
  const signature = createHmac('sha256', SECRET).update(raw).digest('base64');
  return new Promise((resolve) => {
    const req = https.request(
      new URL(`/v1/webhooks/shopify/${storeId}`, server.url),
      {
        method: 'POST',
        ca: server.ca,
        servername: 'localhost',
        timeout: 15_000,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(raw),
          'x-shopify-topic': 'orders/paid',
          'x-shopify-webhook-id': webhookId,
          'x-shopify-hmac-sha256': signature,
        },
      },
      (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          data += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data ? JSON.parse(data) : undefined }));
        res.on('error', () => resolve({ status: 0, body: undefined }));
      },
    );
    // The kill: the connection is reset with no answer.
    req.on('error', () => resolve({ status: 0, body: undefined }));
    req.end(raw);
  });
}

describe(`kill -9 between a shop webhook's receipt and its acknowledgement (${ENGINE})`, () => {
  const testDb = databaseForProcesses('waytrack-webhook-kill-');
  const env: Record<string, string> = {};
  let key: string;
  let storeId: string;
  let server: ServerProcess | undefined;

  beforeAll(async () => {
    Object.assign(env, testDb.env);
    key = JSON.parse(cli(['account', 'create', '--email', 'kill@example.com', '--json'], env).stdout).keys.live as string;
    server = await serve(env);
    const store = await request(server, 'POST', '/v1/stores', {
      key,
      body: { name: 'Kill', domain: 'kill.example.com', platform: 'shopify', shopifyWebhookSecret: SECRET },
    });
    expect(store.status).toBe(201);
    storeId = store.body.data.id as string;
    expect(await server.stop('SIGTERM')).toBe(0);
    server = undefined;
  }, 120_000);

  afterAll(async () => {
    await server?.stop('SIGKILL');
  });

  it('the redelivery after the kill records the order exactly once', async () => {
    const orderId = '9007199254740995555';
    const raw = shopifyOrderJson({ id: orderId });
    server = await serve({ ...env, WAYTRACK_TEST_CRASH_AT: 'shop-webhook' });
    const killed = server;
    const exited = new Promise((resolve) => killed.child.once('exit', (_code, signal) => resolve(signal)));
    const unanswered = await deliver(killed, storeId, raw, 'kill-delivery-1');
    expect(unanswered.status, killed.output()).toBe(0);
    expect(await exited).toBe('SIGKILL');
    expect(killed.output()).toContain('crash point shop-webhook reached');

    server = await serve(env);
    const again = await deliver(server, storeId, raw, 'kill-delivery-1');
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    // Durable before the kill: the redelivery finds the order already recorded.
    expect(again.body.data.conversion.duplicate).toBe(true);
    const third = await deliver(server, storeId, raw, 'kill-delivery-1');
    expect(third.body.data).toEqual({ ...again.body.data, duplicate: true });
    const list = await request(server, 'GET', `/v1/conversions?storeId=${storeId}&limit=100`, { key });
    expect(list.body.data.conversions.filter((c: { orderId: string }) => c.orderId === orderId)).toHaveLength(1);
  }, 120_000);
});
