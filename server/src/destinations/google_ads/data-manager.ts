import { all, clip, type Outcome, parseJson, post, retryAfterMs, type SendRequest, type SendResult } from '../adapter.js';
import { asDataManager, type DataManagerEvent } from './data-manager-payloads.js';
import { DATA_MANAGER_SCOPE, forgetGoogleToken, googleAccessToken } from './oauth.js';

/**
 * Google's Data Manager API (api.md §12): `POST {GOOGLE_DATA_MANAGER_URL}/v1/events:ingest`
 * (IngestionService.IngestEvents) with the OAuth access token of the scope
 * `https://www.googleapis.com/auth/datamanager` and no developer token. One destination per
 * request: the Google Ads account (`operatingAccount`), its manager (`loginAccount`) when set,
 * the conversion action's id (`productDestinationId`); so a batch whose conversions go to
 * several conversion actions is sent as one request per action. At most 2000 events a request.
 *
 * Data Manager fails fast: an event that fails validation refuses the whole request (400
 * INVALID_ARGUMENT), naming it in a google.rpc.BadRequest field violation (`events[3]…`). Each
 * event so named is marked failed with Google's message and the others are sent again at once,
 * in the same attempt; an error naming no event is the whole request's. The answer's
 * `requestId` is the trace id (reconciliation).
 */
export interface DataManagerSettings {
  customerId: string;
  loginCustomerId?: string;
  oauthClientId: string;
}

export interface DataManagerSecrets {
  clientSecret: string;
  refreshToken: string;
}

/** IngestEventsRequest.events: "At most 2000 Event resources can be sent in a single request". */
export const DATA_MANAGER_MAX_EVENTS = 2000;
/** Requests after refusals naming events: each removes at least one event; past this, the rest are retried later. */
const MAX_ROUNDS = 8;
const LABEL = 'Google Data Manager';

interface GoogleStatus {
  code?: unknown;
  message?: unknown;
  status?: unknown;
  details?: Array<{ '@type'?: unknown; fieldViolations?: unknown; reason?: unknown; requestId?: unknown }>;
}

interface Violation {
  field?: unknown;
  description?: unknown;
  reason?: unknown;
}

export async function sendDataManager(request: SendRequest<DataManagerSettings, DataManagerSecrets>): Promise<SendResult> {
  const { settings, secrets, payloads, env, timeoutMs } = request;
  const client = { clientId: settings.oauthClientId, clientSecret: secrets.clientSecret, refreshToken: secrets.refreshToken };
  const auth = await googleAccessToken(env.googleOauthTokenUrl, client, timeoutMs, DATA_MANAGER_SCOPE);
  if ('outcome' in auth) return all(payloads.length, auth.outcome);
  const hide = [secrets.clientSecret, secrets.refreshToken, auth.token];
  const outcomes: Outcome[] = new Array(payloads.length);
  // One request per conversion action (Data Manager's destination), each event by its index in the batch.
  const byAction = new Map<string, Array<{ index: number; event: DataManagerEvent }>>();
  payloads.forEach((payload, index) => {
    const translated = asDataManager(payload);
    if ('error' in translated) {
      outcomes[index] = { outcome: 'failed', error: translated.error };
      return;
    }
    const group = byAction.get(translated.conversionAction) ?? [];
    group.push({ index, event: translated.event });
    byAction.set(translated.conversionAction, group);
  });
  const traceIds: string[] = [];
  for (const [action, events] of byAction) {
    const ingested = await ingest(request, auth.token, action, events, hide);
    for (const [index, outcome] of ingested.outcomes) outcomes[index] = outcome;
    if (ingested.requestId) traceIds.push(ingested.requestId);
    if (ingested.unauthenticated) forgetGoogleToken(client);
  }
  // One trace id per batch is kept (the outbox records one per job): the first request's.
  return { outcomes, ...(traceIds[0] !== undefined && { traceId: traceIds[0] }) };
}

function ingestBody(
  settings: DataManagerSettings,
  action: string,
  events: DataManagerEvent[],
  live: boolean,
): Record<string, unknown> {
  const account = (accountId: string) => ({ accountType: 'GOOGLE_ADS', accountId });
  return {
    destinations: [
      {
        operatingAccount: account(settings.customerId),
        ...(settings.loginCustomerId && { loginAccount: account(settings.loginCustomerId) }),
        productDestinationId: action.slice(action.lastIndexOf('/') + 1),
      },
    ],
    events,
    // The user identifiers are SHA-256 hex (hashing.ts).
    encoding: 'HEX',
    ...(!live && { validateOnly: true }),
  };
}

/** One conversion action's events, resent without those Google names as refused; outcomes by batch index. */
async function ingest(
  request: SendRequest<DataManagerSettings, DataManagerSecrets>,
  token: string,
  action: string,
  events: Array<{ index: number; event: DataManagerEvent }>,
  hide: string[],
): Promise<{ outcomes: Map<number, Outcome>; requestId?: string; unauthenticated?: boolean }> {
  const outcomes = new Map<number, Outcome>();
  let rest = events;
  for (let round = 0; rest.length > 0; round++) {
    const setAll = (outcome: Outcome) => {
      for (const e of rest) outcomes.set(e.index, outcome);
    };
    if (round >= MAX_ROUNDS) {
      setAll({ outcome: 'retry', error: `${LABEL} refused other events of this batch ${MAX_ROUNDS} times; sent again later` });
      break;
    }
    const answer = await post(
      `${request.env.googleDataManagerUrl}/v1/events:ingest`,
      {
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify(
          ingestBody(
            request.settings,
            action,
            rest.map((e) => e.event),
            request.live,
          ),
        ),
      },
      request.timeoutMs,
      LABEL,
    );
    if ('error' in answer) {
      setAll({ outcome: 'retry', error: clip(answer.error, hide) });
      break;
    }
    const { response, text } = answer;
    const body = parseJson(text) as { requestId?: unknown; error?: GoogleStatus } | undefined;
    if (response.ok && !body?.error) {
      setAll({ outcome: 'sent' });
      return { outcomes, ...(typeof body?.requestId === 'string' && { requestId: body.requestId }) };
    }
    const error = body?.error ?? {};
    const status = response.status;
    const named = refusedEvents(error, rest.length);
    if (status === 400 && named.size > 0) {
      for (const [position, message] of named) {
        const event = rest[position] as { index: number };
        outcomes.set(event.index, { outcome: 'failed', error: clip(`${LABEL} refused this event: ${message}`, hide) });
      }
      rest = rest.filter((_, position) => !named.has(position));
      continue;
    }
    const message = clip(
      `${LABEL} error (HTTP ${status}${typeof error.status === 'string' ? ` ${error.status}` : ''}): ${describe(error)}`,
      hide,
    );
    if (status === 401) {
      // The cached token expired early or was revoked: the next attempt exchanges the refresh token again.
      setAll({ outcome: 'retry', error: message });
      return { outcomes, unauthenticated: true };
    }
    const hint = retryAfterMs(response.headers);
    if (status === 429 || status >= 500 || status === 408) {
      setAll({ outcome: 'retry', error: message, ...(hint !== undefined && { retryAfterMs: hint }) });
      break;
    }
    setAll({ outcome: 'failed', error: status === 403 ? `${message}${permissionHint(request.settings)}` : message });
    break;
  }
  return { outcomes };
}

/** Events a 400 names (position in the request → Google's message), from its BadRequest field violations. */
function refusedEvents(error: GoogleStatus, count: number): Map<number, string> {
  const named = new Map<number, string>();
  for (const detail of Array.isArray(error.details) ? error.details : []) {
    if (!Array.isArray(detail?.fieldViolations)) continue;
    for (const violation of detail.fieldViolations as Violation[]) {
      const field = typeof violation.field === 'string' ? violation.field : '';
      const match = /^events\[(\d+)\]/.exec(field);
      const position = match ? Number(match[1]) : -1;
      if (position < 0 || position >= count) continue;
      const text = `${typeof violation.description === 'string' ? violation.description : 'invalid'}${
        typeof violation.reason === 'string' ? ` (${violation.reason})` : ''
      } at ${field}`;
      named.set(position, named.has(position) ? `${named.get(position)}; ${text}` : text);
    }
  }
  return named;
}

function describe(error: GoogleStatus): string {
  const reasons = (Array.isArray(error.details) ? error.details : [])
    .map((d) => (typeof d?.reason === 'string' ? d.reason : undefined))
    .filter(Boolean);
  const message = typeof error.message === 'string' ? error.message : 'no message';
  return reasons.length > 0 ? `${message} (${reasons.join(', ')})` : message;
}

function permissionHint(settings: DataManagerSettings): string {
  return `. The Google account that authorized the OAuth client needs access to Google Ads account ${settings.customerId}${
    settings.loginCustomerId
      ? ` through manager ${settings.loginCustomerId}`
      : ' (set loginCustomerId when access is through a manager account)'
  }; authorize again with an account that has it and set the google_ads destination's oauth.refreshToken`;
}
