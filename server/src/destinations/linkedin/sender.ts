import { all, clip, type Outcome, parseJson, post, retryAfterMs, type SendRequest, type SendResult } from '../adapter.js';
import type { LinkedInSettings } from './mapping.js';

export interface LinkedInSecrets {
  accessToken: string;
}

/** The API version sent as `LinkedIn-Version` (LinkedIn keeps each monthly version for a year). */
export const LINKEDIN_VERSION = '202411';

/** Where the token is renewed, for an answer refusing it (api.md §12: name the credential and where). */
export const LINKEDIN_TOKEN_HINT =
  'renew the access token (LinkedIn Developer Portal → your app → Auth → OAuth 2.0 tools, scope rw_conversions; tokens last 60 days) and set it as the linkedin destination’s accessToken';

/** The headers of every request to LinkedIn's REST API. */
export function linkedInHeaders(accessToken: string): Record<string, string> {
  return {
    authorization: `Bearer ${accessToken}`,
    'linkedin-version': LINKEDIN_VERSION,
    'x-restli-protocol-version': '2.0.0',
  };
}

interface ElementAnswer {
  status?: unknown;
  error?: { message?: unknown; code?: unknown };
  message?: unknown;
}

const messageOf = (body: { message?: unknown; error?: { message?: unknown } } | undefined) =>
  typeof body?.message === 'string' ? body.message : typeof body?.error?.message === 'string' ? body.error.message : undefined;

/**
 * One batch to `/rest/conversionEvents` (BATCH_CREATE). LinkedIn answers 200 with one entry per
 * element, in order: `{status: 201}` is sent, a 4xx status failed with its error's message, a
 * 429/5xx retried. A request-level 4xx is the whole batch's: 401 names the token, 403 the
 * conversion rule's ad account; 429 and 5xx are retried (Retry-After honored). The
 * `x-li-uuid` header is the request's id (the trace id).
 */
export async function sendLinkedIn({
  secrets,
  payloads,
  env,
  timeoutMs,
}: SendRequest<LinkedInSettings, LinkedInSecrets>): Promise<SendResult> {
  const hide = [secrets.accessToken];
  const answer = await post(
    `${env.linkedinApiUrl}/rest/conversionEvents`,
    {
      headers: {
        'content-type': 'application/json',
        'x-restli-method': 'BATCH_CREATE',
        ...linkedInHeaders(secrets.accessToken),
      },
      body: JSON.stringify({ elements: payloads }),
    },
    timeoutMs,
    'LinkedIn',
  );
  if ('error' in answer) return all(payloads.length, { outcome: 'retry', error: clip(answer.error, hide) });
  const { response, text: raw } = answer;
  const traceId = response.headers.get('x-li-uuid') ?? undefined;
  const trace = traceId ? { traceId } : {};
  const body = parseJson(raw) as { elements?: ElementAnswer[]; message?: unknown; error?: { message?: unknown } } | undefined;
  const hint = retryAfterMs(response.headers);
  if (!response.ok) {
    let message = clip(
      `LinkedIn error (HTTP ${response.status}): ${messageOf(body) ?? (raw.slice(0, 200) || 'no message')}`,
      hide,
    );
    if (response.status === 429 || response.status >= 500) {
      return {
        ...all(payloads.length, { outcome: 'retry', error: message, ...(hint !== undefined && { retryAfterMs: hint }) }),
        ...trace,
      };
    }
    if (response.status === 401) message += ` — ${LINKEDIN_TOKEN_HINT}`;
    if (response.status === 403) {
      message += ' — the token’s member needs access to the ad account of the linkedin destination’s conversionRuleId';
    }
    return { ...all(payloads.length, { outcome: 'failed', error: message }), ...trace };
  }
  const elements = Array.isArray(body?.elements) ? body.elements : undefined;
  if (!elements || elements.length !== payloads.length) {
    // A 200 without one answer per element: LinkedIn took the batch (BATCH_CREATE is all or per element).
    return { ...all(payloads.length, { outcome: 'sent' }), ...trace };
  }
  const outcomes = elements.map((element): Outcome => {
    const status = typeof element.status === 'number' ? element.status : 201;
    if (status >= 200 && status < 300) return { outcome: 'sent' };
    const said = messageOf(element) ?? 'no message';
    const error = clip(`LinkedIn refused the event (status ${status}): ${said}`, hide);
    return status === 429 || status >= 500 ? { outcome: 'retry', error } : { outcome: 'failed', error };
  });
  return { outcomes, ...trace };
}
