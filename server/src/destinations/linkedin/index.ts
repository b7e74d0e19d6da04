import type { Adapter } from '../adapter.js';
import { onlyFields, text } from '../fields.js';
import { checkLinkedIn } from './check.js';
import { type LinkedInSettings, planLinkedIn } from './mapping.js';
import { type LinkedInSecrets, sendLinkedIn } from './sender.js';
import { LINKEDIN_SETTINGS } from './settings-schema.js';

export type { LinkedInEvent, LinkedInSettings } from './mapping.js';
export type { LinkedInSecrets } from './sender.js';

/** Events per request: a conservative batch for BATCH_CREATE (see README.md). */
const MAX_BATCH = 1000;
const URN = 'urn:lla:llaPartnerConversion:';

/**
 * LinkedIn's Conversions API (api.md §12): its settings (settings-schema.ts), its conversion
 * events (mapping.ts), the BATCH_CREATE request and LinkedIn's per-element answers (sender.ts)
 * and the check, a read of the conversion rule (check.ts). No refunds and no test mode.
 */
export const linkedin: Adapter<LinkedInSettings, LinkedInSecrets> = {
  kind: 'linkedin',
  label: 'LinkedIn',
  maxBatch: MAX_BATCH,
  ageLimit: 'to LinkedIn within 90 days of the event',
  settingsSchema: LINKEDIN_SETTINGS,

  parse(body, previous) {
    onlyFields(body, ['conversionRuleId', 'accessToken']);
    const given = text(body, 'conversionRuleId', {
      required: true,
      pattern: /^(urn:lla:llaPartnerConversion:)?\d{1,20}$/,
      max: 60,
      hint: 'urn:lla:llaPartnerConversion:<digits>, or the digits alone',
    }) as string;
    const accessToken = text(body, 'accessToken', {
      required: true,
      max: 2000,
      previous: previous?.secrets.accessToken,
    }) as string;
    const conversionRuleId = given.startsWith(URN) ? given : `${URN}${given}`;
    return { settings: { conversionRuleId }, secrets: { accessToken } };
  },

  present(settings) {
    return { conversionRuleId: settings.conversionRuleId, accessTokenConfigured: true };
  },

  plan: planLinkedIn,
  send: sendLinkedIn,
  check: checkLinkedIn,
};
