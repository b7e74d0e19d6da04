import type { Adapter } from '../adapter.js';
import { onlyFields, text } from '../fields.js';
import { checkReddit } from './check.js';
import { planReddit, type RedditSettings } from './mapping.js';
import { type RedditSecrets, sendReddit } from './sender.js';
import { REDDIT_SETTINGS } from './settings-schema.js';

export type { RedditEvent, RedditSettings } from './mapping.js';
export type { RedditSecrets } from './sender.js';

/** Events per request: Reddit's limit is 1000. */
const MAX_BATCH = 1000;

/**
 * Reddit's Conversions API v2.0 (api.md §12): its settings (settings-schema.ts), its events
 * (mapping.ts), the request through the ad account's rate limiter and Reddit's answers
 * (sender.ts, rate-limit.ts) and the check with a test-mode event (check.ts). No refunds:
 * Reddit takes neither negative values nor a refund event.
 */
export const reddit: Adapter<RedditSettings, RedditSecrets> = {
  kind: 'reddit',
  label: 'Reddit',
  maxBatch: MAX_BATCH,
  ageLimit: 'to Reddit within 7 days of the event',
  settingsSchema: REDDIT_SETTINGS,

  parse(body, previous) {
    onlyFields(body, ['adAccountId', 'accessToken']);
    const adAccountId = text(body, 'adAccountId', {
      required: true,
      pattern: /^(t2|a2)_[A-Za-z0-9]{1,36}$/,
      max: 40,
      hint: 'the Reddit Ads account id, t2_… or a2_…',
    }) as string;
    const accessToken = text(body, 'accessToken', {
      required: true,
      max: 2000,
      previous: previous?.secrets.accessToken,
    }) as string;
    return { settings: { adAccountId }, secrets: { accessToken } };
  },

  present(settings) {
    return { adAccountId: settings.adAccountId, accessTokenConfigured: true };
  },

  plan: planReddit,
  send: (request) => sendReddit(request),
  check: checkReddit,
};
