import { all, clip, type Outcome, parseJson, post, retryAfterMs, type SendRequest, type SendResult } from '../adapter.js';
import type { PinterestSettings } from './mapping.js';

export interface PinterestSecrets {
  accessToken: string;
}

export const PINTEREST_CREDENTIAL_HINT =
  'renew the conversion access token (Pinterest Ads Manager → Ads → Conversions → Conversions API → Generate new token) and set it as the pinterest destination’s accessToken';

/** The request's id Pinterest sends back, for reconciliation (api.md §10). */
function traceOf(headers: Headers): string | undefined {
  return headers.get('x-pinterest-rid') ?? headers.get('x-request-id') ?? undefined;
}

/** `POST /v5/ad_accounts/{id}/events`, with `test=true` for test-mode conversions or a `testMode` destination. */
export function pinterestEventsUrl(base: string, settings: PinterestSettings, live: boolean): string {
  const test = !live || settings.testMode === true;
  return `${base}/v5/ad_accounts/${encodeURIComponent(settings.adAccountId)}/events${test ? '?test=true' : ''}`;
}

interface PinterestAnswer {
  code?: unknown;
  message?: unknown;
  num_events_received?: unknown;
  events?: Array<{ status?: unknown; error_message?: unknown; warning_message?: unknown }>;
}

/**
 * One batch of events, Pinterest's answer classified: 200 with one `events[i].status`
 * (processed or failed with its `error_message`) per event, in order; 429 and 5xx retried
 * (honouring Retry-After); 401/403 failed naming the token to renew; other errors
 * (`{code, message}`) failed with Pinterest's message.
 */
export async function sendPinterest({
  settings,
  secrets,
  live,
  payloads,
  env,
  timeoutMs,
}: SendRequest<PinterestSettings, PinterestSecrets>): Promise<SendResult> {
  const hide = [secrets.accessToken];
  const answer = await post(
    pinterestEventsUrl(env.pinterestApiUrl, settings, live),
    {
      headers: { 'content-type': 'application/json', authorization: `Bearer ${secrets.accessToken}` },
      body: JSON.stringify({ data: payloads }),
    },
    timeoutMs,
    'Pinterest',
  );
  if ('error' in answer) return all(payloads.length, { outcome: 'retry', error: clip(answer.error, hide) });
  const { response, text: raw } = answer;
  const traceId = traceOf(response.headers);
  const trace = traceId ? { traceId } : {};
  const body = parseJson(raw) as PinterestAnswer | undefined;
  if (response.ok && Array.isArray(body?.events)) {
    const events = body.events;
    const outcomes = payloads.map((_, index): Outcome => {
      const event = events[index];
      if (event?.status === 'processed') return { outcome: 'sent' };
      const reason = typeof event?.error_message === 'string' && event.error_message ? event.error_message : 'no message';
      if (!event) return { outcome: 'retry', error: `Pinterest did not answer for event ${index} of the batch` };
      return { outcome: 'failed', error: clip(`Pinterest refused the event: ${reason}`, hide) };
    });
    return { outcomes, ...trace };
  }
  const platform = typeof body?.message === 'string' ? body.message : undefined;
  const code = typeof body?.code === 'number' ? ` (code ${body.code})` : '';
  let message = clip(`Pinterest error: HTTP ${response.status}${code}: ${platform ?? (raw.slice(0, 200) || 'no message')}`, hide);
  if (response.status === 429 || response.status >= 500 || response.ok) {
    const hint = retryAfterMs(response.headers);
    return {
      ...all(payloads.length, { outcome: 'retry', error: message, ...(hint !== undefined && { retryAfterMs: hint }) }),
      ...trace,
    };
  }
  if (response.status === 401 || response.status === 403) message = clip(`${message} — ${PINTEREST_CREDENTIAL_HINT}`, hide);
  return { ...all(payloads.length, { outcome: 'failed', error: message }), ...trace };
}
