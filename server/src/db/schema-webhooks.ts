// The webhooks-out tables (part of `DB`, db/schema.ts).

/** An event to fan out to the endpoints that subscribe to it, one webhook outbox row each (repositories/webhooks.ts `fanOut`). */
export interface WebhookEventRow {
  event_id: string;
  account_id: string;
  /** The event's mode; null for configuration (`store.updated`), which endpoints of both modes get. */
  livemode: number | null;
  event_type: string;
  payload: string;
  created_at: number;
}

/** Webhooks out (migration 0013): an account's endpoint, in one mode. */
export interface WebhooksTable {
  id: string;
  account_id: string;
  livemode: number;
  url: string;
  events: string; // JSON array of event types
  description: string | null;
  secret: string; // sealed `whsec_…`
  status: 'enabled' | 'disabled';
  disabled_reason: string | null;
  disabled_at: number | null;
  created_at: number;
  updated_at: number;
}

/** The webhook outbox: one event for one endpoint; `event_id` is the `webhook-id` of every attempt. */
export interface WebhookMessagesTable {
  webhook_id: string;
  event_id: string;
  account_id: string;
  livemode: number;
  event_type: string;
  payload: string;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  next_attempt_at: number;
  claimed_by: string | null;
  last_error: string | null;
  created_at: number;
}

/** One attempt to deliver a message (the dispatcher's or a resend). */
export interface WebhookDeliveriesTable {
  id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  attempt: number;
  status: 'succeeded' | 'failed';
  response_code: number | null;
  error: string | null;
  duration_ms: number;
  at: number;
}

/**
 * An endpoint whose attempts keep timing out (migration 0023): how many in a row, at which URL,
 * and when an attempt at the full timeout is due again. Deleted by its next 2xx.
 */
export interface WebhookTimeoutsTable {
  webhook_id: string;
  url: string;
  timeouts_in_row: number;
  probe_at: number | null;
  updated_at: number;
}
