import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { Database } from '../db/database.js';
import type { Page } from '../db/repositories/keyset.js';
import {
  deleteWebhook,
  disableWebhook,
  findDelivery,
  findMessage,
  findWebhook,
  listDeliveries,
  listWebhooks,
  updateWebhook,
} from '../db/repositories/webhooks.js';
import type { WebhookDeliveriesTable, WebhooksTable } from '../db/schema.js';
import { ApiError, invalid } from '../http/errors.js';
import { newId } from '../ids.js';
import type { SecretBox } from '../secrets.js';
import { modeFlag, type Tenant } from '../tenancy.js';
import { literalAddress, refusalOf } from './address.js';
import { secretContext, type WebhookDispatcher } from './dispatcher.js';
import { insertWithinCap } from './endpoint-cap.js';
import type { WebhookEventType } from './events.js';
import { newSigningSecret } from './signing.js';

export interface WebhookInput {
  url: string;
  events: WebhookEventType[];
  description?: string;
}

export interface WebhookPolicy {
  allowPrivate: boolean;
  /**
   * Resolves a host name (DNS by default). Tests stand in for DNS with the same function the
   * dispatcher's connect-time check uses (WebhookTuning.resolve), so both checks see one answer.
   */
  resolve?: typeof dnsLookup;
  /** Endpoints per account and mode at most (WEBHOOK_MAX_ENDPOINTS; endpoint-cap.ts). */
  maxEndpoints?: number;
}

function resolveAll(resolve: typeof dnsLookup, hostname: string): Promise<string[]> {
  return new Promise((settle, fail) => {
    resolve(hostname, { all: true }, (error, addresses) => {
      if (error) fail(error);
      else settle((addresses as LookupAddress[]).map((a) => a.address));
    });
  });
}

/**
 * An endpoint URL must be https, carry no credentials, and (unless private addresses are
 * allowed) neither be nor resolve to an address that is not public unicast (address.ts). A name
 * that does not resolve now is accepted: every delivery checks the address it connects to anyway
 * (send.ts).
 */
export async function checkEndpointUrl(raw: string, policy: WebhookPolicy): Promise<string> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid('url', 'invalid_url', 'url must be an absolute https URL');
  }
  if (url.protocol !== 'https:') throw invalid('url', 'invalid_url', 'url must use https');
  if (url.username || url.password) throw invalid('url', 'invalid_url', 'url must not carry a user name or password');
  if (url.hash) throw invalid('url', 'invalid_url', 'url must not have a #fragment');
  if (policy.allowPrivate) return url.toString();
  const refuse = (why: string) =>
    invalid(
      'url',
      'invalid_url',
      `url must not point to a private, loopback or link-local address (${why}); WEBHOOKS_ALLOW_PRIVATE=true allows it for local development`,
    );
  const literal = literalAddress(url.hostname);
  if (literal !== undefined) {
    const refusal = refusalOf(literal);
    if (refusal) throw refuse(`${literal} is ${refusal}`);
    return url.toString();
  }
  const host = url.hostname.toLowerCase().replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost')) throw refuse(`${host} is loopback`);
  let addresses: string[] = [];
  try {
    addresses = await resolveAll(policy.resolve ?? dnsLookup, host);
  } catch {
    addresses = [];
  }
  for (const address of addresses) {
    const refusal = refusalOf(address);
    if (refusal) throw refuse(`${host} resolves to ${address}, ${refusal}`);
  }
  return url.toString();
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export function presentWebhook(row: WebhooksTable) {
  return {
    id: row.id,
    url: row.url,
    events: JSON.parse(row.events) as string[],
    description: row.description,
    status: row.status,
    disabledReason: row.disabled_reason,
    disabledAt: iso(row.disabled_at),
    livemode: row.livemode === 1,
    createdAt: new Date(row.created_at).toISOString(),
  };
}

export function presentDelivery(row: WebhookDeliveriesTable) {
  return {
    id: row.id,
    webhookId: row.webhook_id,
    eventId: row.event_id,
    event: row.event_type,
    attempt: row.attempt,
    status: row.status,
    responseCode: row.response_code,
    error: row.error,
    durationMs: row.duration_ms,
    at: new Date(row.at).toISOString(),
  };
}

/** Creates an endpoint in the key's mode; the answer carries the signing secret, shown this once. */
export async function createWebhook(
  database: Database,
  tenant: Tenant,
  input: WebhookInput,
  secrets: SecretBox,
  policy: WebhookPolicy,
  now = Date.now(),
) {
  const url = await checkEndpointUrl(input.url, policy);
  const events = [...new Set(input.events)];
  const id = newId('webhook', now);
  const secret = newSigningSecret();
  const row: WebhooksTable = {
    id,
    account_id: tenant.accountId,
    livemode: modeFlag(tenant),
    url,
    events: JSON.stringify(events),
    description: input.description ?? null,
    secret: secrets.seal(secret, secretContext(id)),
    status: 'enabled',
    disabled_reason: null,
    disabled_at: null,
    created_at: now,
    updated_at: now,
  };
  await insertWithinCap(database, row, policy.maxEndpoints);
  // secretRedacted: a replay of this answer (http/idempotency.ts, `shownOnce`) says true, secret null.
  return { ...presentWebhook(row), secret, secretRedacted: false };
}

export interface WebhookPatch {
  url?: string;
  events?: WebhookEventType[];
  description?: string | null;
  enabled?: boolean;
}

/** Why an endpoint is disabled when its account disables it (PATCH `enabled: false`). */
export const DISABLED_BY_REQUEST = 'Disabled by a request (PATCH /v1/webhooks/:id with enabled: false)';

/**
 * Changes an endpoint; the fields left out keep their values and the secret is never changed.
 * `enabled: true` re-enables a disabled endpoint (its reason cleared): events from now on are
 * sent to it again; the messages given up when it was disabled stay failed (each can be resent).
 * `enabled: false` disables it as the dispatcher does after 3 days of failures.
 */
export async function updateWebhookOf(
  database: Database,
  tenant: Tenant,
  id: string,
  patch: WebhookPatch,
  policy: WebhookPolicy,
  now = Date.now(),
) {
  const url = patch.url === undefined ? undefined : await checkEndpointUrl(patch.url, policy);
  const row = await database.write(async (trx) => {
    const current = await findWebhook(trx, tenant.accountId, modeFlag(tenant), id);
    if (!current) return undefined;
    if (patch.enabled === false) await disableWebhook(trx, id, DISABLED_BY_REQUEST, now);
    const reenable = patch.enabled === true && current.status === 'disabled';
    return updateWebhook(trx, id, {
      ...(url !== undefined && { url }),
      ...(patch.events !== undefined && { events: JSON.stringify([...new Set(patch.events)]) }),
      ...(patch.description !== undefined && { description: patch.description }),
      ...(reenable && { status: 'enabled' as const, disabled_reason: null, disabled_at: null }),
      updated_at: now,
    });
  });
  if (!row) throw new ApiError('not_found', `No webhook endpoint ${id}`);
  return presentWebhook(row);
}

export async function requireWebhook(database: Database, tenant: Tenant, id: string): Promise<WebhooksTable> {
  const row = await findWebhook(database.read, tenant.accountId, modeFlag(tenant), id);
  if (!row) throw new ApiError('not_found', `No webhook endpoint ${id}`);
  return row;
}

export async function listWebhooksOf(database: Database, tenant: Tenant, page: Page) {
  return listWebhooks(database.read, tenant.accountId, modeFlag(tenant), page);
}

/** Deletes an endpoint: nothing more is sent to it, its pending messages and attempts go with it. */
export async function deleteWebhookOf(database: Database, tenant: Tenant, id: string) {
  const row = await requireWebhook(database, tenant, id);
  const deleted = await database.write((trx) => deleteWebhook(trx, tenant.accountId, modeFlag(tenant), id));
  if (!deleted) throw new ApiError('not_found', `No webhook endpoint ${id}`);
  return { ...presentWebhook(row), deleted: true };
}

export async function listDeliveriesOf(database: Database, tenant: Tenant, webhookId: string, page: Page) {
  await requireWebhook(database, tenant, webhookId);
  return listDeliveries(database.read, webhookId, page);
}

/**
 * Sends the message of an attempt again, now, with the same `webhook-id`: a new attempt,
 * recorded and answered. Allowed on a disabled endpoint too (to check a fix), which stays disabled.
 */
export async function resendDelivery(
  database: Database,
  tenant: Tenant,
  webhookId: string,
  deliveryId: string,
  dispatcher: WebhookDispatcher,
) {
  const endpoint = await requireWebhook(database, tenant, webhookId);
  const delivery = await findDelivery(database.read, webhookId, deliveryId);
  const message = delivery && (await findMessage(database.read, webhookId, delivery.event_id));
  if (!message) throw new ApiError('not_found', `No delivery ${deliveryId} of webhook endpoint ${webhookId}`);
  return presentDelivery(await dispatcher.attempt(endpoint, message));
}
