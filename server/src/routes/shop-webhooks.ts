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
      Date.now(),
      request.log,
    );

  // POST /v1/webhooks/shopify/:storeId — Shopify's orders/create, orders/paid and refunds/create
  app.post(
    '/webhooks/shopify/:storeId',
    {
      config: { public: true, signed: true, preparesOwnBody: true },
      schema: {
        tags: ['Shop webhooks'],
        operationId: 'receiveShopifyWebhook',
        summary: 'Receive a Shopify webhook (orders/create, orders/paid, refunds/create)',
        description: [
          'The URL to give Shopify as a webhook subscription’s address; no API key: the `X-Shopify-Hmac-Sha256` signature (base64 HMAC-SHA256 of the raw body with the store’s `shopifyWebhookSecret`) authenticates it, checked in constant time over the raw bytes before anything reads them. Missing or wrong → 401, nothing stored. The body is then read as the API reads bodies: UTF-8 only (else 400 `invalid_unicode`), a byte order mark skipped, ids above 2^53 kept digit for digit.',
          '',
          '- `X-Shopify-Topic: orders/paid` → a `Purchase` conversion, attributed like POST /v1/track/conversion: `orderId` is the order’s `id` as exact decimal text, `eventValue` `total_price` in `currency` (the shop’s; an exact decimal, 0 to 1e12, else 422 naming `total_price`), time `processed_at`, click ids from `landing_site`’s query, `client_details.browser_ip`/`user_agent`, email/phone/name/address hashed on arrival, `line_items` as products. An order paid in another currency than the shop’s is recorded with both totals (`total_price_set.shop_money` and `presentment_money`; `conversion.presentment` in the answer). `test: true` orders are test mode. The same order sent by your backend is the same conversion.',
          '- `X-Shopify-Topic: orders/create` → the same `Purchase` when `financial_status` is `paid`, else 200 `ignored: not_paid` and nothing recorded. Subscribed together with orders/paid, a paid order is one conversion: whichever delivery comes second answers `conversion.duplicate: true`.',
          '- `X-Shopify-Topic: refunds/create` → a refund (`refundId` the refund’s `id`) of the sum of its successful `refund` transactions. Refunded in the buyer’s currency, it is applied in the order’s at Shopify’s own amounts (the refund’s `*_set` `shop_money` / `presentment_money`, else the order’s two totals): `amount` and `currency` as recorded, `presentment` as given.',
          '- A refund that cannot apply is skipped, 200, with `skipped`: `order_not_recorded`, `nothing_left`, `over_remaining` (with `remaining`), `currency_mismatch`, `ambiguous_order` or `below_minor_unit`, and a warn log line (store, order, refund, reason).',
          '- Optional data that cannot be used (an IP address that is not one, a malformed click id, a time more than 5 minutes ahead, a field over the API’s length) is left out with an entry in `warnings`; the order is recorded.',
          '- Any other topic → 200, ignored. The same event again (topic, resource id and exact body; not `X-Shopify-Webhook-Id` alone) → the first answer with `duplicate: true`, nothing done again.',
          '- A payload lacking what is needed (id, total, currency) → 422 `unprocessable_payload` naming the field, nothing stored. Everything is durable before the 200.',
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
          notPaid: {
            summary: 'orders/create of an order not paid yet',
            data: { received: true, duplicate: false, topic: 'orders/create', ignored: 'not_paid' },
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
          'The Delivery URL to give a WooCommerce webhook (topics Order created and Order updated, API version v3); no API key: `X-WC-Webhook-Signature` (base64 HMAC-SHA256 of the raw body with the store’s `woocommerceWebhookSecret`) authenticates it, checked over the raw bytes first. Missing or wrong → 401, nothing stored. The unsigned ping WooCommerce sends when a webhook is saved (form-encoded `webhook_id=N`) → 200. The body is read as the API reads bodies: UTF-8 only (else 400 `invalid_unicode`), a byte order mark skipped.',
          '',
          '- An order whose `status` is `processing` or `completed` → a `Purchase` (`orderId` its `id`, `eventValue` `total` as an exact decimal, 0 to 1e12, else 422 naming `total`; time `date_paid_gmt`, `customer_ip_address`/`customer_user_agent`, billing data hashed on arrival, click ids from the order attribution’s entry page, `line_items` as products). Every update of the order after that is the same conversion (`duplicate: true`).',
          '- Each of its `refunds` → a refund (`refundId` the refund’s `id`); status `refunded` → the rest of the order refunded. The delivery is recorded whole: a refund that cannot apply is skipped, 200, with `skipped` (`over_remaining` with `remaining`, `nothing_left`, `order_not_recorded`, …) and a warn log line, the order still recorded.',
          '- Optional data that cannot be used (`customer_ip_address` `unknown`, a malformed click id, a time more than 5 minutes ahead) is left out with an entry in `warnings`, and of a list of addresses the first is used, with one; the order is recorded.',
          '- Other statuses and topics → 200, ignored. The same event again (topic, order id and exact body) → the first answer, `duplicate: true`. `X-WC-Webhook-Delivery-ID` is not used: WooCommerce makes it from the webhook id and the current second, so two updates within a second share it.',
          '- A payload lacking what is needed (id, status, total, currency) → 422 `unprocessable_payload` naming the field, nothing stored. Everything is durable before the 200.',
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
          skippedRefund: {
            summary: 'An order with a refund over what is left, and an address that is not one',
            data: {
              received: true,
              duplicate: false,
              topic: 'order.updated',
              livemode: true,
              conversion: { conversionId: EXAMPLE.conversionId, attributed: false, duplicate: false },
              refunds: [
                { refundId: '731', conversionId: EXAMPLE.conversionId, amount: 10, currency: 'EUR', duplicate: false },
                { refundId: '732', skipped: 'over_remaining', remaining: 19.35 },
              ],
              warnings: [
                {
                  field: 'customer_ip_address',
                  reason: 'invalid_format',
                  message: 'customer_ip_address is not an IPv4 or IPv6 address: left out',
                },
              ],
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
