import type { TSchema } from 'typebox';
import { request } from 'undici';
import type { CustomerData } from '../customer-data.js';
import type { ClicksTable, ConversionsTable, RefundsTable, StoresTable } from '../db/schema.js';
import { type CheckResult, networkErrorMessage } from '../network-errors.js';

export type { CheckResult };

/**
 * How the shared outbox (dispatcher.ts) sends one platform's jobs: every destination has one,
 * Meta's included (meta/; its settings are the store's own fields, not an `Adapter`'s).
 */
export interface Sender<Settings = Record<string, unknown>, Secrets = Record<string, unknown>> {
  kind: string;
  /** The platform's name in messages. */
  label: string;
  /** Most events in one request (the platform's limit). */
  maxBatch: number;
  /** Its request timeout, unless the dispatcher's tuning sets one for all. */
  timeoutMs?: number;
  /**
   * Halve a batch the platform refused because of some event in it (`SendResult.split`) until
   * the refused events stand alone, so the rest are delivered (Meta refuses a whole batch for
   * one bad event).
   */
  bisect?: boolean;
  /** The payloads reach `send` as their stored JSON text (Meta splices them into its body) instead of parsed. */
  rawPayloads?: boolean;
  /** false: refund jobs are sent as they come, not held back behind the conversion's job (refund-order.ts). */
  ordersRefunds?: boolean;
  /** How its age limit reads in messages (default: "within the platform's age limit"). */
  ageLimit?: string;
  /** Its own texts: a destination removed, or whose secrets cannot be opened, before a job was sent; a batch delivered (debug log), events refused (warning). */
  messages?: { removed?: string; secretsLost?: string; delivered?: string; refused?: string };
  /** What a log line about a batch names of its route (Meta: the pixel id). */
  logFields?(route: string): Record<string, unknown>;
  /** Sends one batch of payloads (same store, mode, destination, kind, route); one outcome per payload, in order. */
  send(request: SendRequest<Settings, Secrets>): Promise<SendResult>;
  /** Checks the credentials against the platform now, without a live conversion (api.md §12; destinations/check.ts). */
  check?(request: CheckRequest<Settings, Secrets>): Promise<CheckResult>;
}

export interface CheckRequest<Settings, Secrets> {
  settings: Settings;
  secrets: Secrets;
  env: DestinationEnv;
  timeoutMs: number;
}

/**
 * One ad platform a store's conversions are forwarded to (api.md §8). Adding a platform is one
 * adapter file (its settings, which conversions it takes, its request and its answers) and one
 * line in registry.ts; the outbox, leases, retries, age limits and status are shared
 * (dispatcher.ts, routing.ts).
 */
export interface Adapter<Settings = Record<string, unknown>, Secrets = Record<string, unknown>>
  extends Sender<Settings, Secrets> {
  /** The PUT body as the API documents it (the platform folder's settings-schema.ts); `parse` checks it. */
  settingsSchema: TSchema;
  /**
   * A PUT body's settings and secrets, validated (throws the API's field errors). `previous` is
   * what is stored: a secret left out of the body is kept.
   */
  parse(
    body: Record<string, unknown>,
    previous: { settings: Settings; secrets: Secrets } | undefined,
  ): {
    settings: Settings;
    secrets: Secrets;
  };
  /** The settings as the API shows them (secrets only as names of those configured). */
  present(settings: Settings, secrets: Secrets): Record<string, unknown>;
  /**
   * Whether the conversion goes to this destination and how: `undefined` when it does not
   * receive it at all (no entry in `forwarding`), a skip with its reason, or the job's payload
   * (never a secret) and the time after which the platform no longer accepts it.
   */
  plan(input: PlanInput<Settings>): Plan | undefined;
  /**
   * A refund of a conversion this destination received (or will: its job is not skipped), api.md
   * §9: the refund job's payload and age limit, a skip with its reason, or `undefined` when the
   * platform gets nothing for refunds (TikTok without `refundEvent`).
   */
  planRefund?(input: RefundPlanInput<Settings>): Plan | undefined;
}

export interface PlanInput<Settings> {
  store: StoresTable;
  settings: Settings;
  conversion: ConversionsTable;
  /** The attributed click, when there is one. */
  click: ClicksTable | undefined;
  /** The raw customer data of the request (only while it is recorded: raw PII is never stored). */
  customerData: CustomerData | undefined;
  now: number;
}

export interface RefundPlanInput<Settings> {
  store: StoresTable;
  settings: Settings;
  conversion: ConversionsTable;
  refund: RefundsTable;
  /** The conversion job's payload (what the platform received for the conversion). */
  conversionPayload: unknown;
  now: number;
}

export type Plan = { payload: unknown; expiresAt: number } | { skip: string; message: string };

export interface SendRequest<Settings, Secrets> {
  settings: Settings;
  secrets: Secrets;
  /** false: test mode (the platform's test channel). */
  live: boolean;
  /** What the payloads are: conversions (`plan`) or refunds (`planRefund`); one batch holds one kind. */
  kind: 'conversion' | 'refund';
  /** The jobs' route (`destination_jobs.route`; '' but for Meta). */
  route: string;
  payloads: unknown[];
  env: DestinationEnv;
  timeoutMs: number;
}

export type Outcome =
  | { outcome: 'sent' }
  | { outcome: 'retry'; error: string; retryAfterMs?: number }
  | { outcome: 'failed'; error: string };

export interface SendResult {
  outcomes: Outcome[];
  /** The platform's id of the request (Google's job id, TikTok's request_id, Meta's fbtrace_id), when it gave one. */
  traceId?: string;
  /** The whole batch was refused because of some event in it: a `bisect` sender's batch is halved. */
  split?: boolean;
  /** The request's outcome as the platform's own metrics name it (Meta: accepted, retry, rejected). */
  requestOutcome?: string;
}

/** Where the platforms are (config: GOOGLE_ADS_API_URL, …); tests point them at local fakes. */
export interface DestinationEnv {
  metaGraphUrl: string;
  metaGraphVersion: string;
  googleAdsApiUrl: string;
  googleAdsApiVersion: string;
  googleOauthTokenUrl: string;
  tiktokApiUrl: string;
  /** GOOGLE_DATA_MANAGER_URL (api.md §12). */
  googleDataManagerUrl: string;
  /** MICROSOFT_CAPI_URL (api.md §12): the UET Conversions API. */
  microsoftCapiUrl: string;
  /** REDDIT_API_URL (api.md §12). */
  redditApiUrl: string;
  /** LINKEDIN_API_URL (api.md §12). */
  linkedinApiUrl: string;
  /** PINTEREST_API_URL (api.md §12). */
  pinterestApiUrl: string;
  /** SNAPCHAT_API_URL (api.md §12). */
  snapchatApiUrl: string;
}

/** Every payload of a batch gets the same outcome (a request-level answer). */
export function all(count: number, outcome: Outcome): SendResult {
  return { outcomes: Array.from({ length: count }, () => outcome) };
}

const MAX_ERROR_LENGTH = 1000;

/** An error text for the API: never a secret, whatever the platform echoed; at most 1000 characters. */
export function clip(text: string, secrets: string[]): string {
  let safe = text;
  for (const secret of secrets) if (secret) safe = safe.split(secret).join('[secret]');
  return safe.length > MAX_ERROR_LENGTH ? `${safe.slice(0, MAX_ERROR_LENGTH - 1)}…` : safe;
}

/** `Retry-After` in ms (seconds or an HTTP date). */
export function retryAfterMs(headers: Headers, now = Date.now()): number | undefined {
  const value = headers.get('retry-after');
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Math.round(Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** A platform's answer as the senders read it (the parts of a fetch `Response` they use). */
export interface Answer {
  status: number;
  ok: boolean;
  headers: Headers;
}

/**
 * POST with a timeout; network errors and timeouts come back as a retry outcome's text. Sent
 * with undici's `request`, not `fetch` (undici's too, with web streams and a `Response`): a
 * fifth of the CPU a request (bench/http-client.js), and eight destinations send ~40 a second at
 * 500 conversions a second.
 */
export async function post(
  url: string,
  init: { headers: Record<string, string>; body: string },
  timeoutMs: number,
  label: string,
): Promise<{ response: Answer; text: string } | { error: string }> {
  try {
    const answer = await request(url, {
      method: 'POST',
      headers: { accept: 'application/json', ...init.headers },
      body: init.body,
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await answer.body.text();
    const headers = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) {
      for (const each of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, each);
    }
    const status = answer.statusCode;
    return { response: { status, ok: status >= 200 && status < 300, headers }, text };
  } catch (error) {
    // No answer: this server's side (DNS, connect, TLS, timeout), said so with the host.
    return { error: networkErrorMessage(error, url, label, timeoutMs) };
  }
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
