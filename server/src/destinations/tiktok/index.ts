import type { Adapter } from '../adapter.js';
import { onlyFields, REFUND_EVENT, text } from '../fields.js';
import { checkTikTok } from './check.js';
import { planTikTok, planTikTokRefund, type TikTokSettings } from './mapping.js';
import { sendTikTok, type TikTokSecrets } from './sender.js';
import { TIKTOK_SETTINGS } from './settings-schema.js';

export type { TikTokEvent, TikTokSettings } from './mapping.js';
export type { TikTokSecrets } from './sender.js';

/** Events per request: TikTok's limit for event/track is 1000. */
const MAX_BATCH = 1000;

/**
 * TikTok's Events API 2.0 (api.md §8): its settings (settings-schema.ts), its events
 * (mapping.ts), the request and TikTok's answers (sender.ts) and the check with a test event
 * (check.ts).
 */
export const tiktok: Adapter<TikTokSettings, TikTokSecrets> = {
  kind: 'tiktok',
  label: 'TikTok',
  maxBatch: MAX_BATCH,
  settingsSchema: TIKTOK_SETTINGS,

  parse(body, previous) {
    onlyFields(body, ['pixelCode', 'accessToken', 'testEventCode', 'refundEvent']);
    const pixelCode = text(body, 'pixelCode', {
      required: true,
      pattern: /^[A-Z0-9]{10,40}$/,
      max: 40,
      hint: 'the pixel code from TikTok Events Manager (capital letters and digits)',
    }) as string;
    const testEventCode = text(body, 'testEventCode', { required: false, max: 100, pattern: /^[A-Za-z0-9_-]+$/ });
    const accessToken = text(body, 'accessToken', {
      required: true,
      max: 2000,
      previous: previous?.secrets.accessToken,
    }) as string;
    const refundEvent = text(body, 'refundEvent', { required: false, ...REFUND_EVENT });
    return {
      settings: { pixelCode, ...(testEventCode && { testEventCode }), ...(refundEvent && { refundEvent }) },
      secrets: { accessToken },
    };
  },

  present(settings) {
    return {
      pixelCode: settings.pixelCode,
      testEventCode: settings.testEventCode ?? null,
      refundEvent: settings.refundEvent ?? null,
      accessTokenConfigured: true,
    };
  },

  plan: planTikTok,
  planRefund: planTikTokRefund,
  send: sendTikTok,
  check: checkTikTok,
};
