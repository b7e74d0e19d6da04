import { CREDENTIAL_HINTS } from '../../network-errors.js';
import { all, clip, parseJson, post, retryAfterMs, type SendRequest, type SendResult } from '../adapter.js';
import type { TikTokSettings } from './mapping.js';

export interface TikTokSecrets {
  accessToken: string;
}

/**
 * TikTok answers HTTP 200 with its own `code`: 0 is success. 40100 is its rate limit ("too many
 * requests") and 5xxxx its server errors: retried; any other code is about the request or its
 * events (token, pixel, parameters): failed with TikTok's message.
 */
/** TikTok's answers refusing the access token (no permission, expired, missing, revoked). */
const TIKTOK_AUTH_CODES = new Set([40001, 40102, 40104, 40105]);

export function isRetryableTikTokCode(code: number): boolean {
  return code === 40100 || (code >= 50000 && code < 60000);
}

/** One batch of events to `event/track/`, TikTok's answer classified (sent, retry or failed, with its request_id). */
export async function sendTikTok({
  settings,
  secrets,
  live,
  payloads,
  env,
  timeoutMs,
}: SendRequest<TikTokSettings, TikTokSecrets>): Promise<SendResult> {
  const hide = [secrets.accessToken];
  const answer = await post(
    `${env.tiktokApiUrl}/open_api/v1.3/event/track/`,
    {
      headers: { 'content-type': 'application/json', 'access-token': secrets.accessToken },
      body: JSON.stringify({
        event_source: 'web',
        event_source_id: settings.pixelCode,
        ...(!live && settings.testEventCode && { test_event_code: settings.testEventCode }),
        data: payloads,
      }),
    },
    timeoutMs,
    'TikTok',
  );
  if ('error' in answer) return all(payloads.length, { outcome: 'retry', error: clip(answer.error, hide) });
  const { response, text: raw } = answer;
  const body = parseJson(raw) as { code?: unknown; message?: unknown; request_id?: unknown } | undefined;
  const traceId = typeof body?.request_id === 'string' ? body.request_id : undefined;
  const hint = retryAfterMs(response.headers);
  if (typeof body?.code !== 'number') {
    const error = `Unexpected answer from TikTok: HTTP ${response.status}`;
    const outcome =
      response.status >= 500 || response.status === 429 || response.ok
        ? { outcome: 'retry' as const, error, ...(hint !== undefined && { retryAfterMs: hint }) }
        : { outcome: 'failed' as const, error };
    return { ...all(payloads.length, outcome), ...(traceId && { traceId }) };
  }
  if (body.code === 0 && response.ok) return { ...all(payloads.length, { outcome: 'sent' }), ...(traceId && { traceId }) };
  let message = clip(
    `TikTok error (code ${body.code}): ${typeof body.message === 'string' ? body.message : 'no message'}${
      traceId ? ` (request_id ${traceId})` : ''
    }`,
    hide,
  );
  const retry = isRetryableTikTokCode(body.code) || response.status >= 500 || response.status === 429;
  if (!retry && (TIKTOK_AUTH_CODES.has(body.code) || response.status === 401)) message += ` — ${CREDENTIAL_HINTS.tiktok}`;
  return {
    ...all(
      payloads.length,
      retry
        ? { outcome: 'retry', error: message, ...(hint !== undefined && { retryAfterMs: hint }) }
        : { outcome: 'failed', error: message },
    ),
    ...(traceId && { traceId }),
  };
}
