import { isCertificateError, sendOnce } from './attempt.js';
import { readEnvelope } from './envelope.js';
import { WaytrackConnectionError, type WaytrackError } from './errors.js';
import { isRetryableStatus, MAX_RETRY_AFTER_MS, type RetryPolicy, retryDelay, sleep } from './retry.js';
import { randomId } from './runtime.js';
import type { Transport } from './transport/types.js';

/** Per-call overrides, the optional last argument of every method. */
export interface RequestOptions {
  /** Per attempt; default the client's `timeoutMs`. */
  timeoutMs?: number;
  /** Default the client's `maxRetries`. */
  maxRetries?: number;
  /** POST/PATCH: your own Idempotency-Key (e.g. derived from an order id), instead of a random one. */
  idempotencyKey?: string;
  /** Cancels the call, its retries and the waits between them. */
  signal?: AbortSignal;
}

export type QueryValue = string | number | boolean | null | undefined;

export interface ApiCall {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** Under the base URL, e.g. `/stores/st_…`; path parameters already encoded. */
  path: string;
  query?: Record<string, QueryValue>;
  body?: unknown;
}

export interface RequesterConfig {
  apiKey: string;
  baseUrl: string;
  timeoutMs: number;
  retry: RetryPolicy;
  transport: () => Promise<Transport>;
  userAgent: string | null;
}

function queryString(query: Record<string, QueryValue> = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== null) params.append(name, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** Sends API calls: headers, the envelope, and retries that reuse one Idempotency-Key. */
export class Requester {
  constructor(private readonly config: RequesterConfig) {}

  async call<T>(call: ApiCall, options: RequestOptions = {}): Promise<T> {
    const { config } = this;
    const headers: Record<string, string> = { authorization: `Bearer ${config.apiKey}`, accept: 'application/json' };
    if (config.userAgent) headers['user-agent'] = config.userAgent;
    if (call.body !== undefined) headers['content-type'] = 'application/json';
    // Generated once per call, so every retry of it carries the same key: the server then
    // applies the call at most once even if an earlier attempt did reach it.
    // PUT and DELETE are idempotent by themselves.
    if (call.method === 'POST' || call.method === 'PATCH')
      headers['idempotency-key'] = options.idempotencyKey ?? (await randomId());
    const request = {
      method: call.method,
      url: `${config.baseUrl}${call.path}${queryString(call.query)}`,
      headers,
      body: call.body === undefined ? undefined : JSON.stringify(call.body),
    };
    const transport = await config.transport();
    const timeoutMs = options.timeoutMs ?? config.timeoutMs;
    const maxRetries = options.maxRetries ?? config.retry.maxRetries;

    for (let retry = 0; ; retry++) {
      let failure: WaytrackError | WaytrackConnectionError;
      let retryable: boolean;
      let retryAfterMs: number | undefined;
      try {
        const outcome = readEnvelope<T>(await sendOnce(transport, request, timeoutMs, options.signal));
        if (outcome.ok) return outcome.data;
        failure = outcome.error;
        retryAfterMs = outcome.retryAfterMs;
        retryable = isRetryableStatus(failure.status) && (retryAfterMs ?? 0) <= MAX_RETRY_AFTER_MS;
      } catch (error) {
        if (!(error instanceof WaytrackConnectionError)) throw error;
        failure = error;
        retryable = !isCertificateError(error);
      }
      if (!retryable || retry >= maxRetries) throw failure;
      await sleep(retryDelay(retry, config.retry, retryAfterMs), options.signal);
    }
  }
}
