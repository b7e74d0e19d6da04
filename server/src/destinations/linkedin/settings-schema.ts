import { Type } from 'typebox';
import { secret } from '../settings-schemas.js';

/** LinkedIn's PUT body (api.md §12), as the OpenAPI document shows it; the adapter's `parse` checks a body. */
export const LINKEDIN_SETTINGS = Type.Object(
  {
    conversionRuleId: Type.String({
      maxLength: 60,
      pattern: '^(urn:lla:llaPartnerConversion:)?\\d{1,20}$',
      description:
        'The conversion rule: urn:lla:llaPartnerConversion:<digits>, or the digits alone (shown as the URN); Campaign Manager → Analyze → Conversion tracking → the rule',
    }),
    accessToken: secret('An OAuth access token with the rw_conversions scope', 2000),
  },
  {
    additionalProperties: false,
    description: 'linkedin: the Conversions API',
    'x-examples': {
      linkedin: {
        summary: 'LinkedIn',
        value: { conversionRuleId: 'urn:lla:llaPartnerConversion:123456', accessToken: 'AQX-linkedin-token' },
      },
    },
  },
);
