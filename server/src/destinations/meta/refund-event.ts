import type { Reader } from '../../db/database.js';
import type { ConversionsTable, DestinationJobsTable, RefundsTable, StoresTable } from '../../db/schema.js';
import { fromMinorUnits } from '../../money.js';
import type { MetaEvent } from './event.js';
import { jobFor, MAX_EVENT_AGE_MS } from './forwarding.js';

/** Meta's event id of a refund event: derived from the refundId, so a resent refund is one event to Meta. */
export const refundEventId = (refundId: string) => `refund_${refundId}`;

/**
 * The Meta refund event of a refund when the store opted in (`refundEvent` on the meta
 * destination, api.md §9): a custom event of that name with the conversion's customer data, the
 * negative refunded amount, the order's `order_id` and an event id derived from the refundId. It
 * is the conversion's Meta job of kind `refund` keyed by the refund's row id (`job_key`), sent
 * after the conversion's own job like every destination's refund job (refund-order.ts).
 * Undefined when not opted in, when the conversion was not forwarded to Meta (skipped), when a
 * test-mode refund has no test event code, or when the refund is older than Meta's 7 days.
 */
export async function planMetaRefund(
  db: Reader,
  store: StoresTable,
  conversion: ConversionsTable,
  refund: RefundsTable,
  now: number,
): Promise<DestinationJobsTable | undefined> {
  if (!store.capi_refund_event || !store.pixel_id || !store.capi_access_token) return undefined;
  if (conversion.capi_status === 'skipped') return undefined;
  if (conversion.livemode === 0 && !store.capi_test_event_code) return undefined;
  const at = Math.min(refund.refund_time, now);
  if (now - at > MAX_EVENT_AGE_MS) return undefined;
  const job = await jobFor(db, store, conversion, now);
  const original = JSON.parse(job.payload) as MetaEvent;
  const event: MetaEvent = {
    event_name: store.capi_refund_event,
    event_time: Math.floor(at / 1000),
    event_id: refundEventId(refund.refund_id),
    action_source: 'website',
    ...(original.event_source_url && { event_source_url: original.event_source_url }),
    user_data: original.user_data,
    custom_data: {
      value: -fromMinorUnits(refund.amount_minor, refund.currency),
      currency: refund.currency,
      order_id: conversion.order_id,
    },
  };
  return { ...job, job_key: refund.id, kind: 'refund', payload: JSON.stringify(event), expires_at: at + MAX_EVENT_AGE_MS };
}
