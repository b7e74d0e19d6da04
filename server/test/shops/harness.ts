import { createHmac } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { type ApiResponse, call, type TestContext } from '../helpers.js';

/** Sending signed shop deliveries to one store, as Shopify and WooCommerce send them. */

export const SHOPIFY_SECRET = 'shpss_0123456789abcdef0123456789abcdef';
export const WOO_SECRET = 'woo-secret with spaces & symbols!';

const signBytes = (raw: Buffer, secret: string) => createHmac('sha256', secret).update(raw).digest('base64');

let seq = 0;

/** The answer of one injected request, its body parsed. */
async function inject(app: FastifyInstance, url: string, raw: Buffer, headers: Record<string, string>): Promise<ApiResponse> {
  const res = await app.inject({ method: 'POST', url, headers, payload: raw });
  return { status: res.statusCode, body: res.json(), headers: res.headers, raw: res };
}

export function shopDeliveries(ctx: TestContext, storeId: string, app: FastifyInstance = ctx.app) {
  const bytes = (body: string | Buffer) => (Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8'));
  return {
    /** A Shopify delivery of `body` (JSON text or bytes) under `topic`; a fresh webhook id unless given. */
    shopify(body: string | Buffer, topic: string, options: { id?: string; signature?: string } = {}) {
      const raw = bytes(body);
      return inject(app, `/v1/webhooks/shopify/${storeId}`, raw, {
        'content-type': 'application/json',
        'x-shopify-topic': topic,
        'x-shopify-webhook-id': options.id ?? `0b2d6d5c-4a53-4a3e-9d1e-${++seq}`,
        'x-shopify-shop-domain': 'acme.myshopify.com',
        'x-shopify-hmac-sha256': options.signature ?? signBytes(raw, SHOPIFY_SECRET),
      });
    },
    /** A WooCommerce delivery of an order (an object, JSON text or bytes); a fresh delivery id unless given. */
    woo(body: unknown, options: { topic?: string; delivery?: string } = {}) {
      const raw = typeof body === 'string' || Buffer.isBuffer(body) ? bytes(body) : Buffer.from(JSON.stringify(body));
      return inject(app, `/v1/webhooks/woocommerce/${storeId}`, raw, {
        'content-type': 'application/json',
        'x-wc-webhook-source': 'https://shop.example.com/',
        'x-wc-webhook-topic': options.topic ?? 'order.updated',
        'x-wc-webhook-resource': 'order',
        'x-wc-webhook-event': 'updated',
        'x-wc-webhook-id': '12',
        'x-wc-webhook-delivery-id': options.delivery ?? `wcd${++seq}`,
        'x-wc-webhook-signature': signBytes(raw, WOO_SECRET),
      });
    },
    /** The store's conversions of `orderId` (newest first) as GET /v1/conversions lists them. */
    async conversionsOf(orderId: string, key = ctx.a.live): Promise<Array<Record<string, unknown>>> {
      const res = await call(app, 'GET', `/v1/conversions?storeId=${storeId}&limit=100`, { key });
      return (res.body.data.conversions as Array<Record<string, unknown>>).filter((c) => c.orderId === orderId);
    },
  };
}

/** A fresh order id for each use (WooCommerce's are small integers). */
export const nextOrderId = () => 20_000 + ++seq;
