import { type CheckResult, networkErrorMessage } from '../../network-errors.js';
import { describe, type GraphError, postEvents } from './graph.js';

export interface MetaCheck {
  baseUrl: string;
  version: string;
  pixelId: string;
  accessToken: string;
  testEventCode: string | null;
  timeoutMs: number;
}

const hide = (text: string, token: string) => (token ? text.split(token).join('[access token]') : text);

/**
 * Meta's credentials, checked now without a live conversion: with a test event code, one test
 * event (it shows in Events Manager → Test events); without, the pixel read with the token
 * (`GET /{pixel-id}`, the token in the Authorization header, never the URL).
 */
export async function checkMeta(check: MetaCheck): Promise<CheckResult> {
  if (check.testEventCode) return checkWithTestEvent(check);
  const url = `${check.baseUrl}/${check.version}/${encodeURIComponent(check.pixelId)}?fields=id,name`;
  let response: Response;
  let text: string;
  try {
    response = await fetch(url, {
      headers: { accept: 'application/json', authorization: `Bearer ${check.accessToken}` },
      signal: AbortSignal.timeout(check.timeoutMs),
    });
    text = await response.text();
  } catch (error) {
    return { ok: false, message: networkErrorMessage(error, url, 'Meta', check.timeoutMs) };
  }
  let body: { id?: unknown; name?: unknown; error?: GraphError } | undefined;
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    body = undefined;
  }
  if (response.ok && body?.id !== undefined) {
    const name = typeof body.name === 'string' ? ` (${body.name})` : '';
    return { ok: true, message: `Meta accepted the access token for pixel ${check.pixelId}${name}` };
  }
  if (body?.error && typeof body.error === 'object') {
    const platformMessage = hide(
      typeof body.error.message === 'string' ? body.error.message : describe(body.error, response.status),
      check.accessToken,
    );
    return { ok: false, message: hide(describe(body.error, response.status), check.accessToken), platformMessage };
  }
  return { ok: false, message: `Unexpected answer from Meta: HTTP ${response.status}` };
}

async function checkWithTestEvent(check: MetaCheck): Promise<CheckResult> {
  const now = Math.floor(Date.now() / 1000);
  const event = {
    event_name: 'PageView',
    event_time: now,
    event_id: `waytrack_check_${now}`,
    action_source: 'website',
    user_data: { client_user_agent: 'Waytrack destination check' },
  };
  const result = await postEvents({ ...check, baseUrl: check.baseUrl, events: [JSON.stringify(event)] }, check.timeoutMs);
  if (result.outcome === 'accepted') {
    return {
      ok: true,
      message: `Meta accepted a test event for pixel ${check.pixelId} (test event code ${check.testEventCode}); it shows in Events Manager → Test events`,
    };
  }
  const platform = /^Meta error \([^)]*\): (.*)$/s.exec(result.error)?.[1]?.split(' — ')[0];
  return { ok: false, message: result.error, ...(platform && { platformMessage: platform }) };
}
