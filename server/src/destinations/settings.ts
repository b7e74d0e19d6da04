import type { Database, Reader } from '../db/database.js';
import { deleteHealth } from '../db/repositories/destination-health.js';
import {
  deleteStoreDestination,
  findStoreDestination,
  putStoreDestination,
  storeDestinations,
} from '../db/repositories/destinations.js';
import { findStore } from '../db/repositories/stores.js';
import type { StoreDestinationsTable, StoresTable } from '../db/schema.js';
import { ApiError, fieldError } from '../http/errors.js';
import type { SecretBox } from '../secrets.js';
import { requireStore } from '../stores/lookup.js';
import { presentStore, updateStore } from '../stores/stores.js';
import type { Tenant } from '../tenancy.js';
import { storeUpdatedEvent, webhookEvents } from '../webhooks/events.js';
import { type HealthView, presentHealth, storeHealth } from './health.js';
import { metaSettings } from './meta/index.js';
import { ADAPTERS, adapterOf, DESTINATION_KINDS, type DestinationKind } from './registry.js';

/** The PUT body's schema of each kind (the OpenAPI document shows one operation per kind). */
export function settingsSchemaOf(kind: DestinationKind) {
  return kind === 'meta' ? metaSettings.settingsSchema : ADAPTERS[kind].settingsSchema;
}

/**
 * The destinations of a store (api.md §8): GET lists every kind with its state, PUT configures
 * one, DELETE removes one. Secrets are write-only (sealed with the store id, like the Meta
 * token); a PUT that leaves a secret out keeps the stored one.
 */
export interface DestinationView {
  kind: DestinationKind;
  configured: boolean;
  settings: Record<string, unknown> | null;
  updatedAt: string | null;
}

export function checkKind(kind: string): DestinationKind {
  if ((DESTINATION_KINDS as readonly string[]).includes(kind)) return kind as DestinationKind;
  throw fieldError('invalid_request', 'kind', 'unknown_value', `kind must be one of ${DESTINATION_KINDS.join(', ')}`);
}

function metaView(store: StoresTable): DestinationView {
  const settings = metaSettings.present(store);
  return {
    kind: 'meta',
    configured: settings !== null,
    settings,
    updatedAt: settings !== null ? new Date(store.updated_at).toISOString() : null,
  };
}

function opened(row: StoreDestinationsTable, secrets: SecretBox) {
  return {
    settings: JSON.parse(row.config) as Record<string, unknown>,
    secrets: JSON.parse(secrets.open(row.secrets, `${row.store_id}:${row.kind}`)) as Record<string, unknown>,
  };
}

function view(kind: DestinationKind, row: StoreDestinationsTable | undefined): DestinationView {
  const adapter = adapterOf(kind);
  if (!adapter || !row) return { kind, configured: false, settings: null, updatedAt: null };
  return {
    kind,
    configured: true,
    settings: adapter.present(JSON.parse(row.config), {}),
    updatedAt: new Date(Number(row.updated_at)).toISOString(),
  };
}

/** The list shows each destination's health too (api.md §12): `unverified` while not configured. */
export async function listDestinations(
  database: Database,
  tenant: Tenant,
  storeId: string,
): Promise<Array<DestinationView & { health: HealthView }>> {
  const store = await requireStore(database.read, tenant, storeId);
  const rows = new Map((await storeDestinations(database.read, store.id)).map((r) => [r.kind, r]));
  const views = [metaView(store), ...(Object.keys(ADAPTERS) as DestinationKind[]).map((kind) => view(kind, rows.get(kind)))];
  const health = await storeHealth(
    database,
    store.id,
    views.filter((v) => v.configured).map((v) => v.kind),
  );
  return views.map((v) => ({ ...v, health: health.get(v.kind) ?? presentHealth(undefined, undefined) }));
}

export async function putDestination(
  database: Database,
  tenant: Tenant,
  storeId: string,
  kindParam: string,
  body: Record<string, unknown>,
  secrets: SecretBox,
  now = Date.now(),
): Promise<DestinationView> {
  const kind = checkKind(kindParam);
  const store = await requireStore(database.read, tenant, storeId);
  if (kind === 'meta') {
    // The old store fields are the meta destination.
    const { pixelId, accessToken, testEventCode, refundEvent } = metaSettings.parse(body, store);
    await updateStore(
      database,
      tenant,
      store.id,
      {
        pixelId,
        ...(accessToken !== undefined && { capiAccessToken: accessToken }),
        capiTestEventCode: testEventCode,
        capiRefundEvent: refundEvent,
      },
      secrets,
      undefined,
      ['destinations.meta'],
    );
    return metaView((await findStore(database.read, tenant.accountId, store.id)) ?? store);
  }
  const adapter = adapterOf(kind) as NonNullable<ReturnType<typeof adapterOf>>;
  const existing = await findStoreDestination(database.read, store.id, kind);
  let previous: ReturnType<typeof opened> | undefined;
  if (existing) {
    try {
      previous = opened(existing, secrets);
    } catch {
      previous = undefined; // SECRETS_KEY changed: every secret must be sent again
    }
  }
  const parsed = adapter.parse(body, previous);
  const row: StoreDestinationsTable = {
    store_id: store.id,
    kind,
    config: JSON.stringify(parsed.settings),
    secrets: secrets.seal(JSON.stringify(parsed.secrets), `${store.id}:${kind}`),
    created_at: now,
    updated_at: now,
  };
  await database.write(async (trx) => {
    await putStoreDestination(trx, row);
    await webhookEvents.emit(trx, storeUpdatedEvent(tenant.accountId, presentStore(store), [`destinations.${kind}`], now));
  });
  forgetDestinations(store.id);
  return view(kind, row);
}

export async function deleteDestination(
  database: Database,
  tenant: Tenant,
  storeId: string,
  kindParam: string,
  secrets: SecretBox,
): Promise<DestinationView> {
  const kind = checkKind(kindParam);
  const store = await requireStore(database.read, tenant, storeId);
  if (kind === 'meta') {
    const cleared = { pixelId: null, capiAccessToken: null, capiTestEventCode: null };
    await updateStore(database, tenant, store.id, cleared, secrets, undefined, ['destinations.meta']);
    return { kind, configured: false, settings: null, updatedAt: null };
  }
  const deleted = await database.write(async (trx) => {
    const removed = await deleteStoreDestination(trx, store.id, kind);
    await deleteHealth(trx, store.id, kind); // set up again, it starts unverified
    if (removed)
      await webhookEvents.emit(trx, storeUpdatedEvent(tenant.accountId, presentStore(store), [`destinations.${kind}`]));
    return removed;
  });
  forgetDestinations(store.id);
  if (!deleted) throw new ApiError('not_found', `Store ${store.id} has no ${kind} destination`);
  return { kind, configured: false, settings: null, updatedAt: null };
}

/**
 * The configured destinations of a store for routing a conversion, kept for a second per store
 * (each conversion would otherwise read them): a change made on another instance applies
 * within a second, one made here at once.
 */
const cache = new Map<string, { at: number; rows: StoreDestinationsTable[] }>();
const CACHE_MS = 1000;

export async function destinationsForRouting(db: Reader, storeId: string, now = Date.now()): Promise<StoreDestinationsTable[]> {
  const cached = cache.get(storeId);
  if (cached && now - cached.at < CACHE_MS) return cached.rows;
  const rows = await storeDestinations(db, storeId);
  if (cache.size > 10_000) cache.clear();
  cache.set(storeId, { at: now, rows });
  return rows;
}

export function forgetDestinations(storeId: string): void {
  cache.delete(storeId);
}

/**
 * The settings and opened secrets of a store's destination (for sending); undefined when removed.
 * Meta's are the store's current access token (a rotated token applies to jobs already queued).
 */
export async function openDestination(
  db: Reader,
  account: { accountId: string; storeId: string },
  kind: string,
  secrets: SecretBox,
): Promise<{ settings: Record<string, unknown>; secrets: Record<string, unknown> } | undefined> {
  if (kind === 'meta') {
    const store = await findStore(db, account.accountId, account.storeId);
    if (!store?.capi_access_token) return undefined;
    return { settings: {}, secrets: { accessToken: secrets.open(store.capi_access_token, store.id) } };
  }
  const row = await findStoreDestination(db, account.storeId, kind);
  return row ? opened(row, secrets) : undefined;
}
