import { fieldError } from '../../http/errors.js';
import type { Adapter } from '../adapter.js';
import { onlyFields, text } from '../fields.js';
import { checkPinterest } from './check.js';
import { type PinterestSettings, planPinterest } from './mapping.js';
import { type PinterestSecrets, sendPinterest } from './sender.js';
import { PINTEREST_SETTINGS } from './settings-schema.js';

export type { PinterestEvent, PinterestSettings } from './mapping.js';
export type { PinterestSecrets } from './sender.js';

/** Events per request: Pinterest's limit for the events endpoint is 1000. */
const MAX_BATCH = 1000;

function flag(body: Record<string, unknown>, field: string): boolean | undefined {
  const value = body[field];
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'boolean') throw fieldError('invalid_request', field, 'invalid_type', `${field} must be a boolean`);
  return value;
}

/**
 * Pinterest's Conversions API (api.md §12): its settings (settings-schema.ts), its events
 * (mapping.ts), the request and Pinterest's answers (sender.ts) and the check, an
 * authenticated read of the ad account (check.ts). Pinterest takes no refunds: `planRefund` is
 * left out (its API has no refund or negative-value event; README.md).
 */
export const pinterest: Adapter<PinterestSettings, PinterestSecrets> = {
  kind: 'pinterest',
  label: 'Pinterest',
  maxBatch: MAX_BATCH,
  ageLimit: 'within Pinterest’s 7 days',
  settingsSchema: PINTEREST_SETTINGS,

  parse(body, previous) {
    onlyFields(body, ['adAccountId', 'accessToken', 'testMode']);
    const adAccountId = text(body, 'adAccountId', {
      required: true,
      pattern: /^[0-9]{1,30}$/,
      max: 30,
      hint: 'the ad account id from Pinterest Ads Manager (digits)',
    }) as string;
    const accessToken = text(body, 'accessToken', {
      required: true,
      max: 2000,
      previous: previous?.secrets.accessToken,
    }) as string;
    const testMode = flag(body, 'testMode');
    return { settings: { adAccountId, ...(testMode && { testMode }) }, secrets: { accessToken } };
  },

  present(settings) {
    return { adAccountId: settings.adAccountId, testMode: settings.testMode === true, accessTokenConfigured: true };
  },

  plan: planPinterest,
  send: sendPinterest,
  check: checkPinterest,
};
