import { networkErrorMessage } from '../../network-errors.js';
import type { CheckRequest, CheckResult } from '../adapter.js';
import type { PinterestSettings } from './mapping.js';
import { PINTEREST_CREDENTIAL_HINT, type PinterestSecrets } from './sender.js';

/**
 * A cheap authenticated read (api.md §12): `GET /v5/ad_accounts/{id}` with the token. 200 says
 * the token reaches the ad account; 401/403 name the token to renew; 404 the ad account id.
 */
export async function checkPinterest({
  settings,
  secrets,
  env,
  timeoutMs,
}: CheckRequest<PinterestSettings, PinterestSecrets>): Promise<CheckResult> {
  const url = `${env.pinterestApiUrl}/v5/ad_accounts/${encodeURIComponent(settings.adAccountId)}`;
  let response: Response;
  let text: string;
  try {
    response = await fetch(url, {
      headers: { accept: 'application/json', authorization: `Bearer ${secrets.accessToken}` },
      signal: AbortSignal.timeout(timeoutMs),
    });
    text = await response.text();
  } catch (error) {
    return { ok: false, message: networkErrorMessage(error, url, 'Pinterest', timeoutMs) };
  }
  let body: { name?: unknown; message?: unknown } | undefined;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const hide = (value: string) => value.split(secrets.accessToken).join('[secret]');
  if (response.ok) {
    const name = typeof body?.name === 'string' ? ` (“${hide(body.name)}”)` : '';
    return { ok: true, message: `Pinterest accepted the access token for ad account ${settings.adAccountId}${name}` };
  }
  const platformMessage = typeof body?.message === 'string' ? hide(body.message) : undefined;
  const why =
    response.status === 401 || response.status === 403
      ? PINTEREST_CREDENTIAL_HINT
      : response.status === 404
        ? 'check the pinterest destination’s adAccountId (Pinterest Ads Manager → the account menu: the ad account id)'
        : 'try again later';
  return {
    ok: false,
    message: `Pinterest refused the check of ad account ${settings.adAccountId}: HTTP ${response.status}${
      platformMessage ? `: ${platformMessage}` : ''
    } — ${why}`,
    ...(platformMessage && { platformMessage }),
  };
}
