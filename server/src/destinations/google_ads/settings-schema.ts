import { Type } from 'typebox';
import { optional, REQUIRED_ONCE, secret } from '../settings-schemas.js';

const CONVERSION_ACTION = '^customers/\\d{10}/conversionActions/\\d+$';

/** Google Ads' PUT body (api.md §8), as the OpenAPI document shows it; the adapter's `parse` checks a body. */
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
