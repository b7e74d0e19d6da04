import { Type } from 'typebox';
import { CURRENCY_CODE, type ErrorExample, EXAMPLE, HTTP_URL, IP_ADDRESS } from '../../http/openapi.js';
import { ClientTime, ForwardingState, Nullable, Timestamp } from '../common.js';
import { Forwarding } from '../destinations.js';
import { FBCLID_PATTERN, OTHER_CLICK_ID_FIELDS } from './clicks.js';
import { ConsentBody, ConsentShown, EXAMPLE_CONSENT, LimitedDataUseBody, LimitedDataUseShown } from './consent.js';
import { EXAMPLE_MATCH_QUALITY, FxRecorded, MatchQualityMap } from './quality.js';

/** The schemas and examples of the conversion routes (routes/conversions.ts): bodies, items, answers. */

export const EVENT_TYPE = Type.String({
  pattern: '^[A-Za-z][A-Za-z0-9_]{0,49}$',
  description:
    "A Meta standard event name (Purchase, Lead, CompleteRegistration, AddToCart, InitiateCheckout, AddPaymentInfo, Subscribe, StartTrial, ViewContent, Search, Contact, SubmitApplication, Schedule, AddToWishlist, Donate, CustomizeProduct, FindLocation; any case, stored as Meta spells it) or a custom name such as 'signup'. Only Purchase counts as revenue.",
  examples: ['Purchase'],
});

/** An optional string field with a description and an example. */
export const Text = (maxLength: number, description: string, example?: string) =>
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
    scid: Text(
      256,
      '(Extension) The `_scid` cookie (Snapchat browser id); forwarded to Snapchat for matching.',
      'a1b2c3d4-e5f6-4a5b-8c9d-0e1f2a3b4c5d',
    ),
    rdtUuid: Text(
      256,
      '(Extension) The `_rdt_uuid` cookie (Reddit browser id); forwarded to Reddit for matching.',
      '1700000000000.a1b2c3d4-e5f6-4a5b-8c9d-0e1f2a3b4c5d',
    ),
    visitorId: Text(
      128,
      '(Extension) The tag’s first-party visitor id (`_wt_vid`, from `window.waytrack.identifiers()`): with `fbp` and `ttp`, same-browser evidence for that browser’s clicks (api.md §13).',
      'wt.4f9c2a7d1e8b6c3f5a0d9e2b',
    ),
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

export const AttributedTo = Type.Object(
  {
    clickId: Type.String({ description: 'The winning click', examples: [EXAMPLE.clickId] }),
    fbclid: Type.Optional(
      Type.String({
        description: 'Its fbclid, only when the click has one (a Google, TikTok, … click has none: see clickIds)',
        examples: [EXAMPLE.fbclid],
      }),
    ),
    clickIds: Type.Record(Type.String(), Type.String(), {
      description:
        'Each click id of the credited click by kind (fbclid, gclid, gbraid, wbraid, ttclid, msclkid). Conversions attributed before this field existed show the one id their click was keyed by',
      examples: [{ gclid: 'Cj0KCQiA4L67BhDUARIsADWrl7E' }],
    }),
    channel: Type.Optional(
      Type.Union(
        ['meta', 'google_ads', 'tiktok', 'microsoft', 'pinterest', 'snapchat', 'reddit', 'linkedin'].map((c) => Type.Literal(c)),
        {
          description:
            'The platform of the credited click (as the channel report): the kind of click id the conversion named, when the click has it; else its first of fbclid, gclid, gbraid, wbraid, ttclid, msclkid',
          examples: ['google_ads'],
        },
      ),
    ),
    confidenceScore: Type.Integer({
      minimum: 0,
      maximum: 100,
      description: '100 for an explicit reference (clickId, fbclid, fbc); lower for weaker signals and older clicks',
      examples: [100],
    }),
  },
  { description: 'Only when attributed: the click that caused the conversion' },
);

export const ClickInOtherMode = Type.Object(
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

/** api.md §11 "Customers": whether the conversion is its customer's first (docs/api.md "Customers and cohorts"). */
export const CustomerFlag = Type.Optional(
  Type.Object(
    {
      new: Type.Boolean({
        description:
          'true when no conversion of the store and mode with the same hashed email (else phone) has an earlier event time; an earlier one recorded later makes this false',
      }),
    },
    { description: 'Absent when the conversion has neither email nor phone' },
  ),
);

export const ConversionResult = Type.Object({
  conversionId: Type.String({
    description: 'The conversion’s id; the original one for a duplicate',
    examples: [EXAMPLE.conversionId],
  }),
  eventType: Type.String({ description: 'As stored (a standard name in Meta’s spelling)', examples: ['Purchase'] }),
  attributed: Type.Boolean({ description: 'true when a click scored at least the store’s minConfidence' }),
  attributedTo: Type.Optional(AttributedTo),
  customer: CustomerFlag,
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

export const Conversion = Type.Object({
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
  customer: CustomerFlag,
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

export const ConversionParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64, description: 'The conversion’s id', examples: [EXAMPLE.conversionId] }),
});

export const ConversionList = Type.Object({
  conversions: Type.Array(Conversion, { description: 'This page, newest event first' }),
  hasMore: Type.Boolean({ description: 'true when another page follows' }),
  nextCursor: Nullable(Type.String({ description: 'Pass as `cursor` for the next page; null on the last page' })),
});

/** An explicit reference's result in the examples: a Meta click, its fbclid named. */
export const EXAMPLE_ATTRIBUTED_TO = {
  clickId: EXAMPLE.clickId,
  fbclid: EXAMPLE.fbclid,
  clickIds: { fbclid: EXAMPLE.fbclid },
  channel: 'meta',
  confidenceScore: 100,
};

export const EXAMPLE_CONVERSION = {
  conversionId: EXAMPLE.conversionId,
  storeId: EXAMPLE.storeId,
  eventType: 'Purchase',
  orderId: '1001',
  eventId: 'order-1001',
  eventValue: 49.9,
  currency: 'EUR',
  refundedTotal: 0,
  attributed: true,
  attributedTo: EXAMPLE_ATTRIBUTED_TO,
  customer: { new: true },
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

export const CONVERSION_NOT_FOUND: Record<string, ErrorExample> = {
  conversionNotFound: {
    summary: 'No such conversion in this mode and account',
    code: 'not_found',
    message: `No conversion ${EXAMPLE.conversionId}`,
  },
};
