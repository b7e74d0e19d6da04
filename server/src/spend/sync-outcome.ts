import type { Database } from '../db/database.js';
import { replaceSyncedSpend } from '../db/repositories/spend.js';
import { finishRun, heldSource } from '../db/repositories/spend-sources.js';
import type { AdSpendTable, SpendSourcesTable } from '../db/schema.js';
import { newId } from '../ids.js';
import { decimalExceeds, decimalToMinor, MAX_AMOUNT, normalizeCurrency, parseDecimal } from '../money.js';
import { spendSourceEvent, webhookEvents } from '../webhooks/events.js';
import type { SpendRow } from './platforms/types.js';

/** The part of pino the sync uses. */
export interface SyncLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** Why a run recorded nothing. */
export interface RunFailure {
  error: string;
  side: 'platform' | 'network';
  credential?: string;
  retryable?: boolean;
  /** The lease ended meanwhile (reconfigured, removed, taken over): nothing at all is recorded. */
  leaseLost?: boolean;
}

/** A source that just turned: logged once by the caller (its webhook is written already). */
export interface SyncTurn {
  turned: 'failing' | 'recovered';
  storeId: string;
  kind: string;
  message: string;
  consecutiveFailures: number;
}

export interface RunContext {
  database: Database;
  owner: string;
  /** The source as claimed. */
  row: SpendSourcesTable;
  now: number;
  intervalMs: number;
  retryBaseMs: number;
}

const LABELS: Record<string, string> = { meta: 'Meta', google_ads: 'Google Ads', tiktok: 'TikTok' };
const iso = (ms: number | string | null) => (ms === null ? null : new Date(Number(ms)).toISOString());

function statusOf(row: Pick<SpendSourcesTable, 'status' | 'last_synced_at' | 'synced_through' | 'last_error'>) {
  return {
    status: row.status,
    lastSyncedAt: iso(row.last_synced_at),
    syncedThrough: row.synced_through,
    ...(row.last_error !== null && { lastError: row.last_error }),
  };
}

/** The report's rows as ad spend entries, exactly (decimal text → minor units), or why they are not. */
function entriesOf(row: SpendSourcesTable, rows: SpendRow[], now: number): AdSpendTable[] | string {
  const byKey = new Map<string, AdSpendTable>();
  for (const [i, r] of rows.entries()) {
    const currency = normalizeCurrency(r.currency);
    if (!currency) return `row ${i} has currency ${JSON.stringify(r.currency)}, not an ISO 4217 code`;
    const amount = parseDecimal(r.amount);
    if (!amount || amount.negative || decimalExceeds(amount, MAX_AMOUNT)) {
      return `row ${i} has amount ${JSON.stringify(r.amount)}, not a non-negative decimal`;
    }
    if (!r.campaignId || r.campaignId.length > 255) return `row ${i} has no campaign id`;
    const minor = Number(decimalToMinor(amount, currency));
    const key = `${r.date}\n${r.campaignId}`;
    const same = byKey.get(key);
    if (same) {
      // One campaign's day in two rows (a split the platform made): their sum, in one currency.
      if (same.currency !== currency)
        return `campaign ${r.campaignId} on ${r.date} is reported in ${same.currency} and ${currency}`;
      same.amount_minor += minor;
      continue;
    }
    byKey.set(key, {
      id: newId('spend', now),
      account_id: row.account_id,
      store_id: row.store_id,
      livemode: 1,
      date: r.date,
      platform: row.kind,
      campaign_id: r.campaignId,
      campaign_name: r.campaignName === null ? null : r.campaignName.slice(0, 500),
      amount_minor: minor,
      currency,
      source: 'sync',
      created_at: now,
      updated_at: now,
    });
  }
  return [...byKey.values()];
}

/**
 * Records a pull that every account answered: the spend and the source's state, in one
 * transaction, only while `owner` holds the lease. A failing source recovers here (its webhook in
 * the same transaction). A report that does not convert exactly is a failure (nothing recorded).
 */
export async function recordSuccess(
  ctx: RunContext,
  pull: { rows: SpendRow[]; since: string; until: string; platform: string },
): Promise<SyncTurn | undefined> {
  const entries = entriesOf(ctx.row, pull.rows, ctx.now);
  if (typeof entries === 'string') {
    const error = `${pull.platform} reported spend this server cannot record exactly (${entries}); nothing of this sync was recorded`;
    return recordFailure(ctx, { error, side: 'platform', retryable: true });
  }
  const key = { storeId: ctx.row.store_id, kind: ctx.row.kind };
  return ctx.database.write(async (trx) => {
    const held = await heldSource(trx, key, ctx.owner);
    if (!held) return undefined;
    await replaceSyncedSpend(
      trx,
      { storeId: ctx.row.store_id, platform: ctx.row.kind },
      { startDate: pull.since, endDate: pull.until },
      entries,
      ctx.now,
    );
    const after = {
      status: 'ok' as const,
      last_synced_at: ctx.now,
      synced_through: pull.until,
      last_error: null,
      consecutive_failures: 0,
    };
    await finishRun(trx, held, Number(ctx.row.next_sync_at), {
      ...after,
      next_sync_at: ctx.now + ctx.intervalMs,
      updated_at: ctx.now,
    });
    if (held.status !== 'failing') return undefined;
    const failures = Number(held.consecutive_failures);
    const label = LABELS[held.kind] ?? held.kind;
    const message = `${label} spend syncs again after ${failures} failed ${failures === 1 ? 'sync' : 'syncs'} (through ${pull.until})`;
    await webhookEvents.emit(
      trx,
      spendSourceEvent(
        'spend_source.recovered',
        held.account_id,
        { storeId: held.store_id, source: held.kind, message, status: statusOf(after) },
        ctx.now,
      ),
    );
    return { turned: 'recovered' as const, storeId: held.store_id, kind: held.kind, message, consecutiveFailures: failures };
  });
}

/**
 * Records a failed run (nothing of its pull): the error, one more failure in the streak, and the
 * next try (sooner while the streak is short, never later than the interval). The first failure
 * of a streak turns the source failing: its webhook here, its one warning by the caller.
 */
export async function recordFailure(ctx: RunContext, failure: RunFailure): Promise<SyncTurn | undefined> {
  if (failure.leaseLost) return undefined;
  const key = { storeId: ctx.row.store_id, kind: ctx.row.kind };
  return ctx.database.write(async (trx) => {
    const held = await heldSource(trx, key, ctx.owner);
    if (!held) return undefined;
    const failures = Number(held.consecutive_failures) + 1;
    const retryIn = Math.min(ctx.intervalMs, ctx.retryBaseMs * 2 ** Math.min(failures - 1, 20));
    const after = {
      status: 'failing' as const,
      last_synced_at: held.last_synced_at,
      synced_through: held.synced_through,
      last_error: failure.error.slice(0, 1000),
      consecutive_failures: failures,
    };
    await finishRun(trx, held, Number(ctx.row.next_sync_at), {
      status: after.status,
      last_error: after.last_error,
      consecutive_failures: failures,
      next_sync_at: ctx.now + retryIn,
      updated_at: ctx.now,
    });
    if (held.status === 'failing') return undefined;
    await webhookEvents.emit(
      trx,
      spendSourceEvent(
        'spend_source.failing',
        held.account_id,
        { storeId: held.store_id, source: held.kind, message: after.last_error, status: statusOf(after) },
        ctx.now,
      ),
    );
    return {
      turned: 'failing' as const,
      storeId: held.store_id,
      kind: held.kind,
      message: after.last_error,
      consecutiveFailures: failures,
    };
  });
}
