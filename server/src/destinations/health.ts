import type { Database, Writer } from '../db/database.js';
import {
  configuredDestinations,
  type HealthKey,
  healthOfStore,
  markFailing,
  oldestPendingAt,
  recordFailure,
  recordSuccess,
} from '../db/repositories/destination-health.js';
import type { DestinationHealthTable } from '../db/schema.js';
import { destinationHealthEvent, webhookEvents } from '../webhooks/events.js';
import { senderOf } from './registry.js';

/** Attempts in a row that fail before a destination is `failing` (api.md §12). */
export const FAILING_AFTER = 5;

/** `health` of a destination as the API shows it (api.md §12). */
export interface HealthView {
  status: 'unverified' | 'ok' | 'failing';
  lastSuccessAt?: string;
  lastFailureAt?: string;
  lastError?: string;
  consecutiveFailures: number;
  oldestPendingAt?: string;
}

/** What one request to a platform came to: any event acknowledged is a success (the platform answers). */
export type AttemptHealth = { ok: true } | { ok: false; error: string };

/** A destination that just turned: the caller logs it once (the webhook is written already). */
export interface HealthTurn {
  turned: 'failing' | 'recovered';
  storeId: string;
  destination: string;
  message: string;
  consecutiveFailures: number;
}

const iso = (ms: number | string | null | undefined) =>
  ms === null || ms === undefined ? undefined : new Date(Number(ms)).toISOString();
const labelOf = (kind: string) => senderOf(kind)?.label ?? kind;

export function presentHealth(row: DestinationHealthTable | undefined, oldestPending: number | undefined): HealthView {
  const status: HealthView['status'] =
    row?.status === 'failing'
      ? 'failing'
      : row?.last_success_at !== null && row?.last_success_at !== undefined
        ? 'ok'
        : 'unverified';
  const view: HealthView = { status, consecutiveFailures: Number(row?.consecutive_failures ?? 0) };
  const lastSuccessAt = iso(row?.last_success_at);
  const lastFailureAt = iso(row?.last_failure_at);
  const oldestPendingAt = iso(oldestPending);
  if (lastSuccessAt) view.lastSuccessAt = lastSuccessAt;
  if (lastFailureAt) view.lastFailureAt = lastFailureAt;
  if (row?.last_error) view.lastError = row.last_error;
  if (oldestPendingAt) view.oldestPendingAt = oldestPendingAt;
  return view;
}

/** Every destination's health of a store by kind (one read, and one seek per kind for its oldest pending job). */
export async function storeHealth(
  database: Database,
  storeId: string,
  kinds: readonly string[],
): Promise<Map<string, HealthView>> {
  const rows = new Map((await healthOfStore(database.read, storeId)).map((r) => [r.kind, r]));
  const views = new Map<string, HealthView>();
  for (const kind of kinds) views.set(kind, presentHealth(rows.get(kind), await oldestPendingAt(database.read, storeId, kind)));
  return views;
}

/**
 * Records one attempt's outcome in the transaction that records its jobs: a success ends the
 * streak (and recovers a failing destination), a failure adds one to it; the 5th in a row turns
 * the destination failing. A turn writes its webhook event here (the same transaction) and is
 * returned for the one log line.
 */
export async function recordAttempt(
  trx: Writer,
  key: HealthKey,
  attempt: AttemptHealth,
  now: number,
): Promise<HealthTurn | undefined> {
  const label = labelOf(key.kind);
  if (attempt.ok) {
    const before = await recordSuccess(trx, key, now);
    if (before?.status !== 'failing') return undefined;
    const failures = Number(before.consecutive_failures);
    const message = `${label} accepts events again${failures > 0 ? ` after ${failures} failed attempts` : ''}`;
    const health = presentHealth({ ...before, status: 'ok', consecutive_failures: 0, last_success_at: now }, undefined);
    await webhookEvents.emit(
      trx,
      destinationHealthEvent(
        'destination.recovered',
        key.accountId,
        { storeId: key.storeId, destination: key.kind, message, health },
        now,
      ),
    );
    return { turned: 'recovered', storeId: key.storeId, destination: key.kind, message, consecutiveFailures: failures };
  }
  const row = await recordFailure(trx, key, attempt.error, now);
  const failures = Number(row.consecutive_failures);
  if (failures < FAILING_AFTER || row.status === 'failing') return undefined;
  if (!(await markFailing(trx, key, 'failures', now))) return undefined;
  const message = `${failures} attempts in a row to deliver to ${label} failed; last error: ${attempt.error}`;
  return failingTurn(trx, key, { ...row, status: 'failing' }, message, now);
}

async function failingTurn(
  trx: Writer,
  key: HealthKey,
  row: DestinationHealthTable | undefined,
  message: string,
  now: number,
  oldestPending?: number,
): Promise<HealthTurn> {
  const health = presentHealth(row, oldestPending);
  health.status = 'failing';
  await webhookEvents.emit(
    trx,
    destinationHealthEvent(
      'destination.failing',
      key.accountId,
      { storeId: key.storeId, destination: key.kind, message, health },
      now,
    ),
  );
  return {
    turned: 'failing',
    storeId: key.storeId,
    destination: key.kind,
    message,
    consecutiveFailures: health.consecutiveFailures,
  };
}

/**
 * The periodic check (the dispatcher runs it): a destination with a job pending longer than
 * `alertAfterMs` and nothing delivered to it for as long turns failing. Each destination costs one
 * seek (its oldest pending job); failing ones are not looked at. Several instances may run it at
 * once: the turn is a conditional update, so one of them turns it, logs and emits.
 */
export async function checkStale(database: Database, alertAfterMs: number, now = Date.now()): Promise<HealthTurn[]> {
  const keys = await configuredDestinations(database.read);
  const health = new Map(
    (await database.read.selectFrom('destination_health').selectAll().execute()).map((r) => [`${r.store_id}\n${r.kind}`, r]),
  );
  const turns: HealthTurn[] = [];
  for (const key of keys) {
    const row = health.get(`${key.storeId}\n${key.kind}`);
    if (row?.status === 'failing') continue;
    // Delivered within the window: the platform takes events; old jobs are retries of their own.
    if (row?.last_success_at !== null && row?.last_success_at !== undefined && Number(row.last_success_at) > now - alertAfterMs)
      continue;
    const oldest = await oldestPendingAt(database.read, key.storeId, key.kind);
    if (oldest === undefined || oldest > now - alertAfterMs) continue;
    const seconds = Math.round(alertAfterMs / 1000);
    const lastError = row?.last_error ? `; last error: ${row.last_error}` : '; no attempt has been recorded';
    const message = `A conversion has waited for ${labelOf(key.kind)} since ${iso(oldest)} (more than ${seconds} s)${lastError}`;
    const turn = await database.write(async (trx) => {
      if (!(await markFailing(trx, key, 'stale', now))) return undefined;
      const current = await trx
        .selectFrom('destination_health')
        .selectAll()
        .where('store_id', '=', key.storeId)
        .where('kind', '=', key.kind)
        .executeTakeFirst();
      return failingTurn(trx, key, current, message, now, oldest);
    });
    if (turn) turns.push(turn);
  }
  return turns;
}
