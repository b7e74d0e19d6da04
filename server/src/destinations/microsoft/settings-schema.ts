import { Type } from 'typebox';
import { secret } from '../settings-schemas.js';

/** Microsoft's PUT body (api.md §12), as the OpenAPI document shows it; the adapter's `parse` checks a body. */
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
