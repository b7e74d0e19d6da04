import type { FastifyReply } from 'fastify';
import { type RateLimitDecision, type RateLimiter, type RateLimitPolicy, rateLimited, rateLimitHeaders } from './rate-limit.js';

/**
 * Rate limits of the shop webhook routes (api.md §9), which have no key: the delivery's signature
 * with the store's secret authenticates it. Shopify sends every shop's webhooks from a few shared
 * addresses, so a per-address limit meant for anonymous traffic would refuse one busy shop's
 * orders for another's; a signed delivery is counted against its store instead. Unsigned and
 * badly signed ones are still limited per client, or a flood of them would make the signature
 * check (a store lookup and an HMAC of up to 1 MiB) a way to load the server for free:
 *
 * - before the check, a delivery takes a token from its client's `signature:` bucket; once that
 *   is empty, deliveries from the client are 429 before their body is even read;
 * - a delivery whose signature verifies gives that token back and takes one from its store's
 *   `shop:` bucket instead (429 when empty, with Retry-After: the shops retry).
 *
 * So the client's budget is spent only by what does not verify (wrong or missing signatures,
 * unknown stores, WooCommerce's unsigned pings, a signed delivery for an inactive store), and a
 * client's checks in flight at once are bounded by its burst.
 */

export interface ShopWebhookLimits {
  limiter: RateLimiter;
  /** Per client, deliveries that do not verify (IP_RATE_LIMIT_RPS, burst twice that). */
  clientPolicy: RateLimitPolicy;
  /** Per store, deliveries that do (SHOP_WEBHOOK_RATE_LIMIT_RPS / _BURST, default 50/s, burst 200). */
  storePolicy: RateLimitPolicy;
}

/** What the handler calls once a delivery's signature verified: counts it against its store (may throw the 429). */
export type DeliveryVerified = (storeId: string) => Promise<void>;

/**
 * Before the signature check: the client's provisional token (429 when its budget is spent), and
 * the function that settles it once the signature verified. The answer to a signed delivery
 * carries its store's RateLimit headers.
 */
export async function admitShopDelivery(
  limits: ShopWebhookLimits,
  client: string,
  reply: FastifyReply,
): Promise<DeliveryVerified> {
  const bucket = `signature:${client}`;
  const unverified = await limits.limiter.consume(bucket, limits.clientPolicy);
  if (!unverified.allowed) throw rateLimited(unverified);
  let settled = false;
  return async (storeId) => {
    if (settled) return;
    settled = true;
    // A limiter that cannot give tokens back (a test's stand-in) counts every delivery per client.
    await limits.limiter.refund?.(bucket, limits.clientPolicy, 1);
    const store: RateLimitDecision = await limits.limiter.consume(`shop:${storeId}`, limits.storePolicy);
    reply.headers(rateLimitHeaders(store));
    if (!store.allowed) throw rateLimited(store);
  };
}
