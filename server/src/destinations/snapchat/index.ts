import type { Adapter } from '../adapter.js';
import { onlyFields, text } from '../fields.js';
import { checkSnapchat } from './check.js';
import { planSnapchat, type SnapchatSettings } from './mapping.js';
import { type SnapchatSecrets, sendSnapchat } from './sender.js';
import { SNAPCHAT_SETTINGS } from './settings-schema.js';

export type { SnapchatEvent, SnapchatSettings } from './mapping.js';
export type { SnapchatSecrets } from './sender.js';

/** Events per request (Snap documents up to 2000; 1000 keeps well inside it). */
const MAX_BATCH = 1000;

/**
 * Snap's Conversions API v3 (api.md §12): its settings (settings-schema.ts), its events
 * (mapping.ts), the request and Snap's answers (sender.ts) and the check with the Test Event
 * Tool (check.ts). Snap takes no refunds: `planRefund` is left out (README.md).
 */
export const snapchat: Adapter<SnapchatSettings, SnapchatSecrets> = {
  kind: 'snapchat',
  label: 'Snapchat',
  maxBatch: MAX_BATCH,
  bisect: true,
  ageLimit: 'within Snap’s 7 days',
  settingsSchema: SNAPCHAT_SETTINGS,

  parse(body, previous) {
    onlyFields(body, ['pixelId', 'accessToken']);
    const pixelId = text(body, 'pixelId', {
      required: true,
      pattern: /^[A-Za-z0-9-]{1,64}$/,
      max: 64,
      hint: 'the Snap Pixel id from Events Manager (letters, digits and dashes)',
    }) as string;
    const accessToken = text(body, 'accessToken', {
      required: true,
      max: 2000,
      previous: previous?.secrets.accessToken,
    }) as string;
    return { settings: { pixelId }, secrets: { accessToken } };
  },

  present(settings) {
    return { pixelId: settings.pixelId, accessTokenConfigured: true };
  },

  plan: planSnapchat,
  send: sendSnapchat,
  check: checkSnapchat,
};
