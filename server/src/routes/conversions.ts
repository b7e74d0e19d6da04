import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { tenantOf } from '../http/auth.js';
import { ok } from '../http/envelope.js';
import {
  CURRENCY_CODE,
  describeResponses,
  type ErrorExample,
  EXAMPLE,
  HTTP_URL,
  ID_TOO_LONG,
  IP_ADDRESS,
  PAGE_ERRORS,
  STORE_NOT_FOUND,
} from '../http/openapi.js';
import { listContext, PageQuery } from '../http/pagination.js';
import {
  explainedConversion,
  listConversionsOf,
  presentConversion,
  reattribute,
  trackConversion,
} from '../tracking/conversions.js';
import { FBCLID_PATTERN, OTHER_CLICK_ID_FIELDS } from './clicks.js';
import { bearer, ClientTime, DateQuery, ForwardingState, Nullable, Query, type RouteDeps, Timestamp } from './common.js';
import { Forwarding } from './destinations.js';
import { ConsentBody, ConsentShown, EXAMPLE_CONSENT, LimitedDataUseBody, LimitedDataUseShown } from './schemas/consent.js';
import { ForwardingListQuery } from './schemas/forwarding-query.js';
import { EXAMPLE_MATCH_QUALITY, FxRecorded, MatchQualityMap } from './schemas/quality.js';

const EVENT_TYPE = Type.String({
  pattern: '^[A-Za-z][A-Za-z0-9_]{0,49}$',
  description:
    "A Meta standard event name (Purchase, Lead, CompleteRegistration, AddToCart, InitiateCheckout, AddPaymentInfo, Subscribe, StartTrial, ViewContent, Search, Contact, SubmitApplication, Schedule, AddToWishlist, Donate, CustomizeProduct, FindLocation; any case, stored as Meta spells it) or a custom name such as 'signup'. Only Purchase counts as revenue.",
  examples: ['Purchase'],
});

/** An optional string field with a description and an example. */
const Text = (maxLength: number, description: string, example?: string) =>
  Type.Optional(Type.String({ maxLength, description, ...(example !== undefined && { examples: [example] }) }));

export const ConversionBody = Type.Object(
  {
    storeId: Type.String({
      minLength: 1,
      maxLength: 64,
      description: 'The store the conversion happened in (active, of the key’s account)',
      examples: [EXAMPLE.storeId],
    }),
    eventType: EVENT_TYPE,
    orderId: Type.String({
      minLength: 1,
      maxLength: 255,
      description:
        'Your id of the order (or lead, signup…): with the store and eventType, the key of the conversion — sending it again returns the original conversion with `duplicate: true`, never counted twice.',
      examples: ['1001'],
    }),
    eventValue: Type.Number({
      minimum: 0,
      maximum: 1e12,
      description:
        'The value in `currency`, 0 ≤ value ≤ 1e12; stored exactly in the currency’s minor units (49.90 EUR is 4990 cents)',
      examples: [49.9],
    }),
    currency: Type.String({
      minLength: 1,
      maxLength: 16,
      ...CURRENCY_CODE,
      'x-error-code': 'invalid_currency',
      description: 'ISO 4217 code of eventValue (also accepted in lower case; stored upper-case), else `invalid_currency`',
      examples: ['EUR'],
    }),
    customerData: Type.Optional(
      Type.Object(
        {
          email: Text(256, 'Trimmed and lower-cased, then hashed', 'anna.schmidt@example.com'),
          firstName: Text(256, 'Lower case without punctuation, then hashed', 'Anna'),
          lastName: Text(256, 'Lower case without punctuation, then hashed', 'Schmidt'),
          phone: Text(256, 'Digits only with the country code, then hashed', '+49 30 1234567'),
          city: Text(256, 'Lower-case letters only, then hashed', 'Berlin'),
          state: Text(256, 'Two-letter code, lower case, then hashed', 'BE'),
          country: Text(256, 'ISO 3166 alpha-2, lower case, then hashed', 'DE'),
          zipCode: Text(256, 'Lower case (US: first 5 digits), then hashed', '10115'),
        },
        {
          description:
            'The buyer, for matching on Meta’s side and the identity attribution signal: any subset, each at most 256 characters. Normalized and SHA-256 hashed on arrival following Meta’s rules; the raw values are never stored, returned or logged.',
        },
      ),
    ),
    fingerprint: Text(
      256,
      'The visitor fingerprint the store’s tag computed (`window.waytrack.identifiers().fingerprint`), or sha256_hex(ipAddress + "|" + userAgent) computed by a store backend: matches the click with the same fingerprint (attribution signals 2 and 3).',
      EXAMPLE.fingerprint,
    ),
    products: Type.Optional(
      Type.Array(
        Type.Object({
          productId: Type.String({
            minLength: 1,
            maxLength: 255,
            description: 'Your product (or SKU) id',
            examples: ['TR-42-BLK'],
          }),
          name: Text(500, 'Product name', 'Trail Runner 42'),
          price: Type.Optional(
            Type.Number({ minimum: 0, maximum: 1e12, description: 'Unit price in the conversion’s currency', examples: [19.99] }),
          ),
          quantity: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'Default 1', examples: [2] })),
          category: Text(255, 'Product category', 'Shoes'),
        }),
        { maxItems: 1000, description: 'What was bought (at most 1000 lines); sent to Meta as contents' },
      ),
    ),
    clickId: Text(
      64,
      '(Extension) The Waytrack click (`clk_…`) that led to this conversion, if the store knows it: an explicit reference attributes with confidence 100.',
      EXAMPLE.clickId,
    ),
    fbclid: Type.Optional(
      Type.String({
        maxLength: 500,
        pattern: FBCLID_PATTERN,
        'x-error-code': 'invalid_fbclid',
        description:
          '(Extension) The fbclid of the click that led to this conversion, if the store kept it: an explicit reference (confidence 100).',
        examples: [EXAMPLE.fbclid],
      }),
    ),
    fbc: Text(
      600,
      '(Extension) The `_fbc` cookie (fb.1.<ms>.<fbclid>) from the buyer’s browser, e.g. from `window.waytrack.identifiers()`: its fbclid is an explicit reference (confidence 100).',
      EXAMPLE.fbc,
    ),
    fbp: Text(
      256,
      '(Extension) The `_fbp` cookie (Meta browser id) from the buyer’s browser; forwarded to Meta for matching.',
      EXAMPLE.fbp,
    ),
    // gclid, gbraid, wbraid, ttclid, msclkid: explicit references (confidence 100), api.md §8.
    ...OTHER_CLICK_ID_FIELDS,
    ttp: Text(256, '(Extension) The `_ttp` cookie (TikTok browser id); forwarded to TikTok for matching.', 'ttp-1234567890'),
    consent: ConsentBody,
    limitedDataUse: LimitedDataUseBody,
    ipAddress: Type.Optional(
      Type.String({
        maxLength: 64,
        ...IP_ADDRESS,
        description:
          '(Extension) The buyer’s IPv4 or IPv6 address as the store saw it (e.g. a Shopify order’s browser IP): with userAgent a strong signal, alone the weakest; forwarded to Meta as client_ip_address.',
        examples: [EXAMPLE.ipAddress],
      }),
    ),
    userAgent: Text(
      1024,
      '(Extension) The buyer’s browser user agent as the store saw it: with ipAddress an attribution signal; forwarded to Meta as client_user_agent.',
      EXAMPLE.userAgent,
    ),
    eventSourceUrl: Type.Optional(
      Type.String({
        maxLength: 2048,
        ...HTTP_URL,
        description:
          '(Extension) The page where the conversion happened (absolute http(s) URL), sent to Meta as event_source_url; default the attributed click’s landing page.',
        examples: ['https://shop.acme-outdoor.com/checkout/thank-you?order=1001'],
      }),
    ),
    eventId: Text(
      255,
      '(Extension) The event id the browser pixel used for the same event, so Meta deduplicates pixel and server events; default orderId.',
      'order-1001',
    ),
    timestamp: ClientTime(
      'When the conversion happened: ISO 8601 with an offset; default now. More than 5 minutes in the future is `invalid_request`. Only clicks before it (within the store’s attribution window) can win it.',
      EXAMPLE.conversionTime,
    ),
  },
  {
    description:
      'A conversion. Unknown fields are ignored. A field sent as null or "" counts as absent (a required one is `missing_required_field`).',
    'x-examples': {
      purchase: {
        summary: 'A purchase with the buyer, the products and the browser’s identifiers',
        value: {
          storeId: EXAMPLE.storeId,
          eventType: 'Purchase',
          orderId: '1001',
          eventValue: 49.9,
          currency: 'EUR',
          customerData: { email: 'anna.schmidt@example.com', firstName: 'Anna', lastName: 'Schmidt', country: 'DE' },
          products: [
            { productId: 'TR-42-BLK', name: 'Trail Runner 42', price: 19.99, quantity: 2, category: 'Shoes' },
            { productId: 'SOCK-3P', name: 'Running socks, 3 pairs', price: 9.92, quantity: 1, category: 'Accessories' },
          ],
          fbc: EXAMPLE.fbc,
          fbp: EXAMPLE.fbp,
          fingerprint: EXAMPLE.fingerprint,
          ipAddress: EXAMPLE.ipAddress,
          userAgent: EXAMPLE.userAgent,
          eventSourceUrl: 'https://shop.acme-outdoor.com/checkout/thank-you?order=1001',
          eventId: 'order-1001',
          timestamp: EXAMPLE.conversionTime,
        },
      },
      lead: {
        summary: 'A lead with the required fields only',
        value: { storeId: EXAMPLE.storeId, eventType: 'Lead', orderId: 'lead-58213', eventValue: 0, currency: 'USD' },
      },
    },
  },
);

const AttributedTo = Type.Object(
  {
    clickId: Type.String({ description: 'The winning click', examples: [EXAMPLE.clickId] }),
    fbclid: Type.String({ description: 'Its fbclid', examples: [EXAMPLE.fbclid] }),
    confidenceScore: Type.Integer({
      minimum: 0,
      maximum: 100,
      description: '100 for an explicit reference (clickId, fbclid, fbc); lower for weaker signals and older clicks',
      examples: [100],
    }),
  },
  { description: 'Only when attributed: the click that caused the conversion' },
);

const ClickInOtherMode = Type.Object(
  {
    field: Type.Union([Type.Literal('clickId'), Type.Literal('fbclid'), Type.Literal('fbc')], {
      description: 'The reference that names the click',
    }),
    reason: Type.Literal('exists_in_other_mode'),
    mode: Type.Union([Type.Literal('live'), Type.Literal('test')], { description: 'The mode the click was recorded in' }),
    message: Type.String({
      examples: [
        'The fbclid names no click in test mode: a click with that fbclid exists in live mode (test and live data never mix; record the conversion in live mode, e.g. with a wt_live_ key)',
      ],
    }),
  },
  {
    description:
      'Only when no click reference attributed the conversion and its clickId, fbclid or fbc names a click of the store in the other mode (a test key sending a live click’s fbclid): which reference, and that mode; nothing else of the click',
  },
);

export const ConversionResult = Type.Object({
  conversionId: Type.String({
    description: 'The conversion’s id; the original one for a duplicate',
    examples: [EXAMPLE.conversionId],
  }),
  eventType: Type.String({ description: 'As stored (a standard name in Meta’s spelling)', examples: ['Purchase'] }),
  attributed: Type.Boolean({ description: 'true when a click scored at least the store’s minConfidence' }),
  attributedTo: Type.Optional(AttributedTo),
  capiSent: Type.Boolean({ description: 'true only if Meta acknowledged the event before this response' }),
  timestamp: Timestamp('Event time'),
  duplicate: Type.Boolean({
    description: 'true when this (store, eventType, orderId) was already recorded: the original result',
  }),
  differences: Type.Optional(
    Type.Array(Type.String(), {
      description:
        'Only on a duplicate whose request differs from the original: the differing field names (eventValue, currency, …); the original is kept',
      examples: [['eventValue', 'currency']],
    }),
  ),
  clickInOtherMode: Type.Optional(ClickInOtherMode),
});

const Conversion = Type.Object({
  conversionId: Type.String({ description: 'The conversion’s id', examples: [EXAMPLE.conversionId] }),
  storeId: Type.String({ examples: [EXAMPLE.storeId] }),
  eventType: Type.String({ examples: ['Purchase'] }),
  orderId: Type.String({ examples: ['1001'] }),
  eventId: Type.String({ description: 'The event_id sent to Meta (eventId, default orderId)', examples: ['order-1001'] }),
  eventValue: Type.Number({ description: 'Exact, in currency', examples: [49.9] }),
  currency: Type.String({ description: 'ISO 4217, upper case', examples: ['EUR'] }),
  refundedTotal: Type.Number({
    description: 'Sum of the conversion’s refunds (POST /v1/track/refund), exact, in currency; 0 when none',
    examples: [0],
  }),
  attributed: Type.Boolean({ description: 'true when a click scored at least the store’s minConfidence' }),
  attributedTo: Type.Optional(AttributedTo),
  ...ForwardingState,
  forwarding: Forwarding,
  matchQuality: MatchQualityMap,
  fx: Type.Optional(FxRecorded),
  consent: ConsentShown,
  limitedDataUse: LimitedDataUseShown,
  livemode: Type.Boolean({ description: 'true for live data, false for test data' }),
  timestamp: Timestamp('Event time'),
  createdAt: Timestamp('When the conversion was recorded'),
  products: Type.Array(
    Type.Object({
      productId: Type.String(),
      name: Type.Optional(Type.String()),
      price: Type.Optional(Type.Number()),
      quantity: Type.Integer(),
      category: Type.Optional(Type.String()),
    }),
  ),
});

const SIGNAL = Type.Enum(['explicit', 'fingerprint', 'ip_user_agent', 'identity', 'ip']);

const ExplainedConversion = Type.Object({
  ...Conversion.properties,
  attribution: Type.Object(
    {
      signal: Nullable(SIGNAL),
      score: Nullable(Type.Integer({ minimum: 0, maximum: 100 })),
      touchpoints: Type.Array(
        Type.Object({
          clickId: Type.String(),
          fbclid: Type.String(),
          signal: SIGNAL,
          score: Type.Integer({ minimum: 0, maximum: 100 }),
          clickTime: Timestamp('Click time'),
        }),
        { description: 'Every candidate click at or above the store minConfidence, strongest first' },
      ),
      reason: Type.Optional(
        Type.Union(
          [Type.Literal('no_candidates'), Type.Literal('below_min_confidence'), Type.Literal('reattribution_available')],
          {
            description: 'Only when not attributed: why, with the clicks known now and the store settings now',
          },
        ),
      ),
      message: Type.Optional(Type.String({ description: 'Only when not attributed: the reason in a sentence' })),
      minConfidence: Type.Optional(Type.Integer({ description: 'Only when not attributed: the store threshold applied' })),
      bestCandidate: Type.Optional(
        Type.Object(
          {
            clickId: Type.String(),
            fbclid: Type.String(),
            signal: SIGNAL,
            score: Type.Integer({ minimum: 0, maximum: 100 }),
            clickTime: Timestamp('Click time'),
          },
          { description: 'Only when not attributed: the strongest candidate click, whatever its score' },
        ),
      ),
      clickInOtherMode: Type.Optional(ClickInOtherMode),
    },
    { description: 'Why the conversion was (or was not) attributed: the winning signal and score, and every touchpoint' },
  ),
});

const ConversionParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64, description: 'The conversion’s id', examples: [EXAMPLE.conversionId] }),
});

const ConversionList = Type.Object({
  conversions: Type.Array(Conversion, { description: 'This page, newest event first' }),
  hasMore: Type.Boolean({ description: 'true when another page follows' }),
  nextCursor: Nullable(Type.String({ description: 'Pass as `cursor` for the next page; null on the last page' })),
});

const EXAMPLE_CONVERSION = {
  conversionId: EXAMPLE.conversionId,
  storeId: EXAMPLE.storeId,
  eventType: 'Purchase',
  orderId: '1001',
  eventId: 'order-1001',
  eventValue: 49.9,
  currency: 'EUR',
  refundedTotal: 0,
  attributed: true,
  attributedTo: { clickId: EXAMPLE.clickId, fbclid: EXAMPLE.fbclid, confidenceScore: 100 },
  capiSent: true,
  capi: { status: 'sent', attempts: 1, sentAt: '2026-11-22T09:58:01.911Z' },
  forwarding: { meta: { status: 'sent', attempts: 1, sentAt: '2026-11-22T09:58:01.911Z' } },
  matchQuality: EXAMPLE_MATCH_QUALITY,
  consent: EXAMPLE_CONSENT,
  livemode: true,
  timestamp: EXAMPLE.conversionTime,
  createdAt: '2026-11-22T09:58:01.377Z',
  products: [
    { productId: 'TR-42-BLK', name: 'Trail Runner 42', price: 19.99, quantity: 2, category: 'Shoes' },
    { productId: 'SOCK-3P', name: 'Running socks, 3 pairs', price: 9.92, quantity: 1, category: 'Accessories' },
  ],
};

const EXAMPLE_EXPLAINED = {
  ...EXAMPLE_CONVERSION,
  attribution: {
    signal: 'explicit',
    score: 100,
    touchpoints: [
      { clickId: EXAMPLE.clickId, fbclid: EXAMPLE.fbclid, signal: 'explicit', score: 100, clickTime: EXAMPLE.clickTime },
      {
        clickId: EXAMPLE.earlierClickId,
        fbclid: EXAMPLE.earlierFbclid,
        signal: 'ip_user_agent',
        score: 71,
        clickTime: '2026-11-20T18:02:55.120Z',
      },
    ],
  },
};

const CONVERSION_NOT_FOUND: Record<string, ErrorExample> = {
  conversionNotFound: {
    summary: 'No such conversion in this mode and account',
    code: 'not_found',
    message: `No conversion ${EXAMPLE.conversionId}`,
  },
};

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
                attributedTo: { clickId: EXAMPLE.clickId, fbclid: EXAMPLE.fbclid, confidenceScore: 100 },
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
                attributedTo: { clickId: EXAMPLE.clickId, fbclid: EXAMPLE.fbclid, confidenceScore: 100 },
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
      const page = cursors.page(rows, limit, context, (r) => ({ time: r.event_time, id: r.id }), presentConversion);
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
