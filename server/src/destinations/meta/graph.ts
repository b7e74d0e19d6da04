import { CREDENTIAL_HINTS } from '../../network-errors.js';
import { post } from '../adapter.js';

/**
 * The Graph API client for `POST /{version}/{pixelId}/events`, and the classification of its
 * answers into the three things the dispatcher acts on: accepted, retry later, or rejected.
 */

export const GRAPH_TIMEOUT_MS = 1500;

/** Meta's transient and throttling error codes (api.md §2): retried with backoff. */
export const TRANSIENT_CODES = new Set([1, 2, 4, 17, 32, 341, 368, 613, 80003]);

const MAX_ERROR_LENGTH = 1000;

export interface GraphRequest {
  baseUrl: string;
  version: string;
  pixelId: string;
  accessToken: string;
  testEventCode: string | null;
  /** Each event already serialized as JSON (built at enqueue time). */
  events: string[];
}

export type GraphResult =
  | { outcome: 'accepted'; eventsReceived: number; fbtraceId: string | null }
  | { outcome: 'retry'; error: string; fbtraceId: string | null; retryAfterMs?: number }
  /** `eventLevel`: the refusal may be caused by some event in the batch (split it); else it is about the request itself. */
  | { outcome: 'rejected'; error: string; fbtraceId: string | null; eventLevel: boolean };

export interface GraphError {
  message?: unknown;
  type?: unknown;
  code?: unknown;
  error_subcode?: unknown;
  error_user_msg?: unknown;
  is_transient?: unknown;
  fbtrace_id?: unknown;
}

/**
 * Errors about the token, the app's permissions or the pixel itself: every event of the batch
 * would get the same answer, so splitting the batch would only multiply requests.
 */
function isRequestLevel(code: number | undefined, subcode: number | undefined): boolean {
  if (code === undefined) return false;
  if (code === 10 || code === 102 || code === 190 || code === 803) return true;
  if (code >= 200 && code <= 299) return true; // permission errors
  return code === 100 && subcode === 33; // "object does not exist or missing permissions": a wrong pixel id
}

export function describe(error: GraphError, status: number): string {
  const code = typeof error.code === 'number' ? error.code : undefined;
  const subcode = typeof error.error_subcode === 'number' ? error.error_subcode : undefined;
  const type = typeof error.type === 'string' ? ` ${error.type}` : '';
  const label = code === undefined ? `HTTP ${status}` : `code ${code}${subcode === undefined ? '' : `/${subcode}`}`;
  const message = typeof error.message === 'string' ? error.message : 'no message';
  const userMessage = typeof error.error_user_msg === 'string' && error.error_user_msg ? ` — ${error.error_user_msg}` : '';
  const described = `Meta error (${label}${type}): ${message}${userMessage}`;
  // The token was refused (expired, revoked, changed password): name it and where to renew it.
  return code === 190 || status === 401 ? `${described} — ${CREDENTIAL_HINTS.meta}` : described;
}

function clip(text: string, secret: string): string {
  // An error text must never carry the token, whatever the server echoed back.
  const safe = secret ? text.split(secret).join('[access token]') : text;
  return safe.length > MAX_ERROR_LENGTH ? `${safe.slice(0, MAX_ERROR_LENGTH - 1)}…` : safe;
}

/**
 * How long Meta asks us to wait: `Retry-After` (seconds or an HTTP date), or the
 * `estimated_time_to_regain_access` (minutes) of the business-use-case usage header.
 */
export function retryHintMs(headers: Headers, now = Date.now()): number | undefined {
  const retryAfter = headers.get('retry-after');
  if (retryAfter) {
    if (/^\d+(\.\d+)?$/.test(retryAfter.trim())) return Math.round(Number(retryAfter) * 1000);
    const date = Date.parse(retryAfter);
    if (!Number.isNaN(date)) return Math.max(0, date - now);
  }
  const usage = headers.get('x-business-use-case-usage');
  if (usage) {
    try {
      let minutes = 0;
      for (const entries of Object.values(JSON.parse(usage) as Record<string, Array<Record<string, unknown>>>)) {
        for (const entry of Array.isArray(entries) ? entries : []) {
          const eta = Number(entry.estimated_time_to_regain_access);
          if (Number.isFinite(eta)) minutes = Math.max(minutes, eta);
        }
      }
      if (minutes > 0) return minutes * 60_000;
    } catch {
      // Unreadable usage header: no hint, the backoff decides.
    }
  }
  return undefined;
}

function requestBody(request: GraphRequest): string {
  // The events are stored JSON already; splicing them avoids re-parsing up to 1000 of them.
  let body = `{"data":[${request.events.join(',')}],"access_token":${JSON.stringify(request.accessToken)}`;
  if (request.testEventCode) body += `,"test_event_code":${JSON.stringify(request.testEventCode)}`;
  return `${body}}`;
}

export async function postEvents(request: GraphRequest, timeoutMs = GRAPH_TIMEOUT_MS): Promise<GraphResult> {
  const url = `${request.baseUrl}/${request.version}/${encodeURIComponent(request.pixelId)}/events`;
  // The token goes in the body, never the URL, so no proxy or access log can record it.
  const answer = await post(
    url,
    { headers: { 'content-type': 'application/json' }, body: requestBody(request) },
    timeoutMs,
    'Meta',
  );
  // No answer: this server's side (DNS, connect, TLS, timeout), said so with the host.
  if ('error' in answer) return { outcome: 'retry', error: clip(answer.error, request.accessToken), fbtraceId: null };
  const { response, text } = answer;

  let body: { events_received?: unknown; fbtrace_id?: unknown; error?: GraphError } | undefined;
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    body = undefined;
  }
  const status = response.status;
  const graphError = body?.error && typeof body.error === 'object' ? body.error : undefined;
  const fbtraceId =
    typeof graphError?.fbtrace_id === 'string'
      ? graphError.fbtrace_id
      : typeof body?.fbtrace_id === 'string'
        ? body.fbtrace_id
        : null;

  if (status >= 200 && status < 300 && typeof body?.events_received === 'number') {
    return { outcome: 'accepted', eventsReceived: body.events_received, fbtraceId };
  }
  const hint = retryHintMs(response.headers);
  const retry = (error: string): GraphResult => ({
    outcome: 'retry',
    error: clip(error, request.accessToken),
    fbtraceId,
    ...(hint !== undefined && { retryAfterMs: hint }),
  });
  if (!graphError) {
    // Not an answer from the Graph API (a proxy page, a half-open connection): try again,
    // except for "too large", which a smaller batch cures.
    if (status === 413) {
      return { outcome: 'rejected', error: 'Meta refused the request as too large (HTTP 413)', fbtraceId, eventLevel: true };
    }
    return retry(`Unexpected answer from Meta: HTTP ${status}`);
  }
  const code = typeof graphError.code === 'number' ? graphError.code : undefined;
  const subcode = typeof graphError.error_subcode === 'number' ? graphError.error_subcode : undefined;
  const error = describe(graphError, status);
  if (status >= 500 || status === 429 || graphError.is_transient === true || (code !== undefined && TRANSIENT_CODES.has(code))) {
    return retry(error);
  }
  return { outcome: 'rejected', error: clip(error, request.accessToken), fbtraceId, eventLevel: !isRequestLevel(code, subcode) };
}
