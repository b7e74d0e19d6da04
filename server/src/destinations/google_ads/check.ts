import type { CheckRequest, CheckResult, SendRequest, SendResult } from '../adapter.js';
import type { ClickConversion } from './data-manager-payloads.js';
import { DATA_MANAGER_SCOPE, forgetGoogleToken, googleAccessToken } from './oauth.js';

/** What the check needs of the google_ads destination's settings and secrets (index.ts). */
interface GoogleCheckSettings {
  api?: 'data_manager' | 'google_ads_api';
  customerId: string;
  conversionAction: string | Record<string, string>;
  oauthClientId: string;
}
interface GoogleCheckSecrets {
  clientSecret: string;
  refreshToken: string;
}

/** Google's refusals of the made-up click id the check sends: the credentials got that far. */
const CLICK_ID_REFUSED = /gclid|click.?id|click identifier|UNPARSEABLE|INVALID_CLICK/i;

/**
 * The google_ads destination's check (api.md §12): the OAuth refresh token exchanged now (not a
 * cached access token; with Data Manager, its scope checked), then one made-up click conversion
 * uploaded with `validateOnly: true` through the destination's own sender, so Google checks the
 * customer, the conversion action and (on the Google Ads API) the developer token without
 * recording anything. Google refusing only the made-up click id means the rest was accepted.
 */
export async function checkGoogleAds(
  request: CheckRequest<GoogleCheckSettings, GoogleCheckSecrets>,
  send: (request: SendRequest<GoogleCheckSettings, GoogleCheckSecrets>) => Promise<SendResult>,
): Promise<CheckResult> {
  const { settings, secrets, env, timeoutMs } = request;
  const client = { clientId: settings.oauthClientId, clientSecret: secrets.clientSecret, refreshToken: secrets.refreshToken };
  forgetGoogleToken(client);
  const scope = settings.api === 'data_manager' ? DATA_MANAGER_SCOPE : undefined;
  const auth = await googleAccessToken(env.googleOauthTokenUrl, client, timeoutMs, scope);
  if ('outcome' in auth) {
    return { ok: false, message: 'error' in auth.outcome ? auth.outcome.error : 'Google OAuth refused the credentials' };
  }
  const action =
    typeof settings.conversionAction === 'string'
      ? settings.conversionAction
      : (Object.values(settings.conversionAction)[0] ?? `customers/${settings.customerId}/conversionActions/0`);
  const now = new Date();
  const conversion: ClickConversion = {
    gclid: `waytrack-check-${now.getTime()}`,
    conversionAction: action,
    conversionDateTime: `${now.toISOString().slice(0, 19).replace('T', ' ')}+00:00`,
    conversionValue: 0,
    currencyCode: 'USD',
    orderId: `waytrack-check-${now.getTime()}`,
    consent: { adUserData: 'DENIED' },
  };
  const result = await send({ ...request, live: false, kind: 'conversion', route: '', payloads: [conversion] });
  const outcome = result.outcomes[0];
  const path = settings.api === 'data_manager' ? 'Data Manager API' : 'Google Ads API';
  if (outcome?.outcome === 'sent') {
    return {
      ok: true,
      message: `Google accepted the OAuth credentials and a validateOnly upload (${path}) for customer ${settings.customerId} and ${action}; nothing was recorded`,
    };
  }
  const error = outcome && 'error' in outcome ? outcome.error : 'Google gave no answer';
  if (CLICK_ID_REFUSED.test(error) && !/this server/i.test(error)) {
    return {
      ok: true,
      message: `Google accepted the OAuth credentials, customer ${settings.customerId} and ${action} (${path}); it refused only the check's made-up click id, as it should`,
      platformMessage: error,
    };
  }
  return { ok: false, message: error };
}
