import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { ok } from '../http/envelope.js';
import { EXAMPLE } from '../http/openapi.js';
import { receiveShopWebhook, type ShopPlatform } from '../shops/webhooks.js';
import type { RouteDeps } from './common.js';
import { WebhookBody, WebhookParams, webhookResponses } from './schemas/shop-webhooks.js';

const header = (request: FastifyRequest, name: string): string | undefined => {
  const value = request.headers[name];
  return typeof value === 'string' ? value : undefined;
};

export const shopWebhookRoutes: FastifyPluginAsyncTypebox<RouteDeps> = async (app, { database, secrets, forwarding }) => {
  // The signature covers the exact bytes: these routes (this plugin only) keep the body as a Buffer.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    ['application/json', 'application/x-www-form-urlencoded'],
    { parseAs: 'buffer' },
    (_request, body, done) => done(null, body),
  );
  const receive = (platform: ShopPlatform, request: FastifyRequest, params: { storeId: string }) =>
    receiveShopWebhook(
      database,
      secrets,
      {
        platform,
        storeId: params.storeId,
        raw: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
        contentType: header(request, 'content-type'),
        signature: header(request, platform === 'shopify' ? 'x-shopify-hmac-sha256' : 'x-wc-webhook-signature'),
        topic: header(request, platform === 'shopify' ? 'x-shopify-topic' : 'x-wc-webhook-topic'),
        deliveryId: header(request, platform === 'shopify' ? 'x-shopify-webhook-id' : 'x-wc-webhook-delivery-id'),
        verified: request.deliveryVerified,
      },
      forwarding,
    );

  // POST /v1/webhooks/shopify/:storeId — Shopify's orders/paid and refunds/create
  app.post(
    '/webhooks/shopify/:storeId',
    {
      config: { public: true, signed: true, preparesOwnBody: true },
      schema: {
        tags: ['Shop webhooks'],
        operationId: 'receiveShopifyWebhook',
        summary: 'Receive a Shopify webhook (orders/paid, refunds/create)',
        description: [
          'The URL to give Shopify as a webhook subscription’s address; no API key: the `X-Shopify-Hmac-Sha256` signature (base64 HMAC-SHA256 of the raw body with the store’s `shopifyWebhookSecret`) authenticates it, checked in constant time. Missing or wrong → 401, nothing stored.',
          '',
          '- `X-Shopify-Topic: orders/paid` → a `Purchase` conversion, attributed like POST /v1/track/conversion: `orderId` is the order’s `id` as exact decimal text, `eventValue` `total_price` in `currency`, time `processed_at`, click ids from `landing_site`’s query, `client_details.browser_ip`/`user_agent`, email/phone/name/address hashed on arrival, `line_items` as products. `test: true` orders are test mode. The same order sent by your backend is the same conversion.',
          '- `X-Shopify-Topic: refunds/create` → a refund (`refundId` the refund’s `id`) of the sum of its successful `refund` transactions.',
          '- Any other topic → 200, ignored. `X-Shopify-Webhook-Id` seen before → the first answer, nothing done again.',
          '- A payload lacking what is needed → 422 `unprocessable_payload` naming the field. Everything is durable before the 200.',
        ].join('\n'),
        params: WebhookParams,
        body: WebhookBody('Shopify', 'the Order of `orders/paid`, the Refund of `refunds/create`'),
        response: webhookResponses({
          recorded: {
            summary: 'orders/paid recorded and attributed',
            data: {
              received: true,
              duplicate: false,
              topic: 'orders/paid',
              livemode: true,
              conversion: { conversionId: EXAMPLE.conversionId, attributed: true, duplicate: false },
            },
          },
          ignored: {
            summary: 'A topic Waytrack does not handle',
            data: { received: true, duplicate: false, topic: 'customers/create', ignored: 'unknown_topic' },
          },
        }),
      },
    },
    async (request) => ok(request, await receive('shopify', request, request.params)),
  );

  // POST /v1/webhooks/woocommerce/:storeId — WooCommerce's order webhooks
  app.post(
    '/webhooks/woocommerce/:storeId',
    {
      config: { public: true, signed: true, preparesOwnBody: true },
      schema: {
        tags: ['Shop webhooks'],
        operationId: 'receiveWoocommerceWebhook',
        summary: 'Receive a WooCommerce webhook (order created / updated)',
        description: [
          'The Delivery URL to give a WooCommerce webhook (topics Order created and Order updated, API version v3); no API key: `X-WC-Webhook-Signature` (base64 HMAC-SHA256 of the raw body with the store’s `woocommerceWebhookSecret`) authenticates it. Missing or wrong → 401, nothing stored. The unsigned ping WooCommerce sends when a webhook is saved (form-encoded `webhook_id=N`) → 200.',
          '',
          '- An order whose `status` is `processing` or `completed` → a `Purchase` (`orderId` its `id`, `eventValue` `total`, time `date_paid_gmt`, `customer_ip_address`/`customer_user_agent`, billing data hashed on arrival, click ids from the order attribution’s entry page, `line_items` as products). Every update of the order after that is the same conversion (`duplicate: true`).',
          '- Each of its `refunds` → a refund (`refundId` the refund’s `id`); status `refunded` → the rest of the order refunded.',
          '- Other statuses and topics → 200, ignored. `X-WC-Webhook-Delivery-ID` seen before → the first answer, nothing done again.',
          '- A payload lacking what is needed → 422 `unprocessable_payload` naming the field. Everything is durable before the 200.',
        ].join('\n'),
        params: WebhookParams,
        body: WebhookBody('WooCommerce', 'the order as the REST API v3 shows it'),
        response: webhookResponses({
          recorded: {
            summary: 'A paid order recorded',
            data: {
              received: true,
              duplicate: false,
              topic: 'order.updated',
              livemode: true,
              conversion: { conversionId: EXAMPLE.conversionId, attributed: false, duplicate: false },
            },
          },
          ping: {
            summary: 'WooCommerce’s ping when the webhook is saved',
            data: { received: true, duplicate: false, topic: null, ignored: 'ping' },
          },
        }),
      },
    },
    async (request) => ok(request, await receive('woocommerce', request, request.params)),
  );
};
