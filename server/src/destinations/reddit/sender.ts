import { all, clip, parseJson, post, retryAfterMs, type SendRequest, type SendResult } from '../adapter.js';
import type { RedditSettings } from './mapping.js';
import { type RateLimiter, redditLimiter } from './rate-limit.js';

export interface RedditSecrets {
  accessToken: string;
}

/** Where the token is renewed, for an answer refusing it (api.md §12: name the credential and where). */
export const REDDIT_TOKEN_HINT =
  'renew the conversion access token (Reddit Ads Manager → Events Manager → your pixel → Conversions API → Generate access token) and set it as the reddit destination’s accessToken';

/** Reddit's request id header, when it sends one (the trace id, api.md §10). */
const TRACE_HEADERS = ['x-reddit-request-id', 'x-request-id'];

/**
 * One batch to Reddit's Conversions API, through the process-wide limiter of its ad account
 * (rate-limit.ts). Reddit answers 200 `{message: "Successfully processed N conversions
 * events."}`; 400 `{message}` (the batch refused: failed with Reddit's message), 401/403 (the
 * token or ad account: failed, saying which credential), 429 and 5xx (retried, honoring
 * `Retry-After`). Reddit does not report errors per event: an answer is the whole batch's.
 */
export async function sendReddit(
  { settings, secrets, live, payloads, env, timeoutMs }: SendRequest<RedditSettings, RedditSecrets>,
  limiter: RateLimiter = redditLimiter,
): Promise<SendResult> {
  const hide = [secrets.accessToken];
  const release = await limiter.acquire(settings.adAccountId);
  const answer = await post(
    `${env.redditApiUrl}/api/v2.0/conversions/events/${encodeURIComponent(settings.adAccountId)}`,
    {
      headers: { 'content-type': 'application/json', authorization: `Bearer ${secrets.accessToken}` },
      body: JSON.stringify({ test_mode: !live, events: payloads }),
    },
    timeoutMs,
    'Reddit',
  ).finally(release);
  if ('error' in answer) return all(payloads.length, { outcome: 'retry', error: clip(answer.error, hide) });
  const { response, text: raw } = answer;
  const traceId = TRACE_HEADERS.map((name) => response.headers.get(name)).find((value) => value) ?? undefined;
  const trace = traceId ? { traceId } : {};
  if (response.ok) return { ...all(payloads.length, { outcome: 'sent' }), ...trace };
  const body = parseJson(raw) as { message?: unknown; error?: { message?: unknown } } | undefined;
  const said =
    typeof body?.message === 'string' ? body.message : typeof body?.error?.message === 'string' ? body.error.message : undefined;
  let message = clip(`Reddit error (HTTP ${response.status}): ${said ?? (raw.slice(0, 200) || 'no message')}`, hide);
  if (response.status === 429 || response.status >= 500) {
    const hint = retryAfterMs(response.headers);
    return {
      ...all(payloads.length, { outcome: 'retry', error: message, ...(hint !== undefined && { retryAfterMs: hint }) }),
      ...trace,
    };
  }
  if (response.status === 401) message += ` — ${REDDIT_TOKEN_HINT}`;
  if (response.status === 403)
    message += ' — check the reddit destination’s adAccountId: the token has no access to that ad account';
  return { ...all(payloads.length, { outcome: 'failed', error: message }), ...trace };
}
