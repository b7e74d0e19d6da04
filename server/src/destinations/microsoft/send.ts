import { CREDENTIAL_HINTS } from '../../network-errors.js';
import {
  all,
  type CheckResult,
  clip,
  type DestinationEnv,
  type Outcome,
  parseJson,
  post,
  retryAfterMs,
  type SendResult,
} from '../adapter.js';
import type { MicrosoftEvent, MicrosoftSecrets, MicrosoftSettings } from './mapping.js';

/** Events per request: the Conversions API's limit (1,000 events, at most 1 MB). */
export const MICROSOFT_MAX_BATCH = 1000;

/** The answer's shape: `{eventsReceived, indexedErrors?: [{index, errorCode?, errorMessage}]}`, or `{error: {code, message}}`. */
interface Answer {
  eventsReceived?: unknown;
  indexedErrors?: unknown;
  requestId?: unknown;
  error?: { code?: unknown; message?: unknown } | unknown;
  message?: unknown;
}

function traceOf(headers: Headers, body: Answer | undefined): string | undefined {
  if (typeof body?.requestId === 'string') return body.requestId;
  return headers.get('x-ms-request-id') ?? headers.get('request-id') ?? undefined;
}

function messageOf(body: Answer | undefined): string {
  const error = body?.error as { code?: unknown; message?: unknown } | undefined;
  const code = typeof error?.code === 'string' || typeof error?.code === 'number' ? ` (${error.code})` : '';
  if (typeof error?.message === 'string') return `${error.message}${code}`;
  if (typeof body?.message === 'string') return body.message;
  return 'no message';
}

/** POST the events; 429 and 5xx are retried (Retry-After honoured), 4xx fail with Microsoft's message. */
export async function sendMicrosoft(
  settings: MicrosoftSettings,
  secrets: MicrosoftSecrets,
  payloads: MicrosoftEvent[],
  env: DestinationEnv,
  timeoutMs: number,
): Promise<SendResult> {
  const hide = [secrets.accessToken];
  const answer = await post(
    `${env.microsoftCapiUrl}/v1/${encodeURIComponent(settings.tagId)}/events`,
    {
      headers: { 'content-type': 'application/json', authorization: `Bearer ${secrets.accessToken}` },
      // continueOnValidationError: one invalid event does not cost the others (they are reported by index).
      body: JSON.stringify({ data: payloads, dataProvider: 'waytrack', continueOnValidationError: true }),
    },
    timeoutMs,
    'Microsoft Advertising',
  );
  if ('error' in answer) return all(payloads.length, { outcome: 'retry', error: clip(answer.error, hide) });
  const { response, text } = answer;
  const body = parseJson(text) as Answer | undefined;
  const traceId = traceOf(response.headers, body);
  const withTrace = (result: SendResult): SendResult => ({ ...result, ...(traceId && { traceId }) });
  const suffix = traceId ? ` (request ${traceId})` : '';
  if (response.status === 429 || response.status >= 500) {
    const hint = retryAfterMs(response.headers);
    const error = clip(`Microsoft Advertising error: HTTP ${response.status}: ${messageOf(body)}${suffix}`, hide);
    return withTrace(all(payloads.length, { outcome: 'retry', error, ...(hint !== undefined && { retryAfterMs: hint }) }));
  }
  if (!response.ok) {
    let error = `Microsoft Advertising error: HTTP ${response.status}: ${messageOf(body)}${suffix}`;
    if (response.status === 401 || response.status === 403) error += ` — ${CREDENTIAL_HINTS.microsoft}`;
    return withTrace(all(payloads.length, { outcome: 'failed', error: clip(error, hide) }));
  }
  if (!body || typeof body.eventsReceived !== 'number') {
    return withTrace(
      all(payloads.length, { outcome: 'retry', error: `Unexpected answer from Microsoft Advertising: HTTP ${response.status}` }),
    );
  }
  const refused = new Map<number, string>();
  if (Array.isArray(body.indexedErrors)) {
    for (const item of body.indexedErrors as Array<Record<string, unknown>>) {
      if (typeof item?.index !== 'number') continue;
      const code = typeof item.errorCode === 'string' ? ` (${item.errorCode})` : '';
      const message = typeof item.errorMessage === 'string' ? item.errorMessage : 'refused';
      refused.set(item.index, clip(`Microsoft Advertising refused the event: ${message}${code}${suffix}`, hide));
    }
  }
  const outcomes: Outcome[] = payloads.map((_, index) => {
    const error = refused.get(index);
    return error ? { outcome: 'failed', error } : { outcome: 'sent' };
  });
  return withTrace({ outcomes });
}

/**
 * The destination test (§12) without a live conversion: an empty `data` array. Microsoft answers
 * 401/403 to a token or tag it does not accept, and checks the token before the body, so a
 * validation answer (400 about the empty data) or a success means the credentials are good.
 */
export async function checkMicrosoft(
  settings: MicrosoftSettings,
  secrets: MicrosoftSecrets,
  env: DestinationEnv,
  timeoutMs: number,
): Promise<CheckResult> {
  const hide = [secrets.accessToken];
  const answer = await post(
    `${env.microsoftCapiUrl}/v1/${encodeURIComponent(settings.tagId)}/events`,
    {
      headers: { 'content-type': 'application/json', authorization: `Bearer ${secrets.accessToken}` },
      body: JSON.stringify({ data: [], dataProvider: 'waytrack' }),
    },
    timeoutMs,
    'Microsoft Advertising',
  );
  if ('error' in answer) return { ok: false, message: clip(answer.error, hide) };
  const { response, text } = answer;
  const body = parseJson(text) as Answer | undefined;
  const platform = clip(messageOf(body), hide);
  if (response.status === 401 || response.status === 403) {
    return {
      ok: false,
      message: `Microsoft Advertising refused the access token for UET tag ${settings.tagId} (HTTP ${response.status}) — ${CREDENTIAL_HINTS.microsoft}`,
      platformMessage: platform,
    };
  }
  if (response.status === 429 || response.status >= 500) {
    return {
      ok: false,
      message: `Microsoft Advertising could not answer now (HTTP ${response.status}); test again later`,
      platformMessage: platform,
    };
  }
  return { ok: true, message: `Microsoft Advertising accepted the access token for UET tag ${settings.tagId}` };
}
