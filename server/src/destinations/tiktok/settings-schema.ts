import { Type } from 'typebox';
import { optional, refundEvent, secret } from '../settings-schemas.js';

/** TikTok's PUT body (api.md §8), as the OpenAPI document shows it; the adapter's `parse` checks a body. */
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
