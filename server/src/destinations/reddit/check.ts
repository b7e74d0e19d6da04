import type { CheckRequest, CheckResult } from '../adapter.js';
import type { RedditEvent, RedditSettings } from './mapping.js';
import { type RedditSecrets, sendReddit } from './sender.js';

/**
 * Reddit's documented way to try the credentials without a live conversion: one event with
 * `test_mode: true` (Reddit validates it and the token, and counts nothing).
 */
export async function checkReddit({
  settings,
  secrets,
  env,
  timeoutMs,
}: CheckRequest<RedditSettings, RedditSecrets>): Promise<CheckResult> {
  const now = Date.now();
  const event: RedditEvent = {
    event_at: new Date(now).toISOString(),
    event_type: { tracking_type: 'PageVisit' },
    event_metadata: { conversion_id: `waytrack_check_${now}`, currency: 'USD', value_decimal: 0 },
    user: { user_agent: 'Waytrack destination check' },
  };
  const result = await sendReddit({
    settings,
    secrets,
    live: false,
    kind: 'conversion',
    route: '',
    payloads: [event],
    env,
    timeoutMs,
  });
  const outcome = result.outcomes[0];
  if (outcome?.outcome === 'sent') {
    return { ok: true, message: `Reddit accepted a test-mode event for ad account ${settings.adAccountId}` };
  }
  const error = outcome && 'error' in outcome ? outcome.error : 'Reddit gave no answer';
  const platform = /^Reddit error \(HTTP \d+\): (.*?)(?: \u2014 .*)?$/s.exec(error)?.[1];
  return { ok: false, message: error, ...(platform && { platformMessage: platform }) };
}
