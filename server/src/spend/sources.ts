import type { Database } from '../db/database.js';
import { deleteSource, findSource, putSource, requestSync, storeSources } from '../db/repositories/spend-sources.js';
import type { SpendSourcesTable } from '../db/schema.js';
import { ApiError } from '../http/errors.js';
import type { SecretBox } from '../secrets.js';
import { requireStore } from '../stores/lookup.js';
import type { Tenant } from '../tenancy.js';
import { openSecrets, resolveCredentials, sealSecrets } from './credentials.js';
import {
  checkSourceKind,
  parseSource,
  presentSettings,
  type SourceSettings,
  SPEND_SOURCE_KINDS,
  type SpendSourceKind,
} from './source-settings.js';

/**
 * A store's spend sources (api.md §11 "Spend sources"): GET lists every kind, PUT connects one
 * (due at once, with a backfill), DELETE disconnects it (the spend it recorded stays), POST …/sync
 * makes it due now. The sync itself is the leased job of spend/sync.ts; `wake` tells this
 * instance's syncer that something fell due.
 */
export interface SpendSourceView {
  kind: SpendSourceKind;
  configured: boolean;
  accounts: string[];
  status: 'never' | 'ok' | 'failing';
  lastSyncedAt: string | null;
  syncedThrough: string | null;
  lastError?: string;
  settings: Record<string, unknown> | null;
}

const iso = (ms: number | string | null) => (ms === null ? null : new Date(Number(ms)).toISOString());

export function presentSource(kind: SpendSourceKind, row: SpendSourcesTable | undefined, secrets: SecretBox): SpendSourceView {
  if (!row) {
    return { kind, configured: false, accounts: [], status: 'never', lastSyncedAt: null, syncedThrough: null, settings: null };
  }
  const settings = JSON.parse(row.settings) as SourceSettings;
  const own = openSecrets(secrets, row.store_id, kind, row.secrets) ?? {};
  return {
    kind,
    configured: true,
    accounts: settings.accounts,
    status: row.status,
    lastSyncedAt: iso(row.last_synced_at),
    syncedThrough: row.synced_through,
    ...(row.last_error !== null && { lastError: row.last_error }),
    settings: presentSettings(kind, settings, own, Number(row.backfill_days)),
  };
}

export async function listSpendSources(database: Database, tenant: Tenant, storeId: string, secrets: SecretBox) {
  const store = await requireStore(database.read, tenant, storeId);
  const rows = new Map((await storeSources(database.read, store.id)).map((r) => [r.kind, r]));
  return SPEND_SOURCE_KINDS.map((kind) => presentSource(kind, rows.get(kind), secrets));
}

export async function putSpendSource(
  database: Database,
  tenant: Tenant,
  storeId: string,
  kindParam: string,
  body: Record<string, unknown>,
  secrets: SecretBox,
  wake: () => void,
  now = Date.now(),
): Promise<SpendSourceView> {
  const kind = checkSourceKind(kindParam);
  const store = await requireStore(database.read, tenant, storeId);
  const existing = await findSource(database.read, { storeId: store.id, kind });
  const previous = existing ? openSecrets(secrets, store.id, kind, existing.secrets) : undefined;
  const parsed = parseSource(kind, body, previous);
  // An omitted secret is the destination's: with neither, the field is named now, not at the first sync.
  const resolved = await resolveCredentials(database.read, secrets, {
    accountId: tenant.accountId,
    storeId: store.id,
    kind,
    settings: parsed.settings,
    own: parsed.secrets,
  });
  if ('missing' in resolved) {
    throw new ApiError('missing_required_field', resolved.message, { field: resolved.missing, reason: 'required_field_missing' });
  }
  const row: SpendSourcesTable = {
    store_id: store.id,
    kind,
    account_id: tenant.accountId,
    settings: JSON.stringify(parsed.settings),
    secrets: sealSecrets(secrets, store.id, kind, parsed.secrets),
    backfill_days: parsed.backfillDays,
    status: 'never',
    last_synced_at: null,
    synced_through: null,
    last_error: null,
    consecutive_failures: 0,
    next_sync_at: now,
    claimed_by: null,
    lease_until: null,
    created_at: now,
    updated_at: now,
  };
  await database.write((trx) => putSource(trx, row));
  wake();
  return presentSource(kind, await findSource(database.read, { storeId: store.id, kind }), secrets);
}

export async function deleteSpendSource(database: Database, tenant: Tenant, storeId: string, kindParam: string) {
  const kind = checkSourceKind(kindParam);
  const store = await requireStore(database.read, tenant, storeId);
  const removed = await database.write((trx) => deleteSource(trx, { storeId: store.id, kind }));
  if (!removed) throw new ApiError('not_found', `Store ${store.id} has no ${kind} spend source`);
  return {
    kind,
    configured: false,
    accounts: [],
    status: 'never' as const,
    lastSyncedAt: null,
    syncedThrough: null,
    settings: null,
  };
}

/** POST …/sync (202): the source falls due now; the answer is the source as it is (the run follows). */
export async function syncSpendSourceNow(
  database: Database,
  tenant: Tenant,
  storeId: string,
  kindParam: string,
  secrets: SecretBox,
  wake: () => void,
  now = Date.now(),
): Promise<SpendSourceView> {
  const kind = checkSourceKind(kindParam);
  const store = await requireStore(database.read, tenant, storeId);
  const requested = await database.write((trx) => requestSync(trx, { storeId: store.id, kind }, now));
  if (!requested) throw new ApiError('not_found', `Store ${store.id} has no ${kind} spend source`);
  wake();
  return presentSource(kind, await findSource(database.read, { storeId: store.id, kind }), secrets);
}
