import { createHash } from 'node:crypto';
import { crashPoint } from '../crash-point.js';
import type { Database } from '../db/database.js';
import { findDelivery, findStoreForWebhook, recordDelivery } from '../db/repositories/shop-webhooks.js';
import type { StoresTable } from '../db/schema.js';
import type { Forwarder } from '../destinations/meta/forwarding.js';
import { ApiError } from '../http/errors.js';
import { readJson } from '../http/json-reader.js';
import type { SecretBox } from '../secrets.js';
import { webhookSecretContext } from '../stores/stores.js';
import { idAt, type PayloadWarning, signatureMatches, Warnings } from './payload.js';
import { type RecordContext, type RecordedConversion, recordMapped, type ShopLog, type WebhookRefundOutcome } from './record.js';
import { isPaidShopifyOrder, mapShopifyOrder, mapShopifyRefund, SHOPIFY_TOPICS } from './shopify.js';
import { mapWooOrder, WOOCOMMERCE_TOPICS } from './woocommerce.js';

/**
 * Shop webhooks in (api.md §9): a delivery is authenticated by its signature with the store's
 * secret (over the raw bytes, before anything reads them), read by the API's own JSON reader,
 * deduplicated by what identifies the event (never the shop's delivery-id header alone), mapped
 * (shopify.ts, woocommerce.ts) to the inputs the API takes, and recorded whole by the same
 * domain functions (record.ts). Everything is durable before the answer.
 */

export type { ShopLog, WebhookRefundOutcome };

export type ShopPlatform = 'shopify' | 'woocommerce';

export interface ShopWebhook {
  platform: ShopPlatform;
  storeId: string;
  raw: Buffer;
  contentType?: string;
  signature?: string;
  topic?: string;
  /** The shop's delivery-id header: not what a delivery is deduplicated by (`eventKey`), kept for the record. */
  deliveryId?: string;
  /** Called once the signature verified, before anything is read or recorded: the caller's per-store rate limit (may throw its 429). */
  verified?: (storeId: string) => Promise<void>;
}

export interface WebhookOutcome {
  received: true;
  /** This event (topic, resource, exact body) was answered before: the first answer, nothing done again. */
  duplicate: boolean;
  topic: string | null;
  /** Why nothing was recorded: `ping`, `unknown_topic`, `not_paid`, `no_money_refunded`. */
  ignored?: string;
  livemode?: boolean;
  conversion?: RecordedConversion;
  refunds?: WebhookRefundOutcome[];
  /** Optional data of the payload that could not be used and was left out (the rest was recorded). */
  warnings?: PayloadWarning[];
}

const SIGNATURE_HEADER: Record<ShopPlatform, string> = {
  shopify: 'X-Shopify-Hmac-Sha256',
  woocommerce: 'X-WC-Webhook-Signature',
};

/** WooCommerce's ping when a webhook is saved: form-encoded `webhook_id=N`, unsigned. */
function isWooPing(hook: ShopWebhook): boolean {
  return (
    hook.platform === 'woocommerce' &&
    /^application\/x-www-form-urlencoded/i.test(hook.contentType ?? '') &&
    /^webhook_id=\d{1,20}$/.test(hook.raw.toString('latin1').trim())
  );
}

function unauthorized(hook: ShopWebhook, reason: 'missing_signature' | 'invalid_signature'): ApiError {
  const header = SIGNATURE_HEADER[hook.platform];
  return new ApiError(
    'unauthorized',
    reason === 'missing_signature'
      ? `Missing ${header} header`
      : `${header} does not verify with this store's ${hook.platform} webhook secret (or the store has none)`,
    { field: header, reason },
  );
}

/** The store when the delivery's signature verifies with its secret; 401 otherwise (unknown store included: never say which). */
async function authenticateDelivery(database: Database, secrets: SecretBox, hook: ShopWebhook): Promise<StoresTable> {
  if (!hook.signature) throw unauthorized(hook, 'missing_signature');
  const store = await findStoreForWebhook(database.read, hook.storeId);
  const sealed = hook.platform === 'shopify' ? store?.shopify_webhook_secret : store?.woocommerce_webhook_secret;
  const secret = store && sealed ? secrets.open(sealed, webhookSecretContext(store.id, hook.platform)) : undefined;
  if (!store || !secret || !signatureMatches(hook.raw, hook.signature, secret)) throw unauthorized(hook, 'invalid_signature');
  if (store.status !== 'active') {
    throw new ApiError('store_not_found', `No store ${hook.storeId}`, { field: 'storeId' });
  }
  return store;
}

/**
 * What identifies an event: its topic, its resource's id and a hash of its exact bytes. Not the
 * shop's delivery id: WooCommerce makes `X-WC-Webhook-Delivery-ID` from the webhook id and the
 * current second, so two updates of one order within a second share it (the second is a later
 * status, never a duplicate); and a Shopify webhook id is trusted for no more than its topic.
 */
function eventKey(topic: string, payload: unknown, raw: Buffer): string {
  const resource = idAt(payload, 'id') ?? '-';
  return `${topic}:${resource}:${createHash('sha256').update(raw).digest('base64url')}`;
}

/** Receives one delivery: authenticate, read, deduplicate, map, record; returns the answer's data. */
export async function receiveShopWebhook(
  database: Database,
  secrets: SecretBox,
  hook: ShopWebhook,
  forwarding?: Forwarder,
  now = Date.now(),
  log?: ShopLog,
): Promise<WebhookOutcome> {
  if (isWooPing(hook)) return { received: true, duplicate: false, topic: null, ignored: 'ping' };
  const store = await authenticateDelivery(database, secrets, hook);
  await hook.verified?.(store.id);
  const topic = hook.topic ?? null;
  const known: readonly string[] = hook.platform === 'shopify' ? SHOPIFY_TOPICS : WOOCOMMERCE_TOPICS;
  if (!topic || !known.includes(topic)) return { received: true, duplicate: false, topic, ignored: 'unknown_topic' };

  // The API's reader (json-reader.ts): UTF-8 only, a BOM skipped, ids above 2^53 exact.
  const payload = readJson(hook.raw);
  const key = { store_id: store.id, platform: hook.platform, delivery_id: eventKey(topic, payload, hook.raw) };
  const seen = await findDelivery(database.read, key);
  if (seen) return { ...(JSON.parse(seen.result) as WebhookOutcome), duplicate: true };
  const ctx: RecordContext = { database, store, now, ...(forwarding && { forwarding }), ...(log && { log }) };
  const outcome = await handle(ctx, hook.platform, topic, payload);
  crashPoint('shop-webhook'); // test hook (crash-point.ts): recorded durably, not acknowledged
  await database.write((trx) => recordDelivery(trx, { ...key, topic, received_at: now, result: JSON.stringify(outcome) }));
  return outcome;
}

async function handle(ctx: RecordContext, platform: ShopPlatform, topic: string, payload: unknown): Promise<WebhookOutcome> {
  const base = { received: true as const, duplicate: false, topic };
  const warnings = new Warnings();
  const answer = (livemode: boolean, recorded: Awaited<ReturnType<typeof recordMapped>>): WebhookOutcome => ({
    ...base,
    livemode,
    ...recorded,
    ...(warnings.list.length > 0 && { warnings: warnings.list }),
  });
  if (platform === 'shopify' && topic !== 'refunds/create') {
    // orders/create is sent for every order, paid or not; orders/paid once it is paid: one Purchase either way (its orderId).
    if (topic === 'orders/create' && !isPaidShopifyOrder(payload)) return { ...base, ignored: 'not_paid' };
    const purchase = mapShopifyOrder(payload, warnings, ctx.now);
    return answer(purchase.livemode, await recordMapped(ctx, purchase, []));
  }
  if (platform === 'shopify') {
    const refund = mapShopifyRefund(payload, warnings, ctx.now);
    if (!refund) return { ...base, ignored: 'no_money_refunded' };
    return answer(refund.livemode, await recordMapped(ctx, undefined, [refund]));
  }
  const order = mapWooOrder(payload, warnings, ctx.now);
  if (!order.purchase && order.refunds.length === 0) return { ...base, ignored: 'not_paid' };
  return answer(true, await recordMapped(ctx, order.purchase, order.refunds));
}
