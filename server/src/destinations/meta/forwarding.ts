import { withReportRollup } from '../../analytics/report-rollups.js';
import type { Database, Reader } from '../../db/database.js';
import { type AttributedClick, attributedClickOf } from '../../db/repositories/clicks.js';
import { findConversion } from '../../db/repositories/conversions.js';
import { requeueMetaJob } from '../../db/repositories/job-status.js';
import { findStore } from '../../db/repositories/stores.js';
import type { ConversionsTable, DestinationJobsTable, StoresTable } from '../../db/schema.js';
import { ApiError } from '../../http/errors.js';
import { conversionNotFound } from '../../http/not-found.js';
import { modeFlag, type Tenant } from '../../tenancy.js';
import { buildMetaEvent } from './event.js';

/** Meta accepts events up to 7 days after they happened; older ones are not sent at all. */
export const MAX_EVENT_AGE_MS = 7 * 86_400_000;

/** The in-process dispatcher (destinations/dispatcher.ts), as the code that enqueues conversions sees it. */
export interface Forwarder {
  /**
   * Called before the jobs' write: a running dispatcher marks them as already claimed by
   * itself, so once committed they are sent straight from memory, without a claim write.
   */
  reserve(jobs: DestinationJobsTable[]): void;
  /** After the jobs' write committed: sends them, and resolves like `awaitDelivery` for the Meta job. */
  handoff(jobs: DestinationJobsTable[]): Promise<boolean>;
  /** Waits up to CAPI_SYNC_WAIT_MS for the first attempt: true only when Meta acknowledged the event. */
  awaitDelivery(conversionId: string): Promise<boolean>;
}

/**
 * A Meta job's route (`destination_jobs.route`): the pixel and test event code it goes to. A
 * pixel id is digits only, so the first colon separates the two.
 */
export function metaRoute(pixelId: string, testEventCode: string | null): string {
  return `${pixelId}:${testEventCode ?? ''}`;
}

export function parseMetaRoute(route: string): { pixelId: string; testEventCode: string | null } {
  const at = route.indexOf(':');
  const pixelId = at < 0 ? route : route.slice(0, at);
  const testEventCode = at < 0 ? '' : route.slice(at + 1);
  return { pixelId, testEventCode: testEventCode === '' ? null : testEventCode };
}

/** Why a conversion was recorded without being forwarded to Meta (`capi.status: skipped`, `capi.reason`). */
export const SKIP_REASONS = ['not_configured', 'test_event_code_missing', 'expired'] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

const SKIP_MESSAGES: Record<SkipReason, string> = {
  not_configured: 'Not sent to Meta: the store had no pixelId and capiAccessToken when the conversion was recorded',
  test_event_code_missing:
    'Not sent to Meta: a test-mode conversion is sent only as a test event, and the store had no capiTestEventCode ' +
    'when it was recorded; set one, then resend it',
  expired: 'Not sent to Meta: Meta accepts events up to 7 days old, and this one was older when it was recorded',
};

type NotForwarded = { reason: 'not_configured' | 'expired'; skip: SkipReason; message: string };

/** Why a conversion is not (or no longer) forwarded to Meta under the store's current settings. */
function whyNotForwarded(store: StoresTable, conversion: ConversionsTable, now: number): NotForwarded | undefined {
  if (!store.pixel_id || !store.capi_access_token) {
    return {
      reason: 'not_configured',
      skip: 'not_configured',
      message: `Store ${store.id} does not forward to Meta: set its pixelId and capiAccessToken`,
    };
  }
  // Test data reaches Meta only as test events, so it can never count as a real conversion.
  if (conversion.livemode === 0 && !store.capi_test_event_code) {
    return {
      reason: 'not_configured',
      skip: 'test_event_code_missing',
      message: `Test-mode conversions are forwarded only when the store has a capiTestEventCode; store ${store.id} has none`,
    };
  }
  if (now - conversion.event_time > MAX_EVENT_AGE_MS) {
    return { reason: 'expired', skip: 'expired', message: 'Meta accepts events up to 7 days old; this conversion is older' };
  }
  return undefined;
}

export async function jobFor(
  db: Reader,
  store: StoresTable,
  conversion: ConversionsTable,
  now: number,
  attributedClick: AttributedClick = attributedClickOf(db, conversion),
): Promise<DestinationJobsTable> {
  const click = await attributedClick();
  return {
    conversion_id: conversion.id,
    destination: 'meta',
    job_key: '',
    kind: 'conversion',
    account_id: conversion.account_id,
    store_id: store.id,
    livemode: conversion.livemode,
    route: metaRoute(store.pixel_id as string, conversion.livemode === 1 ? null : store.capi_test_event_code),
    payload: JSON.stringify(buildMetaEvent(conversion, click)),
    status: 'pending',
    attempts: 0,
    next_attempt_at: now,
    expires_at: Math.min(conversion.event_time, now) + MAX_EVENT_AGE_MS,
    claimed_by: null,
    last_error: null,
    trace_id: null,
    created_at: now,
    updated_at: now,
    sent_at: null,
  };
}

/**
 * The delivery job for a conversion about to be recorded, or why it is not forwarded (store not
 * configured, test mode without a test code, or older than 7 days → `skipped`).
 * Reads only; the job is written with the conversion, in the same statement or transaction
 * (`recordConversionOnce`).
 */
export async function planDelivery(
  db: Reader,
  store: StoresTable,
  conversion: ConversionsTable,
  now: number,
  attributedClick: AttributedClick = attributedClickOf(db, conversion),
): Promise<{ job: DestinationJobsTable } | { skip: SkipReason }> {
  const refusal = whyNotForwarded(store, conversion, now);
  if (refusal) return { skip: refusal.skip };
  return { job: await jobFor(db, store, conversion, now, attributedClick) };
}

/**
 * The columns of a conversion recorded without being forwarded. A skipped conversion has had no
 * Meta error, so `capi_last_error` holds the skip reason — what was true when it was recorded
 * (the store's settings may change later); `presentForwarding` shows it as `capi.reason`, and a
 * resend clears it (requeueMetaJob).
 */
export function skippedColumns(skip: SkipReason): Pick<ConversionsTable, 'capi_status' | 'capi_last_error'> {
  return { capi_status: 'skipped', capi_last_error: skip };
}

/** A skipped conversion's reason; for one recorded before reasons were kept, what its row still tells. */
function skipReasonOf(row: ConversionsTable): SkipReason | undefined {
  const stored = row.capi_last_error;
  if (stored !== null && (SKIP_REASONS as readonly string[]).includes(stored)) return stored as SkipReason;
  if (row.created_at - row.event_time > MAX_EVENT_AGE_MS) return 'expired';
  return row.livemode === 1 ? 'not_configured' : undefined;
}

/** The forwarding state of a conversion, as the resend endpoint answers it. */
export function presentDelivery(row: ConversionsTable) {
  return { conversionId: row.id, ...presentForwarding(row) };
}

/** `capiSent` and `capi`: a conversion's forwarding state, as every response shows it. */
export function presentForwarding(row: ConversionsTable) {
  if (row.capi_status === 'skipped') {
    const reason = skipReasonOf(row);
    return {
      capiSent: false,
      capi: {
        status: row.capi_status,
        attempts: row.capi_attempts,
        ...(reason && { reason, message: SKIP_MESSAGES[reason] }),
      },
    };
  }
  return {
    capiSent: row.capi_status === 'sent',
    capi: {
      status: row.capi_status,
      attempts: row.capi_attempts,
      ...(row.capi_last_error !== null && { lastError: row.capi_last_error }),
      ...(row.capi_sent_at !== null && { sentAt: new Date(row.capi_sent_at).toISOString() }),
    },
  };
}

/**
 * Puts a failed (or skipped) conversion back in the outbox under the store's current settings
 * and waits for the first attempt like a new conversion does. One Meta acknowledged is never
 * sent again; one already pending is left as it is.
 */
export async function resendConversion(
  database: Database,
  forwarder: Forwarder | undefined,
  tenant: Tenant,
  conversionId: string,
  now = Date.now(),
) {
  const livemode = modeFlag(tenant);
  const row = await findConversion(database.read, tenant.accountId, livemode, conversionId);
  if (!row) throw await conversionNotFound(database.read, tenant, conversionId);
  if (row.capi_status === 'sent') {
    throw new ApiError('invalid_request', `Meta already acknowledged conversion ${conversionId}; it is never sent twice`, {
      reason: 'already_sent',
    });
  }
  if (row.capi_status === 'pending') return presentDelivery(row);

  const store = await findStore(database.read, tenant.accountId, row.store_id);
  if (!store) throw new ApiError('not_found', `No conversion ${conversionId}`);
  const refusal = whyNotForwarded(store, row, now);
  if (refusal) throw new ApiError('invalid_request', refusal.message, { reason: refusal.reason });
  const job = await jobFor(database.read, store, row, now);
  // The reconciliation's counts move with the conversion's Meta status (report-rollups.ts).
  const requeued = await database.write((trx) =>
    withReportRollup(trx, [conversionId], async () => {
      // Decided again inside the write: a concurrent resend or a late acknowledgement wins.
      const current = await findConversion(trx, tenant.accountId, livemode, conversionId);
      if (!current || current.capi_status === 'sent' || current.capi_status === 'pending') return false;
      await requeueMetaJob(trx, job);
      return true;
    }),
  );
  if (requeued && forwarder) await forwarder.awaitDelivery(conversionId);
  const after = await findConversion(database.read, tenant.accountId, livemode, conversionId);
  return presentDelivery(after ?? row);
}
