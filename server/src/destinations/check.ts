import type { Database } from '../db/database.js';
import { ApiError } from '../http/errors.js';
import { type SecretBox, SecretError } from '../secrets.js';
import { requireStore } from '../stores/lookup.js';
import type { Tenant } from '../tenancy.js';
import type { CheckResult, DestinationEnv } from './adapter.js';
import { checkMeta } from './meta/check.js';
import { senderOf } from './registry.js';
import { checkKind, openDestination } from './settings.js';

/** A check waits this long for the platform (a person is waiting for the answer). */
const CHECK_TIMEOUT_MS = 10_000;

/**
 * POST /v1/stores/:id/destinations/:kind/test (api.md §12): the destination's stored credentials
 * checked against the platform now, without a live conversion and without recording anything
 * (no job, no conversion, no change to its health). A destination that is not configured is a
 * 404, as DELETE answers; one whose secrets cannot be opened is a failed check saying so.
 */
export async function testDestination(
  database: Database,
  tenant: Tenant,
  storeId: string,
  kindParam: string,
  secrets: SecretBox,
  env: DestinationEnv,
  timeoutMs = CHECK_TIMEOUT_MS,
): Promise<CheckResult> {
  const kind = checkKind(kindParam);
  const store = await requireStore(database.read, tenant, storeId);
  const sender = senderOf(kind);
  const notConfigured = () => new ApiError('not_found', `Store ${store.id} has no ${kind} destination`);
  let destination: Awaited<ReturnType<typeof openDestination>>;
  try {
    destination = await openDestination(database.read, { accountId: tenant.accountId, storeId: store.id }, kind, secrets);
  } catch (error) {
    if (!(error instanceof SecretError)) throw error;
    return {
      ok: false,
      message:
        sender?.messages?.secretsLost ??
        `The ${sender?.label ?? kind} destination's secrets cannot be decrypted: SECRETS_KEY changed. Restore it or PUT the destination again`,
    };
  }
  if (!destination) throw notConfigured();
  if (kind === 'meta') {
    if (!store.pixel_id) throw notConfigured();
    return checkMeta({
      baseUrl: env.metaGraphUrl,
      version: env.metaGraphVersion,
      pixelId: store.pixel_id,
      accessToken: destination.secrets.accessToken as string,
      testEventCode: store.capi_test_event_code,
      timeoutMs,
    });
  }
  if (!sender?.check) {
    return {
      ok: false,
      message: `${sender?.label ?? kind} has no check without a live conversion yet: send a test-mode conversion and look at its forwarding status`,
    };
  }
  return sender.check({ ...destination, env, timeoutMs });
}
