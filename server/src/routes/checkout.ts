import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { tenantOf } from '../http/auth.js';
import { answerPreflight, CORS_ALLOWED_HEADERS, CORS_ALLOWED_METHODS, CORS_MAX_AGE_SECONDS, varyOnOrigin } from '../http/cors.js';
import { ok } from '../http/envelope.js';
import { describeResponses, EXAMPLE, STORE_NOT_FOUND } from '../http/openapi.js';
import { checkSandboxedPage, recordPixelCheckout } from '../shops/pixel-checkout.js';
import { requireKeyStore } from '../tracking/publishable-click.js';
import { bearer, fillKeyStore, type RouteDeps } from './common.js';
import { CheckoutBody, CheckoutResult } from './schemas/checkout.js';
import { EXAMPLE_ATTRIBUTED_TO } from './schemas/conversions.js';

/**
 * The preflight of the Shopify pixel's request: from its sandboxed frame the Origin is `null`,
 * which the tag's preflight (http/cors.ts) does not answer; here it is answered like any other
 * origin (the real request still needs the store's publishable key and a page on its domain).
 */
async function answerCheckoutPreflight(request: FastifyRequest, reply: FastifyReply) {
  if (request.headers.origin !== 'null') return answerPreflight(request, reply);
  varyOnOrigin(reply);
  reply.header('Access-Control-Allow-Origin', 'null');
  reply.header('Access-Control-Allow-Methods', CORS_ALLOWED_METHODS);
  reply.header('Access-Control-Allow-Headers', CORS_ALLOWED_HEADERS);
  reply.header('Access-Control-Max-Age', String(CORS_MAX_AGE_SECONDS));
  return ok(request, { allowedMethods: CORS_ALLOWED_METHODS.split(', '), allowedHeaders: CORS_ALLOWED_HEADERS.split(', ') });
}

export const checkoutRoutes: FastifyPluginAsyncTypebox<RouteDeps> = async (app, { database, forwarding }) => {
  // POST /v1/track/checkout — the Shopify checkout pixel's completed checkout (api.md §13)
  app.post(
    '/track/checkout',
    {
      config: { scope: 'clicks:write', publishable: 'sandboxed' },
      schema: {
        tags: ['Tracking'],
        operationId: 'trackCheckout',
        summary: 'Record a completed Shopify checkout from the buyer’s browser',
        description: [
          'What the Shopify checkout pixel (docs/integrations.md “Shopify checkout pixel”) sends on `checkout_completed`: a Purchase of the order with the browser’s `visitorId`, `fbp`, `fbc`, `ttp` and the click ids in its cookies; the IP address is the connection’s.',
          '',
          '- **One conversion per order:** the order webhook (POST /v1/webhooks/shopify/{storeId}) and this event for the same order are one conversion, whichever arrives first. Arriving first, this records it with the browser’s value (`source: pixel`) until the webhook replaces money, currency, products and customer data with the shop’s. Arriving later, it answers `duplicate: true`, fills in the browser evidence the conversion lacked (`filled`) and re-attributes it when that evidence makes a click more probable (`reattributed`); the recorded money stays.',
          '- **From Shopify’s pixel sandbox:** publishable keys (`wt_pk_…`) may call it from an allowed Origin, or with `Origin: null` (the sandbox’s frame has no origin of its own); then `eventSourceUrl` (the checkout page) must be on the store’s domain or one of the key’s extra origins. `storeId` may be left out with a publishable key.',
        ].join('\n'),
        security: bearer,
        body: CheckoutBody,
        response: describeResponses(CheckoutResult, {
          description:
            'The Purchase was recorded, or (`duplicate: true`) the order already was: its conversion, with what this event added',
          examples: {
            recorded: {
              summary: 'The pixel arrived first',
              data: {
                conversionId: EXAMPLE.conversionId,
                eventType: 'Purchase',
                attributed: true,
                attributedTo: EXAMPLE_ATTRIBUTED_TO,
                capiSent: false,
                timestamp: EXAMPLE.conversionTime,
                duplicate: false,
                reattributed: false,
              },
            },
            merged: {
              summary: 'The webhook arrived first; the browser’s ids re-attributed it',
              data: {
                conversionId: EXAMPLE.conversionId,
                eventType: 'Purchase',
                attributed: true,
                attributedTo: EXAMPLE_ATTRIBUTED_TO,
                capiSent: false,
                timestamp: EXAMPLE.conversionTime,
                duplicate: true,
                filled: ['visitorId', 'fbc'],
                reattributed: true,
              },
            },
          },
          write: true,
          json: true,
          invalid: {
            notAnOrderId: {
              summary: 'orderId is not a Shopify order id',
              code: 'invalid_request',
              message:
                'orderId must be the Shopify order id: its decimal digits, or a gid://shopify/Order/<id> or gid://shopify/OrderIdentity/<id>',
              details: { field: 'orderId', reason: 'invalid_format' },
            },
          },
          forbidden: {
            pageNotAllowed: {
              summary: 'From a sandboxed frame, a checkout page off the store’s domain',
              code: 'forbidden',
              message:
                "From a sandboxed frame (Origin: null) the checkout's page (eventSourceUrl) must be on the store's domain or one of the key's extra origins",
              details: { field: 'eventSourceUrl', reason: 'origin_not_allowed' },
            },
          },
          notFound: STORE_NOT_FOUND,
        }),
      },
      preValidation: fillKeyStore,
    },
    async (request) => {
      const auth = tenantOf(request);
      // The connection is the buyer's browser only with a publishable key (a secret key's is a server).
      const visitorIp = auth.publishable ? request.ip : '';
      if (auth.publishable) {
        requireKeyStore(request.body.storeId, auth.publishable.storeId);
        checkSandboxedPage(auth.publishable.origin, request.body.eventSourceUrl, auth.publishable.rule);
      }
      return ok(request, await recordPixelCheckout(database, auth, request.body, visitorIp, Date.now(), forwarding));
    },
  );

  // OPTIONS /v1/track/checkout — CORS preflight of the pixel, from an origin or from Shopify's sandbox (Origin: null)
  app.options('/track/checkout', { config: { public: true }, schema: { hide: true } }, answerCheckoutPreflight);
};
