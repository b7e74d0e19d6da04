import { all, clip, type Outcome, parseJson, post, retryAfterMs, type SendRequest, type SendResult } from '../adapter.js';
import { forgetGoogleToken, googleAccessToken } from './oauth.js';

/**
 * The google_ads destination's Google Ads API path (api.md §8, `api: "google_ads_api"`):
 * `POST {GOOGLE_ADS_API_URL}/{version}/customers/{customerId}:uploadClickConversions` (refunds:
 * `:uploadConversionAdjustments`) with `partialFailure: true`, the OAuth access token, the
 * developer token and `login-customer-id` when set. A row's partial failure marks that
 * conversion failed with Google's message; the others are sent.
 */
export interface GoogleAdsApiSettings {
  customerId: string;
  loginCustomerId?: string;
  oauthClientId: string;
}

export interface GoogleAdsApiSecrets {
  developerToken?: string;
  clientSecret: string;
  refreshToken: string;
}

/** One error of a GoogleAdsFailure (the `details` of Google's google.rpc.Status); spend/platforms/google-ads.ts reads them too. */
export interface GoogleAdsError {
  errorCode?: Record<string, unknown>;
  message?: unknown;
  location?: { fieldPathElements?: Array<{ fieldName?: unknown; index?: unknown }> };
}

export function failureErrors(status: { details?: unknown } | undefined): GoogleAdsError[] {
  const details = Array.isArray(status?.details) ? status.details : [];
  const errors: GoogleAdsError[] = [];
  for (const detail of details as Array<{ errors?: unknown }>) {
    if (Array.isArray(detail?.errors)) errors.push(...(detail.errors as GoogleAdsError[]));
  }
  return errors;
}

export function describeError(error: GoogleAdsError): string {
  const code = error.errorCode ? Object.entries(error.errorCode).map(([k, v]) => `${k}: ${String(v)}`)[0] : undefined;
  return `${typeof error.message === 'string' ? error.message : 'no message'}${code ? ` (${code})` : ''}`;
}

/** Errors Google marks as its own or as quota: trying again later may succeed. */
export function isTransient(error: GoogleAdsError): boolean {
  const code = error.errorCode ?? {};
  return 'internalError' in code || 'quotaError' in code || code.databaseError === 'CONCURRENT_MODIFICATION';
}

function rowIndex(error: GoogleAdsError): number | undefined {
  const first = error.location?.fieldPathElements?.find(
    (e) => e.fieldName === 'conversions' || e.fieldName === 'conversion_adjustments' || e.fieldName === 'conversionAdjustments',
  );
  return typeof first?.index === 'number' ? first.index : undefined;
}

export async function sendGoogleAdsApi(request: SendRequest<GoogleAdsApiSettings, GoogleAdsApiSecrets>): Promise<SendResult> {
  const { settings, secrets, live, kind, payloads, env, timeoutMs } = request;
  const client = { clientId: settings.oauthClientId, clientSecret: secrets.clientSecret, refreshToken: secrets.refreshToken };
  if (!secrets.developerToken) {
    return all(payloads.length, {
      outcome: 'failed',
      error:
        'The google_ads destination uses the Google Ads API (api google_ads_api) but has no developerToken: set one, or set api to data_manager',
    });
  }
  const hide = [secrets.developerToken, secrets.clientSecret, secrets.refreshToken];
  const auth = await googleAccessToken(env.googleOauthTokenUrl, client, timeoutMs);
  if ('outcome' in auth) return all(payloads.length, auth.outcome);
  // A refund is an adjustment of the uploaded conversion (adjustments.ts).
  const method = kind === 'refund' ? 'uploadConversionAdjustments' : 'uploadClickConversions';
  const url = `${env.googleAdsApiUrl}/${env.googleAdsApiVersion}/customers/${settings.customerId}:${method}`;
  const answer = await post(
    url,
    {
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${auth.token}`,
        'developer-token': secrets.developerToken,
        ...(settings.loginCustomerId && { 'login-customer-id': settings.loginCustomerId }),
      },
      body: JSON.stringify({
        [kind === 'refund' ? 'conversionAdjustments' : 'conversions']: payloads,
        partialFailure: true,
        ...(!live && { validateOnly: true }),
      }),
    },
    timeoutMs,
    'Google Ads',
  );
  hide.push(auth.token);
  if ('error' in answer) return all(payloads.length, { outcome: 'retry', error: clip(answer.error, hide) });
  const { response, text: raw } = answer;
  const body = parseJson(raw) as
    | { results?: unknown; partialFailureError?: { code?: unknown; message?: unknown; details?: unknown }; jobId?: unknown }
    | { error?: { code?: unknown; message?: unknown; status?: unknown; details?: unknown } }
    | undefined;
  if (response.ok && body && !('error' in body && body.error)) {
    const ok = body as { partialFailureError?: { details?: unknown; message?: unknown }; jobId?: unknown };
    const outcomes: Outcome[] = payloads.map(() => ({ outcome: 'sent' }));
    const failure = ok.partialFailureError;
    if (failure && (failure as { code?: unknown }).code !== 0) {
      const errors = failureErrors(failure);
      const unplaced: string[] = [];
      for (const error of errors) {
        const index = rowIndex(error);
        const message = clip(`Google Ads error: ${describeError(error)}`, hide);
        if (index === undefined || index >= outcomes.length) {
          unplaced.push(message);
          continue;
        }
        const previous = outcomes[index];
        // A row with several errors: a permanent one decides.
        if (previous?.outcome === 'failed') continue;
        outcomes[index] = isTransient(error) ? { outcome: 'retry', error: message } : { outcome: 'failed', error: message };
      }
      if (errors.length === 0 || unplaced.length === errors.length) {
        // Not placed on a row: the whole request's problem.
        const message = clip(
          `Google Ads error: ${unplaced[0] ?? (typeof failure.message === 'string' ? failure.message : 'partial failure')}`,
          hide,
        );
        return all(payloads.length, { outcome: 'failed', error: message });
      }
    }
    return { outcomes, ...(ok.jobId !== undefined && { traceId: String(ok.jobId) }) };
  }
  const error = body && 'error' in body ? body.error : undefined;
  const status = response.status;
  const errors = failureErrors(error as { details?: unknown } | undefined);
  const message = clip(
    `Google Ads error (HTTP ${status}${typeof error?.status === 'string' ? ` ${error.status}` : ''}): ${
      errors.length > 0 ? errors.map(describeError).join('; ') : typeof error?.message === 'string' ? error.message : 'no message'
    }`,
    hide,
  );
  if (status === 401) {
    // The cached token expired early or was revoked: the next attempt exchanges the refresh token again.
    forgetGoogleToken(client);
    return all(payloads.length, { outcome: 'retry', error: message });
  }
  const hint = retryAfterMs(response.headers);
  if (status === 429 || status >= 500 || (errors.length > 0 && errors.every(isTransient))) {
    return all(payloads.length, { outcome: 'retry', error: message, ...(hint !== undefined && { retryAfterMs: hint }) });
  }
  return all(payloads.length, { outcome: 'failed', error: message });
}
