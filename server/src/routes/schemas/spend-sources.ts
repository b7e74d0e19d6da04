import { type TSchema, Type } from 'typebox';
import type { SpendSourceKind } from '../../spend/source-settings.js';

/**
 * The PUT body of each spend source kind (api.md §11), as the OpenAPI document shows it; the
 * domain (spend/source-settings.ts parseSource) is what checks a body, with its own messages and
 * `details.field`. A field sent as null or "" counts as left out.
 *
 * `x-rules: required-once`: a secret left out keeps the one stored with the source, else the
 * store's destination of that kind lends its own, so it is required only while neither has one.
 */
const REQUIRED_ONCE = { 'x-rules': ['required-once'] };

const accounts = (description: string, pattern: string, example: string) =>
  Type.Array(Type.String({ pattern }), { minItems: 1, maxItems: 50, uniqueItems: true, description, examples: [[example]] });

const secret = (description: string) =>
  Type.Optional(
    Type.String({
      maxLength: 2000,
      writeOnly: true,
      description: `${description}; write-only: left out, the one stored with the source is kept, else the store’s destination’s is used (required while neither has one)`,
      ...REQUIRED_ONCE,
    }),
  );

const backfillDays = Type.Optional(
  Type.Integer({
    minimum: 1,
    maximum: 90,
    description: 'Days pulled when connected, through today (default 30)',
    examples: [30],
  }),
);

export const META_SOURCE = Type.Object(
  {
    adAccountIds: accounts('The Meta ad accounts, act_<digits>', '^act_\\d{1,20}$', 'act_123456789'),
    accessToken: secret('A Marketing API token with ads_read'),
    backfillDays,
  },
  {
    additionalProperties: false,
    description: 'meta: the ad accounts whose campaign spend is pulled',
    'x-examples': { meta: { summary: 'One ad account, the store’s token', value: { adAccountIds: ['act_123456789'] } } },
  },
);

export const GOOGLE_ADS_SOURCE = Type.Object(
  {
    customerIds: accounts('The Google Ads customer ids, 10 digits without dashes', '^\\d{10}$', '1234567890'),
    loginCustomerId: Type.Optional(
      Type.String({
        pattern: '^\\d{10}$',
        description: 'The manager account the customers are reached through; default the destination’s',
      }),
    ),
    developerToken: secret('The Google Ads API developer token'),
    oauth: Type.Optional(
      Type.Object(
        {
          clientId: Type.Optional(
            Type.String({ maxLength: 500, description: 'The OAuth client id (required with oauth)', ...REQUIRED_ONCE }),
          ),
          clientSecret: secret('The OAuth client secret'),
          refreshToken: secret('A refresh token with the adwords scope'),
        },
        {
          additionalProperties: false,
          description: 'An OAuth client of the source’s own (the google_ads destination’s shape); left out, the destination’s',
          ...REQUIRED_ONCE,
        },
      ),
    ),
    backfillDays,
  },
  {
    additionalProperties: false,
    description: 'google_ads: the customers whose campaign cost is pulled',
    'x-examples': {
      googleAds: {
        summary: 'One customer through a manager account, the destination’s credentials',
        value: { customerIds: ['1234567890'], loginCustomerId: '9876543210' },
      },
    },
  },
);

export const TIKTOK_SOURCE = Type.Object(
  {
    advertiserIds: accounts('The TikTok advertiser ids', '^\\d{1,30}$', '7012345678901234567'),
    accessToken: secret('A TikTok Marketing API access token with reporting access'),
    backfillDays,
  },
  {
    additionalProperties: false,
    description: 'tiktok: the advertisers whose campaign spend is pulled',
    'x-examples': { tiktok: { summary: 'One advertiser', value: { advertiserIds: ['7012345678901234567'], backfillDays: 14 } } },
  },
);

export const SOURCE_SCHEMAS: Record<SpendSourceKind, TSchema> = {
  meta: META_SOURCE,
  google_ads: GOOGLE_ADS_SOURCE,
  tiktok: TIKTOK_SOURCE,
};
