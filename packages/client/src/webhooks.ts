import { Webhook, WebhookVerificationError } from 'standardwebhooks';

export { WebhookVerificationError };

/** An event Waytrack POSTs to a webhook endpoint (`conversion.attributed`, `refund.recorded`, …). */
export interface WebhookEvent<T = Record<string, unknown>> {
  type: string;
  /** When the event happened (ISO 8601). */
  timestamp: string;
  data: T;
}

/** Request headers as Node (`req.headers`), the Fetch API (`Headers`) or a plain object give them. */
export type WebhookHeaders = { get(name: string): string | null } | Record<string, string | string[] | undefined>;

const NAMES = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;

function headerValues(headers: WebhookHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof (headers as { get?: unknown }).get === 'function') {
    for (const name of NAMES) out[name] = (headers as { get(name: string): string | null }).get(name) ?? '';
    return out;
  }
  const lower = new Map(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), Array.isArray(v) ? v.join(' ') : v]));
  for (const name of NAMES) out[name] = lower.get(name) ?? '';
  return out;
}

/**
 * Checks that a webhook request came from Waytrack (Standard Webhooks: `webhook-id`,
 * `webhook-timestamp` within 5 minutes, `webhook-signature` = v1 HMAC-SHA256 of
 * "id.timestamp.body" with the endpoint's `whsec_…` secret) and returns the parsed event.
 * Pass the body exactly as received (the raw bytes or text, not re-serialized JSON). Throws
 * `WebhookVerificationError` otherwise. Deduplicate by `webhook-id`: a message may come again.
 */
export function verifyWebhook<T = Record<string, unknown>>(
  payload: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string,
): WebhookEvent<T> {
  const body = typeof payload === 'string' ? payload : new TextDecoder().decode(payload);
  return new Webhook(secret).verify(body, headerValues(headers)) as WebhookEvent<T>;
}
