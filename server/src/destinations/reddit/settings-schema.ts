import { Type } from 'typebox';
import { secret } from '../settings-schemas.js';

/** Reddit's PUT body (api.md §12), as the OpenAPI document shows it; the adapter's `parse` checks a body. */
export const REDDIT_SETTINGS = Type.Object(
  {
    adAccountId: Type.String({
      maxLength: 40,
      pattern: '^(t2|a2)_[A-Za-z0-9]{1,36}$',
      description: 'The Reddit Ads account id: t2_… or a2_… (Reddit Ads Manager → the account menu, or the ads.reddit.com URL)',
    }),
    accessToken: secret('The Conversions API access token', 2000),
  },
  {
    additionalProperties: false,
    description: 'reddit: the Conversions API v2.0 for an ad account',
    'x-examples': {
      reddit: { summary: 'Reddit', value: { adAccountId: 'a2_abc123xyz', accessToken: 'reddit-conversion-token' } },
    },
  },
);
