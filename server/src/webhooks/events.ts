import { presentAttributedTo } from '../click-channel.js';
import type { Writer } from '../db/database.js';
import { fanOut, type WebhookEventRow } from '../db/repositories/webhooks.js';
import type { ConversionsTable, RefundsTable } from '../db/schema.js';
import { newId } from '../ids.js';
import { fromMinorUnits } from '../money.js';

/** The events an endpoint can subscribe to (api.md §9). */
export const WEBHOOK_EVENTS = [
  'conversion.attributed',
  'conversion.forwarding_failed',
  'refund.recorded',
  'store.updated',
  'destination.failing',
  'destination.recovered',
  'spend_source.failing',
  'spend_source.recovered',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENTS)[number];

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * An event as every endpoint receives it, in the Standard Webhooks shape
 * `{type, timestamp, data}`; the `webhook-id` header is its id.
 */
function eventRow(
  type: WebhookEventType,
  accountId: string,
  livemode: number | null,
  data: Record<string, unknown>,
  now: number,
): WebhookEventRow {
  const body = { type, timestamp: iso(now), data: livemode === null ? data : { ...data, livemode: livemode === 1 } };
  return {
    event_id: newId('webhookEvent', now),
    account_id: accountId,
    livemode,
    event_type: type,
    payload: JSON.stringify(body),
    created_at: now,
  };
}

/** `conversion.attributed`: a conversion recorded with an attributed click (written with the conversion). */
export function conversionAttributedEvent(
  row: ConversionsTable,
  now = row.created_at,
  /** Whether it is its customer's first (api.md §11); absent when it has neither email nor phone. */
  view: { customer?: { new: boolean } } = {},
): WebhookEventRow {
  const attributedTo = presentAttributedTo(row);
  return eventRow(
    'conversion.attributed',
    row.account_id,
    row.livemode,
    {
      conversionId: row.id,
      storeId: row.store_id,
      eventType: row.event_type,
      orderId: row.order_id,
      value: fromMinorUnits(row.value_minor, row.currency),
      currency: row.currency,
      eventTime: iso(row.event_time),
      attributedClickId: row.attributed_click_id,
      // As the API's attributedTo (api.md §12): fbclid only when the click has one, its ids, its channel.
      ...(attributedTo.fbclid !== undefined && { fbclid: attributedTo.fbclid }),
      clickIds: attributedTo.clickIds,
      ...(attributedTo.channel !== undefined && { channel: attributedTo.channel }),
      confidence: row.confidence,
      signal: row.attribution_signal,
      ...(view.customer && { customer: view.customer }),
    },
    now,
  );
}

/** `refund.recorded`, written with the refund. */
export function refundRecordedEvent(row: RefundsTable, conversionValueMinor: number): WebhookEventRow {
  const money = (minor: number) => fromMinorUnits(minor, row.currency);
  return eventRow(
    'refund.recorded',
    row.account_id,
    row.livemode,
    {
      refundId: row.refund_id,
      conversionId: row.conversion_id,
      storeId: row.store_id,
      orderId: row.order_id,
      amount: money(row.amount_minor),
      currency: row.currency,
      refundedTotal: money(row.refunded_after_minor),
      remaining: money(conversionValueMinor - row.refunded_after_minor),
      reason: row.reason,
      refundedAt: iso(row.refund_time),
    },
    row.created_at,
  );
}

/** `store.updated`: the store as GET shows it and what changed; configuration, so both modes' endpoints get it. */
export function storeUpdatedEvent(accountId: string, store: { id: string }, changes: string[], now = Date.now()) {
  return eventRow('store.updated', accountId, null, { storeId: store.id, store, changes }, now);
}

/**
 * `destination.failing` / `destination.recovered` (api.md §12): a store's destination turned, once
 * per turn, written in the transaction that turned it. Configuration, like `store.updated`: both
 * modes' endpoints get it.
 */
export function destinationHealthEvent(
  type: 'destination.failing' | 'destination.recovered',
  accountId: string,
  data: { storeId: string; destination: string; message: string; health: object },
  now = Date.now(),
) {
  return eventRow(type, accountId, null, data, now);
}

/**
 * `spend_source.failing` / `spend_source.recovered` (api.md §11): a store's spend source began a
 * failure streak or ended one, once per turn, written in the transaction that recorded the sync's
 * outcome. Configuration: both modes' endpoints get it.
 */
export function spendSourceEvent(
  type: 'spend_source.failing' | 'spend_source.recovered',
  accountId: string,
  data: { storeId: string; source: string; message: string; status: object },
  now = Date.now(),
) {
  return eventRow(type, accountId, null, data, now);
}

/**
 * Writes the event's outbox rows in the caller's transaction (none when no endpoint subscribes),
 * so an acknowledged change can't lose its webhook.
 */
export async function emit(trx: Writer, event: WebhookEventRow): Promise<void> {
  await fanOut(trx, event);
}

/**
 * `conversion.forwarding_failed` for conversions whose delivery to `destination` just ended
 * failed, in the transaction that recorded it. One call where a dispatcher marks jobs failed.
 */
export async function forwardingFailed(
  trx: Writer,
  destination: string,
  conversionIds: string[],
  error: string | null | ((conversionId: string) => string | null),
) {
  if (conversionIds.length === 0) return;
  const now = Date.now();
  const rows = await trx.selectFrom('conversions').selectAll().where('id', 'in', conversionIds).execute();
  for (const row of rows) {
    await fanOut(
      trx,
      eventRow(
        'conversion.forwarding_failed',
        row.account_id,
        row.livemode,
        {
          conversionId: row.id,
          storeId: row.store_id,
          eventType: row.event_type,
          orderId: row.order_id,
          destination,
          error: typeof error === 'function' ? error(row.id) : error,
        },
        now,
      ),
    );
  }
}

/** `forwardingFailed` for the conversion jobs of `rows` whose status is now `failed`, each with its own last error. */
export async function jobsFailed(
  trx: Writer,
  destination: string,
  rows: Array<{ conversion_id: string; status: string; last_error: string | null; kind?: string }>,
) {
  // A refund's job (a Google adjustment, a refund event) failing is not the conversion's forwarding failing.
  const failed = new Map(
    rows.filter((r) => r.status === 'failed' && r.kind !== 'refund').map((r) => [r.conversion_id, r.last_error]),
  );
  await forwardingFailed(trx, destination, [...failed.keys()], (id) => failed.get(id) ?? null);
}

/** What other modules call: `webhookEvents.emit(trx, …)`, `webhookEvents.forwardingFailed(trx, …)`. */
export const webhookEvents = { emit, forwardingFailed, jobsFailed };
