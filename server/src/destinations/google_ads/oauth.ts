import { clip, type Outcome, parseJson, post } from '../adapter.js';
import { sha256 } from '../hashing.js';

/**
 * Google's OAuth refresh-token exchange (api.md §8, §12), shared by the Google Ads API path and
 * the Data Manager path of the google_ads destination: the store's refresh token is exchanged at
 * `{GOOGLE_OAUTH_TOKEN_URL}` for an access token, cached until a minute before it expires.
 */
export interface GoogleOAuthClient {
  clientId: string;
  clientSecret: string;
  refreshToken: string;
}

/** The scope the Data Manager API needs (IngestionService's `google.api.oauth_scopes`). */
export const DATA_MANAGER_SCOPE = 'https://www.googleapis.com/auth/datamanager';

/** Access tokens per OAuth client and refresh token, with the scopes Google said they carry. */
const tokens = new Map<string, { token: string; expiresAt: number; scopes: string[] | undefined }>();
const tokenKey = (client: GoogleOAuthClient) => sha256(`${client.clientId}\n${client.clientSecret}\n${client.refreshToken}`);

/**
 * An access token for `client`. With `scope`, a token Google says lacks it is refused here with
 * the fix (authorize again with that scope), instead of the platform's 403 on every request.
 */
export async function googleAccessToken(
  url: string,
  client: GoogleOAuthClient,
  timeoutMs: number,
  scope?: string,
): Promise<{ token: string } | { outcome: Outcome }> {
  const key = tokenKey(client);
  let entry = tokens.get(key);
  if (!entry || entry.expiresAt <= Date.now()) {
    const exchanged = await exchange(url, client, timeoutMs);
    if ('outcome' in exchanged) return exchanged;
    entry = exchanged;
    tokens.set(key, entry);
  }
  // Google's answer lists the scopes granted; when it does not, the platform's answer tells.
  if (scope && entry.scopes && !entry.scopes.includes(scope)) {
    return {
      outcome: {
        outcome: 'failed',
        error: `Google OAuth: the refresh token was not granted the ${scope} scope (granted: ${entry.scopes.join(' ') || 'none'}); authorize the OAuth client again with that scope and set the google_ads destination's oauth.refreshToken`,
      },
    };
  }
  return { token: entry.token };
}

async function exchange(url: string, client: GoogleOAuthClient, timeoutMs: number) {
  const answer = await post(
    url,
    {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        client_id: client.clientId,
        client_secret: client.clientSecret,
        refresh_token: client.refreshToken,
      }).toString(),
    },
    timeoutMs,
    "Google's OAuth server",
  );
  const hide = [client.clientSecret, client.refreshToken];
  if ('error' in answer) return { outcome: { outcome: 'retry', error: clip(answer.error, hide) } as Outcome };
  const body = parseJson(answer.text) as
    | { access_token?: unknown; expires_in?: unknown; scope?: unknown; error?: unknown; error_description?: unknown }
    | undefined;
  if (answer.response.ok && typeof body?.access_token === 'string') {
    const seconds = typeof body.expires_in === 'number' ? body.expires_in : 3600;
    return {
      token: body.access_token,
      // Refreshed a minute early: a token must not expire between the check and Google's.
      expiresAt: Date.now() + Math.max(seconds - 60, 1) * 1000,
      scopes: typeof body.scope === 'string' ? body.scope.split(/\s+/).filter(Boolean) : undefined,
    };
  }
  const status = answer.response.status;
  const detail = `${typeof body?.error === 'string' ? body.error : `HTTP ${status}`}${
    typeof body?.error_description === 'string' ? `: ${body.error_description}` : ''
  }`;
  if (status >= 500 || status === 429) {
    return { outcome: { outcome: 'retry', error: clip(`Google OAuth error (${detail})`, hide) } as Outcome };
  }
  // invalid_grant (refresh token revoked or expired), invalid_client: only the merchant can fix it.
  return {
    outcome: {
      outcome: 'failed',
      error: clip(`Google OAuth refused the refresh token (${detail}); set the google_ads destination's oauth again`, hide),
    } as Outcome,
  };
}

/** The platform refused the access token (401): the next attempt exchanges the refresh token again. */
export function forgetGoogleToken(client: GoogleOAuthClient): void {
  tokens.delete(tokenKey(client));
}

/** Tests: forget cached access tokens. */
export function forgetGoogleTokens(): void {
  tokens.clear();
}
