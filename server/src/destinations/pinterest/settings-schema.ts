import { Type } from 'typebox';
import { secret } from '../settings-schemas.js';

/** Pinterest's PUT body (api.md §12), as the OpenAPI document shows it; the adapter's `parse` checks a body. */
export const PINTEREST_SETTINGS = Type.Object(
  {
    adAccountId: Type.String({
      maxLength: 30,
      pattern: '^[0-9]{1,30}$',
      description: 'The ad account id from Pinterest Ads Manager (digits)',
    }),
    accessToken: secret('The Conversions API access token (conversion token) of the ad account', 2000),
    testMode: Type.Optional(
      Type.Boolean({
        description:
          'true: every conversion (live ones too) is sent with the API’s `test=true` (Pinterest validates and does not record it); test-mode conversions always are',
      }),
    ),
  },
  {
    additionalProperties: false,
    description: 'pinterest: the Conversions API of the ad account',
    'x-examples': {
      pinterest: { summary: 'Pinterest', value: { adAccountId: '549755885175', accessToken: 'pina_conversion-token' } },
    },
  },
);
