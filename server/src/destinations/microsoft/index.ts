import { type Adapter, all } from '../adapter.js';
import { onlyFields, text } from '../fields.js';
import { type MicrosoftEvent, type MicrosoftSecrets, type MicrosoftSettings, planMicrosoft } from './mapping.js';
import { checkMicrosoft, MICROSOFT_MAX_BATCH, sendMicrosoft } from './send.js';
import { MICROSOFT_SETTINGS } from './settings-schema.js';

export type { MicrosoftEvent, MicrosoftSecrets, MicrosoftSettings } from './mapping.js';

/**
 * Microsoft Advertising through the UET Conversions API (api.md §12; README.md here). No
 * `planRefund`: CAPI takes no adjustments or negative conversions, so refunds are not sent.
 */
export const microsoft: Adapter<MicrosoftSettings, MicrosoftSecrets> = {
  kind: 'microsoft',
  label: 'Microsoft Advertising',
  maxBatch: MICROSOFT_MAX_BATCH,
  ageLimit: 'within 90 days of the click',
  settingsSchema: MICROSOFT_SETTINGS,

  parse(body, previous) {
    onlyFields(body, ['tagId', 'accessToken']);
    const tagId = text(body, 'tagId', {
      required: true,
      pattern: /^[0-9]{4,20}$/,
      max: 20,
      hint: 'the UET tag ID from Microsoft Advertising (Tools → UET tag; digits)',
    }) as string;
    const accessToken = text(body, 'accessToken', {
      required: true,
      max: 4000,
      previous: previous?.secrets.accessToken,
    }) as string;
    return { settings: { tagId }, secrets: { accessToken } };
  },

  present(settings) {
    return { tagId: settings.tagId, accessTokenConfigured: true };
  },

  plan: planMicrosoft,

  async send({ settings, secrets, live, payloads, env, timeoutMs }) {
    // Test-mode conversions are never planned (no test channel); a stray one is not sent live.
    if (!live) return all(payloads.length, { outcome: 'failed', error: 'Microsoft Advertising has no test channel' });
    return sendMicrosoft(settings, secrets, payloads as MicrosoftEvent[], env, timeoutMs);
  },

  check({ settings, secrets, env, timeoutMs }) {
    return checkMicrosoft(settings, secrets, env, timeoutMs);
  },
};
