import type { Database } from '../db/database.js';
import { findConversion } from '../db/repositories/conversions.js';
import { findShopOrder, recordShopOrder } from '../db/repositories/shop-webhooks.js';
import type { StoresTable } from '../db/schema.js';
import type { Forwarder } from '../destinations/meta/forwarding.js';
import { ApiError } from '../http/errors.js';
import { fromMinorUnits, toMinorUnits } from '../money.js';
import type { Tenant } from '../tenancy.js';
import { type ConversionInput, recordConversion } from '../tracking/conversions.js';
import { applyRefund, checkRefundInput, type RefundInput, type RefundRefusal } from '../tracking/refunds.js';
import { confirmPixelMoney, fillEvidence, reattributeIfStronger } from './order-merge.js';

/**
 * Recording what a shop delivery maps to (shopify.ts, woocommerce.ts) through the API's own
 * domain functions, so that attribution, dedup by orderId / refundId and forwarding all apply.
 * A delivery is recorded whole: everything that can refuse it (422) is decided before the first
 * write; after that, a refund that cannot apply to its order as things stand (unknown order,
 * more than is left, …) is skipped with its reason in the answer and a warn line in the log —
 * a redelivery would meet the same, and a shop disables a webhook that keeps failing.
 */

export interface MappedConversion {
  livemode: boolean;
  conversion: Omit<ConversionInput, 'storeId'>;
  /** What the buyer paid in their own currency, when it is not the order's (Shopify's `total_price_set.presentment_money`). */
  presentment?: { amount: number; currency: string };
}

/** Shopify's own prices of a refund's money in the shop's currency and the buyer's (integer minor units). */
export interface ShopMoney {
  currency: string;
  shopMinor: bigint;
  presentmentMinor: bigint;
}

export interface MappedRefund {
  livemode: boolean;
  refund: Omit<RefundInput, 'storeId'>;
  /** When the refund's currency is the buyer's: what Shopify prices it at in the shop's. */
  shopMoney?: ShopMoney;
}

export interface RecordedConversion {
  conversionId: string;
  attributed: boolean;
  duplicate: boolean;
  /** On a duplicate that added something (the checkout pixel's conversion confirmed, evidence filled in): what (order-merge.ts). */
  filled?: string[];
  reattributed?: boolean;
  presentment?: { amount: number; currency: string };
}

export interface WebhookRefundOutcome {
  refundId: string;
  conversionId?: string;
  /** The amount recorded, in `currency`: the conversion's. */
  amount?: number;
  currency?: string;
  /** The refund as the shop gave it, when it was in the buyer's currency and converted at Shopify's own amounts. */
  presentment?: { amount: number; currency: string };
  duplicate?: boolean;
  /** Only when not recorded: why (docs/api.md "Shop webhooks in"). */
  skipped?: RefundRefusal;
  /** With `over_remaining`: what is left to refund, in the conversion's currency. */
  remaining?: number;
}

/** Where skipped refunds are reported (the request's logger): identifiers only, never customer data. */
export interface ShopLog {
  warn(fields: Record<string, unknown>, message: string): void;
}

export interface RecordContext {
  database: Database;
  store: StoresTable;
  now: number;
  forwarding?: Forwarder;
  log?: ShopLog;
}

/** The domain's 400s about a mapped field are the payload's fault: 422, with the field named as the API calls it. */
function asUnprocessable(error: unknown, what: string): unknown {
  if (!(error instanceof ApiError) || error.status !== 400) return error;
  return new ApiError('unprocessable_payload', `The ${what} cannot be recorded: ${error.message}`, {
    ...error.details,
    code: error.code,
  });
}

const tenantOf = (store: StoresTable, livemode: boolean): Tenant => ({ accountId: store.account_id, livemode });

/** Records a delivery's Purchase (if any), then its refunds in order. */
export async function recordMapped(
  ctx: RecordContext,
  purchase: MappedConversion | undefined,
  refunds: MappedRefund[],
): Promise<{ conversion?: RecordedConversion; refunds?: WebhookRefundOutcome[] }> {
  // Decided before anything is written: what would refuse a refund's own fields.
  for (const { refund } of refunds) {
    try {
      checkRefundInput(refund, ctx.now);
    } catch (error) {
      throw asUnprocessable(error, 'refund');
    }
  }
  const conversion = purchase && (await recordPurchase(ctx, purchase));
  const outcomes: WebhookRefundOutcome[] = [];
  for (const refund of refunds) outcomes.push(await recordRefund(ctx, refund));
  return { ...(conversion && { conversion }), ...(outcomes.length > 0 && { refunds: outcomes }) };
}

async function recordPurchase(ctx: RecordContext, mapped: MappedConversion): Promise<RecordedConversion> {
  const { database, store, now } = ctx;
  const input = { ...mapped.conversion, storeId: store.id };
  let recorded: Awaited<ReturnType<typeof recordConversion>>;
  try {
    recorded = await recordConversion(database, tenantOf(store, mapped.livemode), input, now, ctx.forwarding);
  } catch (error) {
    throw asUnprocessable(error, 'order');
  }
  const { result, delivered } = recorded;
  // Not waited for: the shop wants its answer within 5 s, and forwarding goes on from the outbox.
  delivered?.catch(() => undefined);
  const merged = result.duplicate ? await mergeOrder(ctx, mapped.livemode, result.conversionId, input) : undefined;
  const { presentment } = mapped;
  if (presentment) {
    await database.write((trx) =>
      recordShopOrder(trx, {
        store_id: store.id,
        livemode: mapped.livemode ? 1 : 0,
        order_id: input.orderId,
        currency: input.currency,
        value_minor: toMinorUnits(input.eventValue, input.currency),
        presentment_currency: presentment.currency,
        presentment_value_minor: toMinorUnits(presentment.amount, presentment.currency),
        recorded_at: now,
      }),
    );
  }
  return {
    conversionId: result.conversionId,
    attributed: merged?.attributed ?? result.attributed,
    duplicate: result.duplicate,
    ...(merged && merged.filled.length > 0 && { filled: merged.filled, reattributed: merged.reattributed }),
    ...(presentment && { presentment }),
  };
}

/**
 * The order was recorded before — by the Shopify checkout pixel, the shop's backend or an earlier
 * delivery: the shop's money replaces the pixel's, and the evidence the conversion lacks is
 * filled in (re-attributing it when stronger). Never a second conversion (order-merge.ts).
 */
async function mergeOrder(ctx: RecordContext, livemode: boolean, conversionId: string, input: ConversionInput) {
  const tenant = tenantOf(ctx.store, livemode);
  const confirmed = await confirmPixelMoney(ctx.database, ctx.store, tenant, conversionId, input);
  const evidence = await fillEvidence(ctx.database, tenant, conversionId, input);
  const reattributed = evidence.filled.length > 0 && (await reattributeIfStronger(ctx.database, ctx.store, tenant, evidence.row));
  const row = reattributed
    ? await findConversion(ctx.database.read, ctx.store.account_id, livemode ? 1 : 0, conversionId)
    : evidence.row;
  return {
    filled: [...confirmed.filled, ...evidence.filled],
    reattributed,
    attributed: (row ?? evidence.row).attributed === 1,
  };
}

async function recordRefund(ctx: RecordContext, mapped: MappedRefund): Promise<WebhookRefundOutcome> {
  const { database, store, now } = ctx;
  const tenant = tenantOf(store, mapped.livemode);
  const input: RefundInput = { ...mapped.refund, storeId: store.id };
  let applied = await applyRefund(database, tenant, input, now);
  let presentment: WebhookRefundOutcome['presentment'];
  if (applied.kind === 'refused' && applied.reason === 'currency_mismatch' && applied.expected && input.amount !== undefined) {
    // Refunded in the buyer's currency, recorded in the shop's: converted at Shopify's own amounts, never a guessed rate.
    const amount = await inOrderCurrency(ctx, mapped, input.amount, applied.expected);
    if (amount !== undefined) {
      presentment = { amount: input.amount, currency: input.currency };
      applied = await applyRefund(database, tenant, { ...input, amount, currency: applied.expected }, now);
    }
  }
  if (applied.kind !== 'refused') {
    const { result } = applied;
    return {
      refundId: result.refundId,
      conversionId: result.conversionId,
      amount: result.amount,
      currency: applied.currency,
      ...(presentment && { presentment }),
      duplicate: result.duplicate,
    };
  }
  ctx.log?.warn(
    { storeId: store.id, orderId: input.orderId, refundId: input.refundId, reason: applied.reason },
    'shop webhook refund skipped',
  );
  return {
    refundId: input.refundId,
    skipped: applied.reason,
    ...(applied.reason === 'over_remaining' && applied.remaining !== undefined && { remaining: applied.remaining }),
  };
}

/**
 * A refund in the buyer's currency as an amount in the order's (`currency`): by the refund's own
 * prices in both (exact when they add up to the money returned, their ratio otherwise), else by
 * the order's two totals recorded with its Purchase (migration 0022). Undefined when neither
 * has the pair of currencies.
 */
async function inOrderCurrency(ctx: RecordContext, mapped: MappedRefund, amount: number, currency: string) {
  const given = BigInt(toMinorUnits(amount, mapped.refund.currency));
  let minor: bigint | undefined;
  const money = mapped.shopMoney;
  if (money && money.currency === currency) {
    minor = money.presentmentMinor === given ? money.shopMinor : scaled(given, money.shopMinor, money.presentmentMinor);
  } else {
    const order = await findShopOrder(ctx.database.read, {
      store_id: ctx.store.id,
      livemode: mapped.livemode ? 1 : 0,
      order_id: mapped.refund.orderId,
    });
    if (order && order.currency === currency && order.presentment_currency === mapped.refund.currency) {
      minor = scaled(given, BigInt(order.value_minor), BigInt(order.presentment_value_minor));
    }
  }
  return minor === undefined ? undefined : fromMinorUnits(Number(minor), currency);
}

/** `amount × numerator / denominator`, rounded half away from zero; undefined for a zero denominator. */
function scaled(amount: bigint, numerator: bigint, denominator: bigint): bigint | undefined {
  if (denominator <= 0n) return undefined;
  return (amount * numerator * 2n + denominator) / (denominator * 2n);
}
