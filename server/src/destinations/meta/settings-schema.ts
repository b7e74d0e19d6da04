import { Type } from 'typebox';
import { optional, refundEvent, secret } from '../settings-schemas.js';

/** Meta's PUT body (api.md §8), as the OpenAPI document shows it; the adapter's `parse` checks a body. */
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
