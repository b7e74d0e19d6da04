import type { CheckRequest, CheckResult } from '../adapter.js';
import type { SnapchatEvent, SnapchatSettings } from './mapping.js';
import { type SnapchatSecrets, sendSnapchat } from './sender.js';

/**
 * Snap's Test Event Tool (api.md §12): one made-up event to `/v3/{pixelId}/events/validate`
 * with the token; Snap validates it and records nothing.
 */
export async function checkSnapchat({
  settings,
  secrets,
  env,
  timeoutMs,
}: CheckRequest<SnapchatSettings, SnapchatSecrets>): Promise<CheckResult> {
  const now = Math.floor(Date.now() / 1000);
  const event: SnapchatEvent = {
    event_name: 'PAGE_VIEW',
    action_source: 'WEB',
    event_time: now,
    event_id: `waytrack_check_${now}`,
    user_data: { client_ip_address: '192.0.2.1', client_user_agent: 'Waytrack destination check' },
    custom_data: { currency: 'USD', value: 0, order_id: `waytrack_check_${now}` },
  };
  const result = await sendSnapchat({
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
    return { ok: true, message: `Snapchat validated a test event for pixel ${settings.pixelId} with the access token` };
  }
  const error = outcome && 'error' in outcome ? outcome.error : 'Snapchat gave no answer';
  const platform =
    /^Snapchat error: HTTP \d+(?: [A-Z_]+)?: (.*?)(?: \u2014 .*)?$/s.exec(error)?.[1] ??
    /^Snapchat refused the event: (.*)$/s.exec(error)?.[1];
  return { ok: false, message: error, ...(platform && { platformMessage: platform }) };
}
