import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { tenantOf } from '../http/auth.js';
import { ok } from '../http/envelope.js';
import { CURRENCY_CODE, describeResponses, EXAMPLE, STORE_NOT_FOUND } from '../http/openapi.js';
import { trackRefundWithForwarding } from '../tracking/refunds.js';
import { bearer, ClientTime, type RouteDeps } from './common.js';

export const RefundBody = Type.Object(
  {
    storeId: Type.String({
      minLength: 1,
      maxLength: 64,
      description: 'The store of the refunded order (active, of the key’s account)',
      examples: [EXAMPLE.storeId],
    }),
    orderId: Type.String({
      minLength: 1,
      maxLength: 255,
      description:
        'The orderId of a recorded conversion of this store and mode: its Purchase, or when the order has no Purchase, its only conversion. None → 404 `conversion_not_found`.',
      examples: ['1001'],
    }),
    refundId: Type.String({
      minLength: 1,
      maxLength: 255,
      description:
        'Your id of the refund, unique per store and mode: sending it again returns the first result with `duplicate: true` and is never counted twice.',
      examples: ['re_1001_1'],
    }),
    amount: Type.Optional(
      Type.Number({
        exclusiveMinimum: 0,
        maximum: 1e12,
        description:
          'How much is refunded, in `currency`: more than 0 and at most what is left unrefunded (else `invalid_request` with `details.remaining`). Omitted: the whole rest. Exact in the currency’s minor units: less than one minor unit is `out_of_range` (`x-rules: minor-unit`).',
        'x-rules': ['minor-unit'],
        examples: [19.99],
      }),
    ),
    currency: Type.String({
      minLength: 1,
      maxLength: 16,
      ...CURRENCY_CODE,
      'x-error-code': 'invalid_currency',
      description:
        'ISO 4217 code (any case), else `invalid_currency`; must be the conversion’s currency, else `invalid_request` (`reason: currency_mismatch`, `details.expected`).',
      examples: ['EUR'],
    }),
    timestamp: ClientTime(
      'When the refund happened: ISO 8601 with an offset; default now. It counts in metrics on its own day.',
      '2026-11-24T15:30:00.000Z',
    ),
    reason: Type.Optional(
      Type.String({ maxLength: 500, description: 'Free text, kept with the refund', examples: ['Wrong size'] }),
    ),
  },
  {
    description: 'A refund of a recorded conversion. Unknown fields are ignored. A field sent as null or "" counts as absent.',
    'x-examples': {
      partial: {
        summary: 'A partial refund',
        value: {
          storeId: EXAMPLE.storeId,
          orderId: '1001',
          refundId: 're_1001_1',
          amount: 19.99,
          currency: 'EUR',
          timestamp: '2026-11-24T15:30:00.000Z',
          reason: 'Wrong size',
        },
      },
      full: {
        summary: 'Everything left (no amount)',
        value: { storeId: EXAMPLE.storeId, orderId: '1001', refundId: 're_1001_2', currency: 'EUR' },
      },
    },
  },
);

const RefundDelivery = Type.Object(
  {
    status: Type.Union([Type.Literal('pending'), Type.Literal('sent'), Type.Literal('failed'), Type.Literal('skipped')], {
      description:
        'pending (queued or being retried), sent (acknowledged), failed (refused or given up), skipped (never sent: `lastError` says why)',
    }),
    attempts: Type.Integer({ minimum: 0, description: 'Requests made for it' }),
    lastError: Type.Optional(Type.String({ description: 'The platform’s last error, or why it was skipped' })),
    sentAt: Type.Optional(Type.String({ format: 'date-time', description: 'When the platform acknowledged it' })),
    adjustmentType: Type.Optional(
      Type.Union([Type.Literal('RETRACTION'), Type.Literal('RESTATEMENT')], {
        description: 'Google Ads: RETRACTION (fully refunded) or RESTATEMENT (the value left)',
      }),
    ),
  },
  { additionalProperties: false },
);

export const RefundForwarding = Type.Object(
  {
    meta: Type.Optional(RefundDelivery),
    google_ads: Type.Optional(RefundDelivery),
    tiktok: Type.Optional(RefundDelivery),
  },
  {
    description:
      'Where this refund is forwarded, each platform’s state now (send the same refundId again to see it later): Google Ads gets a conversion adjustment when it received (or will receive) the conversion; Meta and TikTok a refund event only with `refundEvent` set on their destination. A platform without an entry gets nothing for this refund.',
  },
);

export const RefundResult = Type.Object({
  refundId: Type.String({ description: 'Your refund id', examples: ['re_1001_1'] }),
  conversionId: Type.String({ description: 'The refunded conversion', examples: [EXAMPLE.conversionId] }),
  amount: Type.Number({ description: 'This refund, exact, in the conversion’s currency', examples: [19.99] }),
  refundedTotal: Type.Number({ description: 'All refunds of the conversion up to and including this one', examples: [19.99] }),
  remaining: Type.Number({ description: 'What is left unrefunded after this refund', examples: [29.91] }),
  duplicate: Type.Boolean({ description: 'true when this refundId was already recorded: the first result' }),
  differences: Type.Optional(
    Type.Array(Type.String(), {
      description: 'Only on a duplicate whose request differs from the original: the differing field names; the original is kept',
      examples: [['amount']],
    }),
  ),
  forwarding: RefundForwarding,
});

export const refundRoutes: FastifyPluginAsyncTypebox<RouteDeps> = async (app, { database }) => {
  // POST /v1/track/refund — record a refund of a conversion
  app.post(
    '/track/refund',
    {
      config: { scope: 'conversions:write' },
      schema: {
        tags: ['Tracking'],
        operationId: 'trackRefund',
        summary: 'Record a (partial or full) refund of a recorded conversion',
        description: [
          'Records a refund of an order recorded as a conversion, so that revenue, ROAS and breakdowns are net of it.',
          '',
          '- **Which conversion:** the order’s `Purchase`; when the order has no Purchase, its only conversion (several → `invalid_request`, `reason: ambiguous_order`). None → 404 `conversion_not_found`.',
          '- **Idempotent by refundId** (per store and mode): sending it again, even concurrently, returns the first result with `duplicate: true` (and `differences` when the body differs); it is never counted twice.',
          '- **Ad platforms:** Google Ads gets a conversion adjustment (RETRACTION when fully refunded, else RESTATEMENT with the value left), sent after the conversion itself and in the order of the refunds; Meta and TikTok get a custom event with the negative amount only with `refundEvent` set on their destination. `forwarding` shows each one’s state.',
          '- **Never more than the order:** `amount` must be at most what is left (`details.remaining` says how much); two concurrent refunds can never together exceed the conversion’s value. Money is exact (minor units).',
        ].join('\n'),
        security: bearer,
        body: RefundBody,
        response: describeResponses(RefundResult, {
          description: 'The refund was recorded, or (`duplicate: true`) it already was: the first result',
          examples: {
            partial: {
              summary: 'A partial refund',
              data: {
                refundId: 're_1001_1',
                conversionId: EXAMPLE.conversionId,
                amount: 19.99,
                refundedTotal: 19.99,
                remaining: 29.91,
                duplicate: false,
                forwarding: { google_ads: { status: 'pending', attempts: 0, adjustmentType: 'RESTATEMENT' } },
              },
            },
            duplicate: {
              summary: 'The same refundId again, with another amount',
              data: {
                refundId: 're_1001_1',
                conversionId: EXAMPLE.conversionId,
                amount: 19.99,
                refundedTotal: 19.99,
                remaining: 29.91,
                duplicate: true,
                differences: ['amount'],
                forwarding: {
                  google_ads: {
                    status: 'sent',
                    attempts: 1,
                    sentAt: '2026-11-24T15:30:02.120Z',
                    adjustmentType: 'RESTATEMENT',
                  },
                },
              },
            },
          },
          write: true,
          json: true,
          invalid: {
            overRefund: {
              summary: 'More than is left unrefunded',
              code: 'invalid_request',
              message: 'amount exceeds what is left unrefunded (29.91 EUR)',
              details: { field: 'amount', reason: 'out_of_range', remaining: 29.91 },
            },
            otherCurrency: {
              summary: 'Not the conversion’s currency',
              code: 'invalid_request',
              message: 'currency must be the conversion’s currency, EUR',
              details: { field: 'currency', reason: 'currency_mismatch', expected: 'EUR' },
            },
            badCurrency: {
              summary: 'Not an ISO 4217 code',
              code: 'invalid_currency',
              message: '"EURO" is not an ISO 4217 currency code',
              details: { field: 'currency', reason: 'invalid_format' },
            },
          },
          notFound: {
            ...STORE_NOT_FOUND,
            conversionNotFound: {
              summary: 'No conversion with that orderId in this store and mode',
              code: 'conversion_not_found',
              message: 'No conversion with orderId "1001" in this store in live mode',
              details: { field: 'orderId', reason: 'unknown_value' },
            },
          },
        }),
      },
    },
    async (request) => {
      const tenant = tenantOf(request);
      const result = await trackRefundWithForwarding(database, tenant, request.body);
      if (result.differences) {
        request.log.warn(
          { refundId: result.refundId, differences: result.differences },
          'duplicate refund differs from the original',
        );
      }
      return ok(request, result);
    },
  );
};
