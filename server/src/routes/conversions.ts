import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { tenantOf } from '../http/auth.js';
import { ok } from '../http/envelope.js';
import { describeResponses, EXAMPLE, ID_TOO_LONG, PAGE_ERRORS, STORE_NOT_FOUND } from '../http/openapi.js';
import { listContext, PageQuery } from '../http/pagination.js';
import { conversionPresenter, explainedConversion, listConversionsOf, reattribute } from '../tracking/conversion-views.js';
import { trackConversion } from '../tracking/conversions.js';
import { bearer, DateQuery, Query, type RouteDeps } from './common.js';
import {
  CONVERSION_NOT_FOUND,
  ConversionBody,
  ConversionList,
  ConversionParams,
  ConversionResult,
  EVENT_TYPE,
  EXAMPLE_ATTRIBUTED_TO,
  EXAMPLE_CONVERSION,
} from './schemas/conversions.js';
import { EXAMPLE_EXPLAINED, ExplainedConversion } from './schemas/explanation.js';
import { ForwardingListQuery } from './schemas/forwarding-query.js';
export const conversionRoutes: FastifyPluginAsyncTypebox<RouteDeps> = async (app, { database, cursors, forwarding }) => {
  // POST /v1/track/conversion — record a conversion and attribute it
  app.post(
    '/track/conversion',
    {
      config: { scope: 'conversions:write' },
      schema: {
        tags: ['Tracking'],
        operationId: 'trackConversion',
        summary: 'Record a conversion and attribute it to the click that caused it',
        description: [
          'Records a purchase, lead, signup or any other conversion of a store, attributes it to the ad click that caused it, and forwards it to Meta’s Conversions API when the store is configured for it. Send it from your server (a secret key), e.g. from the order-paid webhook.',
          '',
          '- **Idempotent by orderId:** a conversion is unique per account, mode, store, `eventType` and `orderId`; sending it again (even concurrently, from several instances) returns the original result (same `conversionId`, same attribution) with `duplicate: true`, and its value is never counted twice. An `Idempotency-Key` header also replays the stored response.',
          '- **Attribution:** candidates are the store’s non-bot clicks of the same mode from up to the store’s `attributionWindowDays` (default 7) before the conversion. Signals, strongest first: an explicit reference (`clickId`, `fbclid` or `fbc`: confidence 100), the same `fingerprint`, the same IP and user agent, the same hashed email or phone as an earlier attributed conversion, the same IP. Scores below 100 decay with the click’s age; the conversion is attributed only if the best score reaches the store’s `minConfidence` (default 50). `GET /v1/conversions/{id}` explains the result.',
          '- **Forwarding (`capiSent`):** true only if Meta acknowledged the event before this response (the request waits up to CAPI_SYNC_WAIT_MS, 1.5 s by default); otherwise delivery continues in the background (`capi.status` on GET). Customer data is hashed on arrival and never stored raw.',
          '- **Live vs test:** a `wt_test_` key records test conversions, attributed only to test clicks, never in live metrics, and sent to Meta only with the store’s `capiTestEventCode`.',
        ].join('\n'),
        security: bearer,
        body: ConversionBody,
        response: describeResponses(ConversionResult, {
          description: 'The conversion was recorded and attributed, or (`duplicate: true`) it already was: the original result',
          examples: {
            attributed: {
              summary: 'Recorded and attributed to a click',
              data: {
                conversionId: EXAMPLE.conversionId,
                eventType: 'Purchase',
                attributed: true,
                attributedTo: EXAMPLE_ATTRIBUTED_TO,
                capiSent: true,
                timestamp: EXAMPLE.conversionTime,
                duplicate: false,
              },
            },
            notAttributed: {
              summary: 'Recorded, no click scored the store’s minConfidence',
              data: {
                conversionId: 'conv_01m81b7d2kq0v3pxhw5ajz9tce',
                eventType: 'Lead',
                attributed: false,
                capiSent: false,
                timestamp: EXAMPLE.conversionTime,
                duplicate: false,
              },
            },
            duplicate: {
              summary: 'Duplicate: the original result',
              data: {
                conversionId: EXAMPLE.conversionId,
                eventType: 'Purchase',
                attributed: true,
                attributedTo: EXAMPLE_ATTRIBUTED_TO,
                capiSent: true,
                timestamp: EXAMPLE.conversionTime,
                duplicate: true,
              },
            },
          },
          write: true,
          json: true,
          invalid: {
            missingOrderId: {
              summary: 'orderId absent, null or empty',
              code: 'missing_required_field',
              message: 'orderId is required',
              details: { field: 'orderId', reason: 'required_field_missing' },
            },
            badCurrency: {
              summary: 'Not an ISO 4217 code',
              code: 'invalid_currency',
              message: '"EURO" is not an ISO 4217 currency code',
              details: { field: 'currency', reason: 'invalid_format' },
            },
            stringValue: {
              summary: 'A number sent as a string (never coerced)',
              code: 'invalid_request',
              message: 'eventValue must be a number',
              details: { field: 'eventValue', reason: 'invalid_type' },
            },
            badQuantity: {
              summary: 'A product quantity below 1',
              code: 'invalid_request',
              message: 'products[1].quantity must be >= 1',
              details: { field: 'products[1].quantity', reason: 'out_of_range' },
            },
            futureTimestamp: {
              summary: 'An event time more than 5 minutes ahead',
              code: 'invalid_request',
              message: 'timestamp is more than 5 minutes in the future',
              details: { field: 'timestamp', reason: 'out_of_range' },
            },
          },
          notFound: STORE_NOT_FOUND,
        }),
      },
    },
    async (request) => {
      const result = await trackConversion(database, tenantOf(request), request.body, Date.now(), forwarding);
      // Field names only: the values may be customer data.
      if (result.differences) {
        request.log.warn(
          { conversionId: result.conversionId, differences: result.differences },
          'duplicate conversion differs from the original',
        );
      }
      return ok(request, result);
    },
  );

  // GET /v1/conversions — list conversions, newest event first
  app.get(
    '/conversions',
    {
      config: { scope: 'conversions:read' },
      schema: {
        tags: ['Conversions'],
        operationId: 'listConversions',
        summary: 'List conversions',
        description:
          'The conversions of the key’s account and mode (a test key lists test conversions), newest event first, one page at a time (`limit`, `cursor`), with their attribution and forwarding state. Filters combine; dates are calendar days in the store’s time zone (UTC without `storeId`).',
        security: bearer,
        querystring: Query({
          storeId: Type.Optional(
            Type.String({ maxLength: 64, description: 'Only this store’s conversions', examples: [EXAMPLE.storeId] }),
          ),
          eventType: Type.Optional(EVENT_TYPE),
          attributed: Type.Optional(
            Type.Union([Type.Literal('true'), Type.Literal('false')], {
              description: 'Only attributed (true) or unattributed (false)',
            }),
          ),
          capiStatus: Type.Optional(
            Type.Union([Type.Literal('pending'), Type.Literal('sent'), Type.Literal('failed'), Type.Literal('skipped')], {
              description: 'Forwarding to Meta: pending, sent, failed or skipped',
            }),
          ),
          ...ForwardingListQuery,
          startDate: DateQuery('Inclusive, in the store time zone (UTC without storeId)'),
          endDate: DateQuery('Inclusive, in the store time zone (UTC without storeId)'),
          ...PageQuery,
        }),
        response: describeResponses(ConversionList, {
          description: 'A page of conversions',
          examples: {
            page: {
              summary: 'The last page',
              data: { conversions: [EXAMPLE_CONVERSION], hasMore: false, nextCursor: null },
            },
          },
          invalid: {
            ...PAGE_ERRORS,
            badDate: {
              summary: 'A date that is not YYYY-MM-DD',
              code: 'invalid_request',
              message: 'startDate must be a date in YYYY-MM-DD format',
              details: { field: 'startDate', reason: 'invalid_format' },
            },
            unknownParameter: {
              summary: 'A query parameter the list does not have',
              code: 'invalid_request',
              message: 'Unknown parameter storeID: did you mean storeId?',
              details: { field: 'storeID', reason: 'unknown_field', suggestion: 'storeId' },
            },
          },
          notFound: STORE_NOT_FOUND,
        }),
      },
    },
    async (request) => {
      const auth = tenantOf(request);
      const { limit = 20, cursor, attributed, acknowledged, refunded, ...filters } = request.query;
      const flag = (value: 'true' | 'false' | undefined) => (value === undefined ? undefined : value === 'true');
      const query = { ...filters, attributed: flag(attributed), acknowledged: flag(acknowledged), refunded: flag(refunded) };
      const context = listContext('conversions', auth, query);
      const rows = await listConversionsOf(database, auth, query, { limit, after: cursors.decode(cursor, context) });
      const present = await conversionPresenter(database, rows);
      const page = cursors.page(rows, limit, context, (r) => ({ time: r.event_time, id: r.id }), present);
      return ok(request, { conversions: page.items, hasMore: page.hasMore, nextCursor: page.nextCursor });
    },
  );

  // GET /v1/conversions/:id — one conversion
  app.get(
    '/conversions/:id',
    {
      config: { scope: 'conversions:read' },
      schema: {
        tags: ['Conversions'],
        operationId: 'getConversion',
        summary: 'Get a conversion and why it was (or was not) attributed',
        description:
          'One conversion of the key’s account and mode, with its forwarding state (`capi`) and `attribution`: the winning signal and score and every touchpoint at or above the store’s minConfidence; when not attributed, the reason and the best candidate. A conversion of the other mode is `not_found` (the message says it exists in the other mode).',
        security: bearer,
        params: ConversionParams,
        response: describeResponses(ExplainedConversion, {
          description: 'The conversion, with its attribution explained',
          examples: { attributed: { summary: 'A purchase attributed by an explicit reference', data: EXAMPLE_EXPLAINED } },
          invalid: ID_TOO_LONG,
          notFound: CONVERSION_NOT_FOUND,
        }),
      },
    },
    async (request) => ok(request, await explainedConversion(database, tenantOf(request), request.params.id)),
  );

  // POST /v1/conversions/:id/reattribute — attribute again with the clicks known now
  app.post(
    '/conversions/:id/reattribute',
    {
      config: { scope: 'conversions:write' },
      schema: {
        tags: ['Conversions'],
        operationId: 'reattributeConversion',
        summary: 'Re-attribute a conversion with the clicks known now',
        description:
          'Runs attribution again for one conversion with the clicks recorded since (a click that arrived after its conversion, e.g. from a delayed tag) and the store’s current attributionWindowDays and minConfidence. Idempotent: calling it again changes nothing more; a confidence-100 result never changes. The value is never counted twice and nothing is re-sent to Meta.',
        security: bearer,
        params: ConversionParams,
        response: describeResponses(ExplainedConversion, {
          description: 'The conversion after re-attribution, explained',
          examples: { reattributed: { summary: 'Now attributed to a later-recorded click', data: EXAMPLE_EXPLAINED } },
          write: true,
          invalid: ID_TOO_LONG,
          notFound: CONVERSION_NOT_FOUND,
        }),
      },
    },
    async (request) => ok(request, await reattribute(database, tenantOf(request), request.params.id)),
  );
};
