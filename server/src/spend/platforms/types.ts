/**
 * One ad platform's spend report (api.md §11 "Spend sources"): what the sync job (spend/sync)
 * asks a platform for and what it gets back. Each platform is one module here (meta.ts,
 * google-ads.ts, tiktok.ts) implementing `SpendPlatform`; the job resolves the credentials (the
 * source's own, else the store's destination of that kind) and turns rows into ad spend entries.
 */

/** One campaign's spend on one day of the platform account's own calendar. */
export interface SpendRow {
  /** YYYY-MM-DD, the account's own day. */
  date: string;
  campaignId: string;
  campaignName: string | null;
  /** The amount as an exact decimal string in the currency's major unit ("12.34"; Google's cost_micros ÷ 1,000,000 by integer arithmetic). */
  amount: string;
  /** ISO 4217, upper case: the account's currency. */
  currency: string;
}

/** Where the platforms are (config: META_GRAPH_URL, GOOGLE_ADS_API_URL, TIKTOK_API_URL, …); tests point them at local fakes. */
export interface SpendEnv {
  metaGraphUrl: string;
  metaGraphVersion: string;
  googleAdsApiUrl: string;
  googleAdsApiVersion: string;
  googleOauthTokenUrl: string;
  tiktokApiUrl: string;
}

/** The credentials a fetch uses, already opened (secrets are never logged or echoed). */
export type SpendCredentials =
  | { kind: 'meta'; accessToken: string }
  | {
      kind: 'google_ads';
      developerToken: string;
      loginCustomerId?: string;
      clientId: string;
      clientSecret: string;
      refreshToken: string;
    }
  | { kind: 'tiktok'; accessToken: string };

export interface SpendFetchRequest {
  /** One account: Meta `act_…`, a Google Ads customer id (digits), a TikTok advertiser id. */
  account: string;
  /** Inclusive YYYY-MM-DD range of the account's days. */
  since: string;
  until: string;
  credentials: SpendCredentials;
  env: SpendEnv;
  timeoutMs: number;
}

/**
 * Every row of the range (all pages followed), or why not. `side: 'platform'` — the platform
 * answered with an error (its message, and `credential` when it says which one to renew: expired
 * token, missing permission, unknown account); `side: 'network'` — no answer (this server's DNS,
 * connect, TLS or timeout, naming the host; network-errors.ts). A malformed answer (a page that
 * is not the documented shape) is a platform-side error: the sync fails and keeps the old figures.
 */
export type SpendFetchResult =
  | { rows: SpendRow[] }
  | { error: string; side: 'platform' | 'network'; credential?: string; retryable: boolean };

export interface SpendPlatform {
  kind: 'meta' | 'google_ads' | 'tiktok';
  /** The platform's name in messages. */
  label: string;
  fetch(request: SpendFetchRequest): Promise<SpendFetchResult>;
}
