import { type TSchema, Type } from 'typebox';

/**
 * The PUT body of each destination (api.md §8), as the OpenAPI document shows it: each adapter
 * names its schema (`settingsSchema`), the route documents one operation per kind from them. The
 * adapter's `parse` is what checks a body (with its own messages and `details.field`); the
 * agreement fuzzer (test/fuzz/openapi-agreement.test.ts) holds the two to refusing the same
 * bodies. As everywhere in the API, a field sent as null or "" counts as left out.
 *
 * `x-rules: required-once`: a secret (or, for Google Ads, the `oauth` object) may be left out to
 * keep the stored one, so it is required only while none is stored — no JSON Schema states that.
 */
const REQUIRED_ONCE = { 'x-rules': ['required-once'] };

/** Optional text of at most `max` characters (the document adds: null or "" is the same as leaving it out). */
function optional(description: string, options: { max?: number; pattern?: string; secret?: boolean; once?: boolean } = {}) {
  return Type.Optional(
    Type.String({
      maxLength: options.max ?? 500,
      ...(options.pattern && { pattern: options.pattern }),
      ...(options.secret && { writeOnly: true }),
      description,
      ...(options.once && REQUIRED_ONCE),
    }),
  );
}

const refundEvent = () =>
  optional(
    'Opt-in (api.md §9): the name of a custom event sent for each refund with the negative refunded amount (e.g. "Refund"); left out, refunds are not sent to this platform',
    { max: 50, pattern: '^[A-Za-z][A-Za-z0-9_]{0,49}$' },
  );

const secret = (description: string, max = 500) =>
  optional(`${description}; write-only: left out, the stored one is kept (required while none is stored)`, {
    max,
    secret: true,
    once: true,
  });

export const META_SETTINGS = Type.Object(
  {
    pixelId: Type.String({ pattern: '^\\d{5,20}$', description: 'The Meta pixel (dataset) id: 5–20 digits' }),
    accessToken: secret('The Conversions API access token', 2000),
    testEventCode: optional('Meta’s test event code: test-mode conversions are sent only with one', { max: 100 }),
    refundEvent: refundEvent(),
  },
  {
    additionalProperties: false,
    description: 'meta: the same as the store’s pixelId, capiAccessToken, capiTestEventCode',
    'x-examples': {
      meta: {
        summary: 'Meta with a test event code',
        value: { pixelId: '1234567890', accessToken: 'EAAB…', testEventCode: 'TEST12345' },
      },
    },
  },
);

const CONVERSION_ACTION = '^customers/\\d{10}/conversionActions/\\d+$';

export const GOOGLE_ADS_SETTINGS = Type.Object(
  {
    api: Type.Optional(
      Type.Union([Type.Literal('data_manager'), Type.Literal('google_ads_api')], {
        description:
          'Which Google API receives the conversions (api.md §12). `data_manager` (the default for new settings): Google’s Data Manager API, with the OAuth client only; it works for every account. `google_ads_api`: the Google Ads API’s UploadClickConversions with a developer token; since 2026-06-15 Google accepts these only from developer tokens that already used them. Left out, a stored destination keeps its api (one saved before this setting existed is google_ads_api)',
      }),
    ),
    customerId: Type.String({ pattern: '^\\d{10}$', description: 'The Google Ads customer id: 10 digits, without dashes' }),
    loginCustomerId: optional('The manager account’s customer id, when the account is managed: 10 digits', {
      pattern: '^\\d{10}$',
    }),
    conversionAction: Type.Union(
      [
        Type.String({ maxLength: 500, pattern: CONVERSION_ACTION }),
        Type.Unsafe<Record<string, string>>({
          type: 'object',
          minProperties: 1,
          patternProperties: {
            '^[A-Za-z][A-Za-z0-9_]{0,49}$': { type: 'string', maxLength: 500, pattern: CONVERSION_ACTION },
          },
          additionalProperties: false,
        }),
      ],
      {
        description:
          'The conversion action (`customers/<id>/conversionActions/<id>`) of every conversion, or an object from eventType to one (an eventType not named is not sent)',
      },
    ),
    developerToken: Type.Optional(
      Type.String({
        maxLength: 500,
        writeOnly: true,
        description:
          'api google_ads_api only (refused with data_manager): the Google Ads API developer token; write-only: left out, the stored one is kept (required while none is stored)',
        'x-rules': ['required-once', 'google-ads-api-only'],
      }),
    ),
    oauth: Type.Optional(
      Type.Object(
        {
          clientId: optional('The OAuth client id (kept when left out)', { once: true }),
          clientSecret: secret('The OAuth client secret'),
          refreshToken: secret('The OAuth refresh token', 2000),
        },
        { additionalProperties: false, description: 'The OAuth client and the refresh token granted to it', ...REQUIRED_ONCE },
      ),
    ),
  },
  {
    additionalProperties: false,
    description: 'google_ads: offline click conversions through the Data Manager API (events:ingest) or the Google Ads API',
    'x-examples': {
      googleAds: {
        summary: 'Data Manager, one conversion action for every conversion',
        value: {
          customerId: '1234567890',
          conversionAction: 'customers/1234567890/conversionActions/987654321',
          oauth: {
            clientId: '1234-abc.apps.googleusercontent.com',
            clientSecret: 'client-secret',
            refreshToken: '1//0g-refresh',
          },
        },
      },
      googleAdsApi: {
        summary: 'The Google Ads API, for a developer token that already uploads click conversions',
        value: {
          api: 'google_ads_api',
          customerId: '1234567890',
          conversionAction: 'customers/1234567890/conversionActions/987654321',
          developerToken: 'dev-token',
          oauth: {
            clientId: '1234-abc.apps.googleusercontent.com',
            clientSecret: 'client-secret',
            refreshToken: '1//0g-refresh',
          },
        },
      },
    },
  },
);

export const TIKTOK_SETTINGS = Type.Object(
  {
    pixelCode: Type.String({
      maxLength: 40,
      pattern: '^[A-Z0-9]{10,40}$',
      description: 'The pixel code from TikTok Events Manager (capital letters and digits)',
    }),
    accessToken: secret('The Events API access token', 2000),
    testEventCode: optional('TikTok’s test event code: test-mode conversions are sent only with one', {
      max: 100,
      pattern: '^[A-Za-z0-9_-]+$',
    }),
    refundEvent: refundEvent(),
  },
  {
    additionalProperties: false,
    description: 'tiktok: the Events API 2.0',
    'x-examples': { tiktok: { summary: 'TikTok', value: { pixelCode: 'C4ABCDEFGH12345', accessToken: 'tt-access-token' } } },
  },
);

export type SettingsSchema = TSchema;

export const MICROSOFT_SETTINGS = Type.Object(
  {
    tagId: Type.String({
      maxLength: 20,
      pattern: '^[0-9]{4,20}$',
      description: 'The UET tag ID from Microsoft Advertising (Tools → UET tag; digits)',
    }),
    accessToken: secret('The UET Conversions API access token (the UET tag → Use Conversions API)', 4000),
  },
  {
    additionalProperties: false,
    description: 'microsoft: the UET Conversions API (CAPI)',
    'x-examples': {
      microsoft: { summary: 'Microsoft Advertising', value: { tagId: '343210987', accessToken: 'ms-capi-token' } },
    },
  },
);
