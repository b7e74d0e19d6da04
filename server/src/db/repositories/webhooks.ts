import { sql } from 'kysely';
import type { Reader, Writer } from '../database.js';
import { rowLimit } from '../row-limit.js';
import type { WebhookDeliveriesTable, WebhookEventRow, WebhooksTable } from '../schema.js';
import { afterKeyset, type Page } from './keyset.js';

export async function insertWebhook(db: Writer, row: WebhooksTable): Promise<void> {
  await db.insertInto('webhooks').values(row).execute();
}

export async function findWebhook(db: Reader, accountId: string, livemode: number, id: string) {
  return db
    .selectFrom('webhooks')
    .selectAll()
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .where('livemode', '=', livemode)
    .executeTakeFirst();
}

export async function webhookById(db: Reader, id: string): Promise<WebhooksTable | undefined> {
  return db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listWebhooks(db: Reader, accountId: string, livemode: number, page: Page): Promise<WebhooksTable[]> {
  let query = db.selectFrom('webhooks').selectAll().where('account_id', '=', accountId).where('livemode', '=', livemode);
  const after = page.after;
  if (after) query = query.where((eb) => afterKeyset(eb, 'created_at', 'id', after));
  return query
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(rowLimit(page.limit + 1))
    .execute();
}

/** Removes an endpoint with its outbox and its attempts; false when the account has no such endpoint. */
export async function deleteWebhook(db: Writer, accountId: string, livemode: number, id: string): Promise<boolean> {
  const deleted = await db
    .deleteFrom('webhooks')
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .where('livemode', '=', livemode)
    .executeTakeFirst();
  if (Number(deleted.numDeletedRows) === 0) return false;
  await db.deleteFrom('webhook_messages').where('webhook_id', '=', id).execute();
  await db.deleteFrom('webhook_deliveries').where('webhook_id', '=', id).execute();
  return true;
}

export type { WebhookEventRow };

/**
 * Writes one outbox row per enabled endpoint of the account that subscribes to the event, in
 * the caller's transaction (one statement; none when no endpoint wants it). The event type is
 * matched as a quoted JSON string in the endpoint's `events`.
 */
export async function fanOut(db: Writer, event: WebhookEventRow): Promise<void> {
  const mode = event.livemode === null ? sql`` : sql` and livemode = ${event.livemode}`;
  await sql`
    insert into webhook_messages
      (webhook_id, event_id, account_id, livemode, event_type, payload, status, attempts, next_attempt_at, created_at)
    select id, cast(${event.event_id} as text), account_id, livemode, cast(${event.event_type} as text),
      cast(${event.payload} as text), 'pending', 0, cast(${event.created_at} as bigint), cast(${event.created_at} as bigint)
    from webhooks
    where account_id = ${event.account_id} and status = 'enabled' and events like ${`%"${event.event_type}"%`}${mode}`.execute(
    db,
  );
}

/** When the next pending message falls due (a lease end counts: it is taken again then). */
export async function nextMessageDueAt(db: Reader): Promise<number | undefined> {
  const row = await db
    .selectFrom('webhook_messages')
    .select((eb) => eb.fn.min('next_attempt_at').as('next'))
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return row?.next === null || row?.next === undefined ? undefined : Number(row.next);
}

export async function findMessage(db: Reader, webhookId: string, eventId: string) {
  return db
    .selectFrom('webhook_messages')
    .selectAll()
    .where('webhook_id', '=', webhookId)
    .where('event_id', '=', eventId)
    .executeTakeFirst();
}

/** Counts one more attempt of a message and returns its number (atomic: concurrent attempts get distinct numbers). */
export async function countAttempt(db: Writer, webhookId: string, eventId: string): Promise<number | undefined> {
  const row = await db
    .updateTable('webhook_messages')
    .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
    .where('webhook_id', '=', webhookId)
    .where('event_id', '=', eventId)
    .returning('attempts')
    .executeTakeFirst();
  return row?.attempts;
}

export async function insertDelivery(db: Writer, row: WebhookDeliveriesTable): Promise<void> {
  await db.insertInto('webhook_deliveries').values(row).execute();
}

/** The message was acknowledged: recorded whoever holds it (an acknowledgement is the truth). */
export async function markSucceeded(db: Writer, webhookId: string, eventId: string): Promise<void> {
  await db
    .updateTable('webhook_messages')
    .set({ status: 'succeeded', claimed_by: null, last_error: null })
    .where('webhook_id', '=', webhookId)
    .where('event_id', '=', eventId)
    .execute();
}

/** A failed attempt of a message `owner` still holds: tried again at `nextAttemptAt`, or given up. */
export async function markUnsucceeded(
  db: Writer,
  key: { webhookId: string; eventId: string; owner: string },
  outcome: { status: 'pending' | 'failed'; nextAttemptAt: number; error: string },
): Promise<boolean> {
  const updated = await db
    .updateTable('webhook_messages')
    .set({ status: outcome.status, next_attempt_at: outcome.nextAttemptAt, claimed_by: null, last_error: outcome.error })
    .where('webhook_id', '=', key.webhookId)
    .where('event_id', '=', key.eventId)
    .where('status', '=', 'pending')
    .where('claimed_by', '=', key.owner)
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) > 0;
}

/** Disables an endpoint with the reason shown, and gives up its other pending messages. */
export async function disableWebhook(db: Writer, id: string, reason: string, now: number): Promise<void> {
  await db
    .updateTable('webhooks')
    .set({ status: 'disabled', disabled_reason: reason, disabled_at: now, updated_at: now })
    .where('id', '=', id)
    .where('status', '=', 'enabled')
    .execute();
  await db
    .updateTable('webhook_messages')
    .set({ status: 'failed', claimed_by: null, last_error: 'The endpoint was disabled' })
    .where('webhook_id', '=', id)
    .where('status', '=', 'pending')
    .execute();
}

export async function listDeliveries(db: Reader, webhookId: string, page: Page): Promise<WebhookDeliveriesTable[]> {
  let query = db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', webhookId);
  const after = page.after;
  if (after) query = query.where((eb) => afterKeyset(eb, 'at', 'id', after));
  return query
    .orderBy('at', 'desc')
    .orderBy('id', 'desc')
    .limit(rowLimit(page.limit + 1))
    .execute();
}

export async function findDelivery(db: Reader, webhookId: string, deliveryId: string) {
  return db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('id', '=', deliveryId)
    .where('webhook_id', '=', webhookId)
    .executeTakeFirst();
}

/** Changes an endpoint's columns (the caller checked it is the account's); the row as it is now. */
export async function updateWebhook(
  db: Writer,
  id: string,
  changes: Partial<Omit<WebhooksTable, 'id' | 'account_id' | 'livemode' | 'secret' | 'created_at'>> & { updated_at: number },
): Promise<WebhooksTable | undefined> {
  return db.updateTable('webhooks').set(changes).where('id', '=', id).returningAll().executeTakeFirst();
}
