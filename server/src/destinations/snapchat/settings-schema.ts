import { Type } from 'typebox';
import { secret } from '../settings-schemas.js';

/** Snapchat's PUT body (api.md §12), as the OpenAPI document shows it; the adapter's `parse` checks a body. */
export const SNAPCHAT_SETTINGS = Type.Object(
  {
    pixelId: Type.String({
      maxLength: 64,
      pattern: '^[A-Za-z0-9-]{1,64}$',
      description: 'The Snap Pixel id from Snapchat Ads Manager → Events Manager (a UUID)',
    }),
    accessToken: secret('The Conversions API token (Business Details → Conversions API Tokens)', 2000),
  },
  {
    additionalProperties: false,
    description: 'snapchat: the Conversions API v3 of the pixel',
    'x-examples': {
      snapchat: {
        summary: 'Snapchat',
        value: { pixelId: '5bf81ee1-15b1-4dc1-b636-d7dae49b950e', accessToken: 'snap-capi-token' },
      },
    },
  },
);
