import { Requester } from './request.js';
import { AdSpend } from './resources/ad-spend.js';
import { Analytics } from './resources/analytics.js';
import { Clicks } from './resources/clicks.js';
import { Conversions } from './resources/conversions.js';
import { Stores } from './resources/stores.js';
import { Track } from './resources/track.js';
import { userAgent } from './runtime.js';
import { chooseTransport } from './transport/choose.js';
import type { FetchLike } from './transport/types.js';

export interface WaytrackOptions {
  /** A secret key (`wt_live_…` / `wt_test_…`); in a browser only a publishable key (`wt_pk_…`). */
  apiKey: string;
  /** Default `https://localhost:8443/v1`. */
  baseUrl?: string;
  /**
   * Node only: the CA certificate to trust (PEM text or bytes, or the path of a PEM file), e.g.
   * the self-signed development certificate `data/tls/localhost-cert.pem`.
   */
  ca?: string | Uint8Array;
  /** Per attempt, headers and body included; default 10 000. */
  timeoutMs?: number;
  /** Retries after the first attempt (network errors, timeouts, 429, 5xx); default 2. */
  maxRetries?: number;
  /** First retry's backoff, doubled on each further retry; default 500. */
  retryBaseDelayMs?: number;
  /** Longest backoff between two attempts (a Retry-After may ask for more); default 8 000. */
  retryMaxDelayMs?: number;
  /** A fetch to use instead of the global one (e.g. undici's, with a dispatcher of your own). */
  fetch?: FetchLike;
}

export const DEFAULT_BASE_URL = 'https://localhost:8443/v1';

function nonNegative(name: string, value: number): number {
  if (!Number.isFinite(value) || value < 0) throw new TypeError(`Waytrack: ${name} must be a number ≥ 0, got ${value}`);
  return value;
}

/** The Waytrack API client: `new Waytrack({ apiKey })`, then `wt.track.click(…)`, `wt.stores.list()`, … */
export class Waytrack {
  readonly track: Track;
  readonly stores: Stores;
  readonly conversions: Conversions;
  readonly clicks: Clicks;
  readonly analytics: Analytics;
  readonly adSpend: AdSpend;

  constructor(options: WaytrackOptions) {
    if (typeof options?.apiKey !== 'string' || options.apiKey === '') throw new TypeError('Waytrack: apiKey is required');
    const baseUrl = (options.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
    const protocol = new URL(baseUrl).protocol;
    if (protocol !== 'https:' && protocol !== 'http:') throw new TypeError(`Waytrack: baseUrl must be http(s), got ${baseUrl}`);
    if (options.ca !== undefined && protocol !== 'https:') throw new TypeError('Waytrack: `ca` needs an https baseUrl');
    const requester = new Requester({
      apiKey: options.apiKey,
      baseUrl,
      timeoutMs: nonNegative('timeoutMs', options.timeoutMs ?? 10_000),
      retry: {
        maxRetries: Math.floor(nonNegative('maxRetries', options.maxRetries ?? 2)),
        baseDelayMs: nonNegative('retryBaseDelayMs', options.retryBaseDelayMs ?? 500),
        maxDelayMs: nonNegative('retryMaxDelayMs', options.retryMaxDelayMs ?? 8_000),
      },
      transport: chooseTransport({ fetch: options.fetch, ca: options.ca }),
      userAgent: userAgent(),
    });
    this.track = new Track(requester);
    this.stores = new Stores(requester);
    this.conversions = new Conversions(requester);
    this.clicks = new Clicks(requester);
    this.analytics = new Analytics(requester);
    this.adSpend = new AdSpend(requester);
  }
}
