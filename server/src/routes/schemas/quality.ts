import { Type } from 'typebox';
import { EXAMPLE } from '../../http/openapi.js';

/** Schemas of match quality (api.md §10) and of the exchange rate recorded with a conversion. */

const MATCH_KEY = Type.Enum(['clickId', 'email', 'phone', 'ipUserAgent', 'fbp', 'ttp', 'scid', 'address'], {
  description:
    'A match key: the destination’s click id, email, phone, IP address with user agent, fbp/ttp/scid browser id, address fields',
});

const MatchWarning = Type.Object({
  code: Type.Enum([
    'fbc_stale',
    'fbc_malformed',
    'email_invalid',
    'phone_without_country_code',
    'ip_user_agent_missing',
    'user_data_denied',
    'ad_storage_denied',
  ]),
  key: MATCH_KEY,
  message: Type.String({ examples: ['phone without country code: send it with +<country code>, or send customerData.country'] }),
});

const MatchQualityEntry = Type.Object({
  score: Type.Number({ minimum: 0, maximum: 10, description: 'Sum of the weights of the keys sent (docs: "Match quality")' }),
  keys: Type.Array(MATCH_KEY, { description: 'Match keys this destination is sent' }),
  missing: Type.Array(MATCH_KEY, { description: 'Match keys this destination weighs that were not sent' }),
  warnings: Type.Array(MatchWarning, { description: 'Problems the merchant can fix' }),
});

export const MatchQualityMap = Type.Object(
  {
    meta: Type.Optional(MatchQualityEntry),
    google_ads: Type.Optional(MatchQualityEntry),
    tiktok: Type.Optional(MatchQualityEntry),
    microsoft: Type.Optional(MatchQualityEntry),
    reddit: Type.Optional(MatchQualityEntry),
    linkedin: Type.Optional(MatchQualityEntry),
    pinterest: Type.Optional(MatchQualityEntry),
    snapchat: Type.Optional(MatchQualityEntry),
  },
  {
    description:
      'Per destination that receives the conversion, computed when it was recorded from the keys it is sent; empty when none receives it',
  },
);

export const EXAMPLE_MATCH_QUALITY = {
  meta: {
    score: 8.5,
    keys: ['clickId', 'email', 'ipUserAgent', 'fbp', 'address'],
    missing: ['phone'],
    warnings: [
      {
        code: 'phone_without_country_code',
        key: 'phone',
        message: 'phone without country code: send it with +<country code>, or send customerData.country',
      },
    ],
  },
};

export const FxRecorded = Type.Object(
  {
    currency: Type.String({ description: 'The store currency it was converted to', examples: ['EUR'] }),
    rate: Type.String({
      description: 'Units of the store currency per unit of the conversion’s (10 decimals at most)',
      examples: ['0.9222427'],
    }),
    rateDate: Type.String({ description: 'The day whose rates were used', examples: ['2026-11-20'] }),
    value: Type.Number({
      description: 'eventValue in the store currency, rounded half to even to its minor units',
      examples: [46.1],
    }),
  },
  { description: 'Only for a conversion in another currency than its store’s with a known rate: the rate recorded with it' },
);

const DestinationSummary = Type.Object({
  conversions: Type.Integer({ description: 'Conversions in range this destination receives' }),
  averageScore: Type.Number({ description: 'Their average score, 2 decimals' }),
  missing: Type.Record(Type.String(), Type.Number({ minimum: 0, maximum: 1 }), {
    description: 'Each key the destination weighs → share of its conversions without it (0–1, 4 decimals)',
  }),
  warnings: Type.Record(Type.String(), Type.Integer(), { description: 'Warning code → conversions that had it' }),
  improvements: Type.Array(Type.Object({ key: MATCH_KEY, scoreGain: Type.Number() }), {
    description: 'Keys that would raise averageScore if every conversion had them, by how much, largest first',
  }),
});

export const MatchQualityView = Type.Object({
  storeId: Type.String({ examples: [EXAMPLE.storeId] }),
  startDate: Type.String(),
  endDate: Type.String(),
  timezone: Type.String(),
  livemode: Type.Boolean(),
  destinations: Type.Object(
    {
      meta: Type.Optional(DestinationSummary),
      google_ads: Type.Optional(DestinationSummary),
      tiktok: Type.Optional(DestinationSummary),
      microsoft: Type.Optional(DestinationSummary),
      reddit: Type.Optional(DestinationSummary),
      linkedin: Type.Optional(DestinationSummary),
      pinterest: Type.Optional(DestinationSummary),
      snapchat: Type.Optional(DestinationSummary),
    },
    { description: 'Per destination with at least one conversion in range' },
  ),
});
