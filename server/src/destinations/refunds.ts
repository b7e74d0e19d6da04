import type { Reader, Writer } from '../db/database.js';
import { conversionAt, insertJobs, jobsOfConversions, jobsOfRefund, refundByKey } from '../db/repositories/destinations.js';
import type { ConversionsTable, DestinationJobsTable, RefundsTable, StoresTable } from '../db/schema.js';
import { planMetaRefund } from './meta/refund-event.js';
import { adapterOf } from './registry.js';
import type { ForwardingEntry } from './routing.js';
import { destinationsForRouting } from './settings.js';

/** Queues what a recorded refund sends to the ad platforms (in its transaction): Meta's refund event and the others' jobs. */
export async function forwardRefund(trx: Writer, store: StoresTable, refund: RefundsTable, now: number): Promise<void> {
  const conversion = await conversionAt(trx, refund.conversion_id, refund.conversion_time);
  if (!conversion) return;
  const meta = await planMetaRefund(trx, store, conversion, refund, now);
  if (meta) await insertJobs(trx, [meta]);
  await queueRefundJobs(trx, store, conversion, refund, now);
}

/** A refund's delivery to one platform, as the refund response shows it (`forwarding.<kind>`). */
export interface RefundForwardingEntry {
  status: 'pending' | 'sent' | 'failed' | 'skipped';
  attempts: number;
  lastError?: string;
  sentAt?: string;
  /** Google Ads: RETRACTION or RESTATEMENT. */
  adjustmentType?: string;
}

/**
 * Where a refund went (api.md §9): per platform that gets it, its job's state now — Meta's refund
 * event, Google Ads' adjustment, TikTok's refund event. A platform that gets nothing
 * for this refund has no entry.
 */
export async function refundForwarding(
  db: Reader,
  key: { storeId: string; livemode: number; refundId: string },
): Promise<Record<string, RefundForwardingEntry>> {
  const refund = await refundByKey(db, key.storeId, key.livemode, key.refundId);
  if (!refund) return {};
  const out: Record<string, RefundForwardingEntry> = {};
  const entry = (job: {
    status: RefundForwardingEntry['status'];
    attempts: number;
    last_error: string | null;
    sent_at: number | null;
  }): RefundForwardingEntry => ({
    status: job.status,
    attempts: job.attempts,
    ...(job.last_error !== null && { lastError: job.last_error }),
    ...(job.sent_at !== null && { sentAt: new Date(Number(job.sent_at)).toISOString() }),
  });
  for (const job of await jobsOfRefund(db, refund.conversion_id, refund.id)) {
    const type = (JSON.parse(job.payload) as { adjustmentType?: unknown }).adjustmentType;
    out[job.destination] = { ...entry(job), ...(typeof type === 'string' && { adjustmentType: type }) };
  }
  return out;
}

/**
 * The refund's jobs for destinations other than Meta (api.md §9), queued in the refund's own
 * transaction: one per destination that received the conversion or will (its `forwarding` entry
 * is not `skipped`) and takes refunds (`planRefund`: Google Ads always, TikTok with
 * `refundEvent`). Each job's key is the refund's row id; the dispatcher sends it after the
 * conversion and after the conversion's earlier refunds (refund-order.ts).
 */
export async function queueRefundJobs(
  trx: Writer,
  store: StoresTable,
  conversion: ConversionsTable,
  refund: RefundsTable,
  now: number,
): Promise<DestinationJobsTable[]> {
  const forwarding = conversion.forwarding ? (JSON.parse(conversion.forwarding) as Record<string, ForwardingEntry>) : {};
  const kinds = Object.entries(forwarding)
    .filter(([, entry]) => entry.status !== 'skipped')
    .map(([kind]) => kind);
  if (kinds.length === 0) return [];
  const destinations = await destinationsForRouting(trx, store.id, now);
  const jobs: DestinationJobsTable[] = [];
  for (const kind of kinds) {
    const adapter = adapterOf(kind);
    const destination = destinations.find((d) => d.kind === kind);
    if (!adapter?.planRefund || !destination) continue;
    const conversionJob = (await jobsOfConversions(trx, kind, [conversion.id])).find((j) => j.kind === 'conversion');
    const plan = adapter.planRefund({
      store,
      settings: JSON.parse(destination.config),
      conversion,
      refund,
      conversionPayload: conversionJob ? JSON.parse(conversionJob.payload) : undefined,
      now,
    });
    if (!plan) continue;
    const skipped = 'skip' in plan;
    jobs.push({
      conversion_id: conversion.id,
      destination: kind,
      job_key: refund.id,
      kind: 'refund',
      account_id: conversion.account_id,
      store_id: store.id,
      livemode: conversion.livemode,
      route: '',
      payload: skipped ? '{}' : JSON.stringify(plan.payload),
      status: skipped ? 'skipped' : 'pending',
      attempts: 0,
      next_attempt_at: now,
      expires_at: skipped ? now : plan.expiresAt,
      claimed_by: null,
      last_error: skipped ? plan.message : null,
      trace_id: null,
      created_at: now,
      updated_at: now,
      sent_at: null,
    });
  }
  await insertJobs(trx, jobs);
  return jobs;
}
