import { all, clip, type Outcome, parseJson, post, retryAfterMs, type SendRequest, type SendResult } from '../adapter.js';
import type { SnapchatSettings } from './mapping.js';

export interface SnapchatSecrets {
  accessToken: string;
}

export const SNAPCHAT_CREDENTIAL_HINT =
  'renew the Conversions API token (Snapchat Ads Manager → Business Details → Conversions API Tokens → Generate Token; an Organization Admin can) and set it as the snapchat destination’s accessToken';

const OK = new Set(['VALID', 'SUCCESS']);

/** `/v3/{pixelId}/events`, or its Test Event Tool `/events/validate` for test-mode conversions; the token in `access_token`. */
export function snapchatEventsUrl(base: string, settings: SnapchatSettings, token: string, live: boolean): string {
  return `${base}/v3/${encodeURIComponent(settings.pixelId)}/events${live ? '' : '/validate'}?access_token=${encodeURIComponent(token)}`;
}

interface SnapAnswer {
  status?: unknown;
  reason?: unknown;
  request_id?: unknown;
  events?: Array<{ status?: unknown; reason?: unknown; error_message?: unknown }>;
}

const text = (value: unknown) => (typeof value === 'string' && value ? value : undefined);

/**
 * One batch of events, Snap's answer classified: `status` VALID (or SUCCESS) → sent, with per
 * event outcomes when the answer lists `events` (the validate endpoint's results); 429 and 5xx
 * retried (Retry-After honoured); 401/403 failed naming the token to renew; INVALID and other
 * errors failed with Snap's `reason`.
 */
export async function sendSnapchat({
  settings,
  secrets,
  live,
  payloads,
  env,
  timeoutMs,
}: SendRequest<SnapchatSettings, SnapchatSecrets>): Promise<SendResult> {
  const hide = [secrets.accessToken, encodeURIComponent(secrets.accessToken)];
  const answer = await post(
    snapchatEventsUrl(env.snapchatApiUrl, settings, secrets.accessToken, live),
    { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ data: payloads }) },
    timeoutMs,
    'Snapchat',
  );
  if ('error' in answer) return all(payloads.length, { outcome: 'retry', error: clip(answer.error, hide) });
  const { response, text: raw } = answer;
  const body = parseJson(raw) as SnapAnswer | undefined;
  const traceId = text(body?.request_id) ?? response.headers.get('x-request-id') ?? undefined;
  const trace = traceId ? { traceId } : {};
  const status = text(body?.status);
  if (response.ok && status && OK.has(status)) {
    const events = Array.isArray(body?.events) ? body.events : undefined;
    if (!events) return { ...all(payloads.length, { outcome: 'sent' }), ...trace };
    const outcomes = payloads.map((_, index): Outcome => {
      const event = events[index];
      const eventStatus = text(event?.status);
      if (!event || !eventStatus || OK.has(eventStatus)) return { outcome: 'sent' };
      const reason = text(event.reason) ?? text(event.error_message) ?? eventStatus;
      return { outcome: 'failed', error: clip(`Snapchat refused the event: ${reason}`, hide) };
    });
    return { outcomes, ...trace };
  }
  let message = clip(
    `Snapchat error: HTTP ${response.status}${status ? ` ${status}` : ''}: ${text(body?.reason) ?? (raw.slice(0, 200) || 'no reason')}`,
    hide,
  );
  if (response.status === 429 || response.status >= 500 || response.ok) {
    const hint = retryAfterMs(response.headers);
    return {
      ...all(payloads.length, { outcome: 'retry', error: message, ...(hint !== undefined && { retryAfterMs: hint }) }),
      ...trace,
    };
  }
  if (response.status === 401 || response.status === 403) message = clip(`${message} — ${SNAPCHAT_CREDENTIAL_HINT}`, hide);
  // Snap refuses a whole batch for one bad event (INVALID): the outbox halves it until that event stands alone.
  const split = response.status === 400 && payloads.length > 1;
  return { ...all(payloads.length, { outcome: 'failed', error: message }), ...trace, ...(split && { split }) };
}
