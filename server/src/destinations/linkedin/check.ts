import { networkErrorMessage } from '../../network-errors.js';
import { type CheckRequest, type CheckResult, clip, parseJson } from '../adapter.js';
import type { LinkedInSettings } from './mapping.js';
import { LINKEDIN_TOKEN_HINT, type LinkedInSecrets, linkedInHeaders } from './sender.js';

/**
 * LinkedIn has no test mode: the check is a cheap authenticated read of the conversion rule
 * (`GET /rest/conversions/{id}`), which proves the token and its access to the rule's ad account
 * without sending a conversion.
 */
export async function checkLinkedIn({
  settings,
  secrets,
  env,
  timeoutMs,
}: CheckRequest<LinkedInSettings, LinkedInSecrets>): Promise<CheckResult> {
  const id = settings.conversionRuleId.replace(/^urn:lla:llaPartnerConversion:/, '');
  const url = `${env.linkedinApiUrl}/rest/conversions/${id}`;
  let response: Response;
  let raw: string;
  try {
    response = await fetch(url, {
      headers: { accept: 'application/json', ...linkedInHeaders(secrets.accessToken) },
      signal: AbortSignal.timeout(timeoutMs),
    });
    raw = await response.text();
  } catch (error) {
    return { ok: false, message: networkErrorMessage(error, url, 'LinkedIn', timeoutMs) };
  }
  const body = parseJson(raw) as { name?: unknown; message?: unknown } | undefined;
  if (response.ok) {
    const name = typeof body?.name === 'string' ? ` (“${body.name}”)` : '';
    return { ok: true, message: `LinkedIn shows conversion rule ${settings.conversionRuleId}${name} to this token` };
  }
  const said = typeof body?.message === 'string' ? clip(body.message, [secrets.accessToken]) : undefined;
  let message = `LinkedIn error (HTTP ${response.status}): ${said ?? 'no message'}`;
  if (response.status === 401) message += ` — ${LINKEDIN_TOKEN_HINT}`;
  if (response.status === 403 || response.status === 404) {
    message += ' — check the linkedin destination’s conversionRuleId and that the token’s member can use its ad account';
  }
  return { ok: false, message, ...(said && { platformMessage: said }) };
}
