import type { CheckRequest, CheckResult } from '../adapter.js';
import type { TikTokEvent, TikTokSettings } from './mapping.js';
import { sendTikTok, type TikTokSecrets } from './sender.js';

/**
 * TikTok's documented test channel: one test event with the destination's testEventCode (it
 * shows in Events Manager → Test events, never in reports). Without a testEventCode there is
 * no way to check without a live event, and the answer says how to get one.
 */
export async function checkTikTok({
  settings,
  secrets,
  env,
  timeoutMs,
}: CheckRequest<TikTokSettings, TikTokSecrets>): Promise<CheckResult> {
  if (!settings.testEventCode) {
    return {
      ok: false,
      message:
        'TikTok is checked with a test event: set the tiktok destination’s testEventCode (TikTok Events Manager → your pixel → Test events) and test again',
    };
  }
  const now = Math.floor(Date.now() / 1000);
  const event: TikTokEvent = {
    event: 'ViewContent',
    event_time: now,
    event_id: `waytrack_check_${now}`,
    user: { user_agent: 'Waytrack destination check' },
    properties: { value: 0, currency: 'USD', order_id: `waytrack_check_${now}` },
  };
  const result = await sendTikTok({
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
    return {
      ok: true,
      message: `TikTok accepted a test event for pixel ${settings.pixelCode} (test event code ${settings.testEventCode})`,
    };
  }
  const error = outcome && 'error' in outcome ? outcome.error : 'TikTok gave no answer';
  const platform = /^TikTok error \(code \d+\): (.*?)(?: \(request_id [^)]*\))?(?: \u2014 .*)?$/s.exec(error)?.[1];
  return { ok: false, message: error, ...(platform && { platformMessage: platform }) };
}
