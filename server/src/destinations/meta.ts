import type { StoresTable } from '../db/schema.js';
import { onlyFields, REFUND_EVENT, text } from './fields.js';
import { META_SETTINGS } from './settings-schemas.js';

/**
 * The Meta destination's settings: the store's own `pixelId`, `capiAccessToken` and
 * `capiTestEventCode` (api.md §2, §8). Its conversions are forwarded by capi/ (the Conversions
 * API outbox), not by the shared destination outbox.
 */
export const metaSettings = {
  kind: 'meta' as const,
  label: 'Meta',
  settingsSchema: META_SETTINGS,

  /** A PUT body, checked; an access token left out keeps the stored one (required while none is). */
  parse(body: Record<string, unknown>, store: StoresTable) {
    onlyFields(body, ['pixelId', 'accessToken', 'testEventCode', 'refundEvent']);
    const pixelId = text(body, 'pixelId', { required: true, pattern: /^\d{5,20}$/, hint: '5–20 digits' }) as string;
    const accessToken = text(body, 'accessToken', { required: !store.capi_access_token, max: 2000 });
    const testEventCode = text(body, 'testEventCode', { required: false, max: 100 });
    const refundEvent = text(body, 'refundEvent', { required: false, ...REFUND_EVENT });
    return { pixelId, accessToken, testEventCode: testEventCode ?? null, refundEvent: refundEvent ?? null };
  },

  /** The settings as the API shows them; null when Meta is not configured. */
  present(store: StoresTable): Record<string, unknown> | null {
    if (!store.pixel_id || !store.capi_access_token) return null;
    return {
      pixelId: store.pixel_id,
      testEventCode: store.capi_test_event_code,
      refundEvent: store.capi_refund_event,
      accessTokenConfigured: true,
    };
  },
};
