import { Type } from 'typebox';
import { describeResponses, EXAMPLE, errorResponse, STORE_NOT_FOUND } from '../../http/openapi.js';

/** Schemas and examples of POST /v1/webhooks/shopify|woocommerce/:storeId (routes/shop-webhooks.ts). */

export const WebhookParams = Type.Object({
  storeId: Type.String({
    minLength: 1,
    maxLength: 64,
    description: 'The Waytrack store the shop’s webhooks are for (its id is in the webhook URL you give the shop)',
    examples: [EXAMPLE.storeId],
  }),
});

/**
 * The body is the shop's own JSON, read as raw bytes (the signature covers them exactly): this
 * schema documents it and is not used to validate (`x-raw-body`, http/validation.ts).
 */
export const WebhookBody = (shop: string, what: string) =>
  Type.Object(
    {},
    {
      additionalProperties: true,
      'x-raw-body': true,
      description: `${shop}’s webhook payload as ${shop} sends it (${what}), signed over its exact bytes. Fields Waytrack does not use are ignored.`,
    },
  );

const Money = (description: string) =>
  Type.Object(
    {
      amount: Type.Number({ description: 'Exact, in currency', examples: [46] }),
      currency: Type.String({ description: 'ISO 4217', examples: ['EUR'] }),
    },
    { description },
  );

const RefundOutcome = Type.Object({
  refundId: Type.String({ description: 'The shop’s refund id', examples: ['929361465'] }),
  conversionId: Type.Optional(Type.String({ description: 'The refunded conversion', examples: [EXAMPLE.conversionId] })),
  amount: Type.Optional(Type.Number({ description: 'The amount recorded, in `currency`', examples: [10] })),
  currency: Type.Optional(Type.String({ description: 'The currency it was recorded in: the conversion’s', examples: ['USD'] })),
  presentment: Type.Optional(
    Money(
      'Shopify: the refund as given, in the buyer’s currency, when it was converted into the order’s at Shopify’s own amounts',
    ),
  ),
  duplicate: Type.Optional(Type.Boolean({ description: 'The refund was recorded before (the first result)' })),
  skipped: Type.Optional(
    Type.Union(
      [
        Type.Literal('order_not_recorded'),
        Type.Literal('nothing_left'),
        Type.Literal('over_remaining'),
        Type.Literal('currency_mismatch'),
        Type.Literal('ambiguous_order'),
        Type.Literal('below_minor_unit'),
      ],
      {
        description:
          'Only when not recorded (the rest of the delivery is): `order_not_recorded` (no conversion of the order in this store and mode), `nothing_left` (refunded in full already), `over_remaining` (more than is left: see `remaining`), `currency_mismatch` (not in the conversion’s currency, and no amounts of Shopify’s to convert it with), `ambiguous_order` (no Purchase but several conversions), `below_minor_unit` (less than the currency’s smallest unit)',
      },
    ),
  ),
  remaining: Type.Optional(
    Type.Number({
      description: 'With `over_remaining`: what is left to refund, in the conversion’s currency',
      examples: [19.35],
    }),
  ),
});

const Warning = Type.Object({
  field: Type.String({ description: 'The payload’s field, as the shop names it', examples: ['customer_ip_address'] }),
  reason: Type.Union([Type.Literal('invalid_format'), Type.Literal('out_of_range')]),
  message: Type.String({ examples: ['customer_ip_address is not an IPv4 or IPv6 address: left out'] }),
});

export const WebhookAnswer = Type.Object({
  received: Type.Literal(true),
  duplicate: Type.Boolean({
    description:
      'This event (topic, resource id and exact body) was answered before: the first answer, nothing done again. Not the shop’s delivery-id header, which WooCommerce reuses within a second.',
  }),
  topic: Type.Union([Type.String(), Type.Null()], { description: 'The topic header as sent', examples: ['orders/paid'] }),
  ignored: Type.Optional(
    Type.String({
      description:
        'Why nothing was recorded: `ping` (WooCommerce’s test delivery), `unknown_topic`, `not_paid` (an order neither paid nor refunded; Shopify’s orders/create of an order whose financial_status is not paid), `no_money_refunded` (a refund that only restocks)',
      examples: ['unknown_topic'],
    }),
  ),
  livemode: Type.Optional(
    Type.Boolean({ description: 'The mode it was recorded in (Shopify: `test: true` orders are test mode)' }),
  ),
  conversion: Type.Optional(
    Type.Object({
      conversionId: Type.String({ examples: [EXAMPLE.conversionId] }),
      attributed: Type.Boolean(),
      duplicate: Type.Boolean({
        description: 'The order was recorded before (by an earlier delivery, by your backend or by the Shopify checkout pixel)',
      }),
      filled: Type.Optional(
        Type.Array(Type.String(), {
          description:
            'On a duplicate: what this delivery filled in on the recorded conversion (docs/api.md "Shopify checkout pixel"): the shop’s `eventValue`, `currency`, `products`, `customerData` in place of the pixel’s, and browser evidence it lacked (`ipAddress`, `userAgent`, `fbc`, …)',
          examples: [['eventValue', 'customerData', 'userAgent']],
        }),
      ),
      reattributed: Type.Optional(
        Type.Boolean({
          description: 'On a duplicate: whether the evidence it added re-attributed the conversion to a more probable click',
        }),
      ),
      presentment: Type.Optional(
        Money('Shopify: what the buyer paid in their own currency, when it is not the shop’s (recorded beside the order)'),
      ),
    }),
  ),
  refunds: Type.Optional(Type.Array(RefundOutcome)),
  warnings: Type.Optional(
    Type.Array(Warning, {
      description:
        'Optional data of the payload that could not be used: left out (or, for a list of addresses, its first one used); the rest was recorded',
    }),
  ),
});

const UNMAPPABLE = errorResponse(
  'The payload is signed but lacks what a conversion or refund needs (code `unprocessable_payload`, `details.field` names the payload field). Redelivering the same payload fails the same way.',
  {
    missingTotal: {
      summary: 'An order without total_price',
      code: 'unprocessable_payload',
      message: 'total_price is missing',
      details: { field: 'total_price', reason: 'required_field_missing' },
    },
    overRange: {
      summary: 'A total over the API’s 1e12',
      code: 'unprocessable_payload',
      message: 'total is over 1e12, the largest amount Waytrack records',
      details: { field: 'total', reason: 'out_of_range' },
    },
  },
);

const BAD_SIGNATURE = errorResponse(
  'The signature header is missing, or does not verify with the store’s secret for this shop (unknown stores and stores without the secret answer the same); nothing is stored',
  {
    invalidSignature: {
      summary: 'Signed with another secret',
      code: 'unauthorized',
      message: "X-Shopify-Hmac-Sha256 does not verify with this store's shopify webhook secret (or the store has none)",
      details: { field: 'X-Shopify-Hmac-Sha256', reason: 'invalid_signature' },
    },
  },
);

/** Over the store's limit for signed deliveries, or the client's for unverified ones (http/shop-webhook-limits.ts). */
const TOO_MANY = errorResponse(
  'Over the store’s limit for signed deliveries (`SHOP_WEBHOOK_RATE_LIMIT_RPS`), or the client address’s for deliveries that do not verify: wait `Retry-After` seconds (the shops retry by themselves)',
  {
    rateLimited: {
      summary: 'Over the rate limit',
      code: 'rate_limit_exceeded',
      message: 'Too many requests; retry after 1 s',
      details: { retryAfterSeconds: 1 },
    },
  },
  { 'Retry-After': { type: 'integer', description: 'Whole seconds to wait before retrying', examples: [1] } },
);

export function webhookResponses(examples: Parameters<typeof describeResponses>[1]['examples']) {
  const responses = describeResponses(WebhookAnswer, {
    description: 'Received: recorded (durably, before this answer), already answered (`duplicate`), or ignored with the reason',
    examples,
    public: true,
    write: true,
    json: true,
    invalid: {
      badJson: {
        summary: 'A signed body that is not JSON',
        code: 'invalid_request',
        message: 'The request body is not valid JSON',
        details: { reason: 'malformed_json' },
      },
      notUtf8: {
        summary: 'A signed body that is not UTF-8 (read as the API reads bodies)',
        code: 'invalid_request',
        message: 'The request body is not valid UTF-8 (an invalid byte sequence at byte 118); send JSON text encoded as UTF-8',
        details: { reason: 'invalid_unicode' },
      },
    },
    notFound: {
      ...STORE_NOT_FOUND,
    },
  });
  // Typed as the described map: the 401, 422 and 429 added here are errors, which every route serializes alike.
  return { ...responses, 401: BAD_SIGNATURE, 422: UNMAPPABLE, 429: TOO_MANY } as typeof responses;
}
