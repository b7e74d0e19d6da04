import type { Forwarder } from '../capi/forwarding.js';
import { crashPoint } from '../crash-point.js';
import type { Database } from '../db/database.js';
import { findDelivery, findStoreForWebhook, recordDelivery } from '../db/repositories/shop-webhooks.js';
import type { StoresTable } from '../db/schema.js';
import { ApiError } from '../http/errors.js';
import type { SecretBox } from '../secrets.js';
import { webhookSecretContext } from '../stores/stores.js';
import type { Tenant } from '../tenancy.js';
import { type ConversionInput, recordConversion } from '../tracking/conversions.js';
import { type RefundInput, trackRefund } from '../tracking/refunds.js';
import { parsePayload, signatureMatches } from './payload.js';
import { mapShopifyOrder, mapShopifyRefund, SHOPIFY_TOPICS } from './shopify.js';
import { mapWooOrder, WOOCOMMERCE_TOPICS } from './woocommerce.js';

/**
 * Shop webhooks in (api.md §9): a delivery is authenticated by its signature with the store's
 * secret, deduplicated by the shop's delivery id, mapped (shopify.ts, woocommerce.ts) to the
 * inputs the API takes, and recorded by the same domain functions, so attribution, dedup by
 * orderId / refundId and forwarding all apply. Everything is durable before the answer.
 */

export type ShopPlatform = 'shopify' | 'woocommerce';

export interface ShopWebhook {
  platform: ShopPlatform;
  storeId: string;
  raw: Buffer;
  contentType?: string;
  signature?: string;
  topic?: string;
  deliveryId?: string;
  /** Called once the signature verified, before anything is read or recorded: the caller's per-store rate limit (may throw its 429). */
  verified?: (storeId: string) => Promise<void>;
}

export interface WebhookRefundOutcome {
  refundId: string;
  conversionId?: string;
  amount?: number;
  duplicate?: boolean;
  /** Only when not recorded: `order_not_recorded` (no conversion of the order) or `nothing_left` (already refunded in full). */
  skipped?: 'order_not_recorded' | 'nothing_left';
}

export interface WebhookOutcome {
  received: true;
  /** This delivery id was answered before: the first answer, nothing done again. */
  duplicate: boolean;
  topic: string | null;
  /** Why nothing was recorded: `ping`, `unknown_topic`, `not_paid`, `no_money_refunded`. */
  ignored?: string;
  livemode?: boolean;
  conversion?: { conversionId: string; attributed: boolean; duplicate: boolean };
  refunds?: WebhookRefundOutcome[];
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

/** Receives one delivery: authenticate, deduplicate, map, record; returns the answer's data. */
export async function receiveShopWebhook(
  database: Database,
  secrets: SecretBox,
  hook: ShopWebhook,
  forwarding?: Forwarder,
  now = Date.now(),
): Promise<WebhookOutcome> {
  if (isWooPing(hook)) return { received: true, duplicate: false, topic: null, ignored: 'ping' };
  const store = await authenticateDelivery(database, secrets, hook);
  await hook.verified?.(store.id);
  const topic = hook.topic ?? null;
  const known: readonly string[] = hook.platform === 'shopify' ? SHOPIFY_TOPICS : WOOCOMMERCE_TOPICS;
  if (!topic || !known.includes(topic)) return { received: true, duplicate: false, topic, ignored: 'unknown_topic' };

  const key = hook.deliveryId ? { store_id: store.id, platform: hook.platform, delivery_id: hook.deliveryId } : undefined;
  if (key) {
    const seen = await findDelivery(database.read, key);
    if (seen) return { ...(JSON.parse(seen.result) as WebhookOutcome), duplicate: true };
  }
  let payload: unknown;
  try {
    payload = parsePayload(hook.raw.toString('utf8'));
  } catch {
    throw new ApiError('invalid_request', 'The request body is not valid JSON', { reason: 'malformed_json' });
  }
  const outcome = await handle(database, store, hook.platform, topic, payload, now, forwarding);
  crashPoint('shop-webhook'); // test hook (crash-point.ts): recorded durably, not acknowledged
  if (key) {
    await database.write((trx) => recordDelivery(trx, { ...key, topic, received_at: now, result: JSON.stringify(outcome) }));
  }
  return outcome;
}

async function handle(
  database: Database,
  store: StoresTable,
  platform: ShopPlatform,
  topic: string,
  payload: unknown,
  now: number,
  forwarding?: Forwarder,
): Promise<WebhookOutcome> {
  const base = { received: true as const, duplicate: false, topic };
  const tenantOf = (livemode: boolean): Tenant => ({ accountId: store.account_id, livemode });
  if (platform === 'shopify' && topic === 'orders/paid') {
    const { livemode, conversion } = mapShopifyOrder(payload);
    const recorded = await purchase(database, tenantOf(livemode), store, conversion, now, forwarding);
    return { ...base, livemode, conversion: recorded };
  }
  if (platform === 'shopify') {
    const mapped = mapShopifyRefund(payload);
    if (!mapped) return { ...base, ignored: 'no_money_refunded' };
    const refund = await refundOf(database, tenantOf(mapped.livemode), store, mapped.refund, now);
    return { ...base, livemode: mapped.livemode, refunds: [refund] };
  }
  const order = mapWooOrder(payload);
  if (!order.purchase && order.refunds.length === 0) return { ...base, ignored: 'not_paid' };
  const tenant = tenantOf(true);
  const conversion = order.purchase && (await purchase(database, tenant, store, order.purchase.conversion, now, forwarding));
  const refunds: WebhookRefundOutcome[] = [];
  for (const refund of order.refunds) refunds.push(await refundOf(database, tenant, store, refund, now));
  return { ...base, livemode: true, ...(conversion && { conversion }), ...(refunds.length > 0 && { refunds }) };
}

/** The domain's 400s about a mapped field are the payload's fault: 422, with the field named as the API calls it. */
function asUnprocessable(error: unknown, what: string): unknown {
  if (!(error instanceof ApiError) || error.status !== 400) return error;
  return new ApiError('unprocessable_payload', `The ${what} cannot be recorded: ${error.message}`, {
    ...error.details,
    code: error.code,
  });
}

async function purchase(
  database: Database,
  tenant: Tenant,
  store: StoresTable,
  conversion: Omit<ConversionInput, 'storeId'>,
  now: number,
  forwarding?: Forwarder,
) {
  try {
    const { result, delivered } = await recordConversion(database, tenant, { ...conversion, storeId: store.id }, now, forwarding);
    // Not waited for: the shop wants its answer within 5 s, and forwarding goes on from the outbox.
    delivered?.catch(() => undefined);
    return { conversionId: result.conversionId, attributed: result.attributed, duplicate: result.duplicate };
  } catch (error) {
    throw asUnprocessable(error, 'order');
  }
}

async function refundOf(
  database: Database,
  tenant: Tenant,
  store: StoresTable,
  refund: Omit<RefundInput, 'storeId'>,
  now: number,
): Promise<WebhookRefundOutcome> {
  try {
    const result = await trackRefund(database, tenant, { ...refund, storeId: store.id }, now);
    return { refundId: result.refundId, conversionId: result.conversionId, amount: result.amount, duplicate: result.duplicate };
  } catch (error) {
    // An order recorded before Waytrack was set up (or in the other mode): nothing to refund, and
    // redelivering would not change that, so the delivery is answered 200 with the reason.
    if (error instanceof ApiError && error.code === 'conversion_not_found') {
      return { refundId: refund.refundId, skipped: 'order_not_recorded' };
    }
    if (error instanceof ApiError && error.details?.field === 'amount' && error.details.remaining === 0) {
      return { refundId: refund.refundId, skipped: 'nothing_left' };
    }
    throw asUnprocessable(error, 'refund');
  }
}
