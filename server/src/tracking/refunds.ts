import { withReportRollup } from '../analytics/report-rollups.js';
import type { Database, Writer } from '../db/database.js';
import {
  conversionsOfOrder,
  findRefund,
  insertRefund,
  lockRefundTarget,
  purchaseOfOrder,
  type RefundTarget,
  refundTarget,
  setRefunded,
} from '../db/repositories/refunds.js';
import { enqueueForRollups } from '../db/repositories/rollup-queue.js';
import type { RefundsTable } from '../db/schema.js';
import { forwardRefund, refundForwarding } from '../destinations/refunds.js';
import { ApiError, fieldError } from '../http/errors.js';
import { exactNumber } from '../http/json-reader.js';
import { newId } from '../ids.js';
import { fromMinorUnits, normalizeCurrency, toMinorUnits } from '../money.js';
import { requireActiveStore } from '../stores/lookup.js';
import { modeFlag, type Tenant } from '../tenancy.js';
import { refundRecordedEvent, webhookEvents } from '../webhooks/events.js';
import { parseEventTime } from './input.js';

export interface RefundInput {
  storeId: string;
  orderId: string;
  refundId: string;
  amount?: number;
  currency: string;
  timestamp?: string;
  reason?: string;
}

export interface RefundResult {
  refundId: string;
  conversionId: string;
  amount: number;
  refundedTotal: number;
  remaining: number;
  duplicate: boolean;
  /** On a duplicate only: the fields of this request that differ from the original's (which is kept). */
  differences?: string[];
}

function resultOf(row: RefundsTable, valueMinor: number, duplicate: boolean): RefundResult {
  const money = (minor: number) => fromMinorUnits(minor, row.currency);
  return {
    refundId: row.refund_id,
    conversionId: row.conversion_id,
    amount: money(row.amount_minor),
    refundedTotal: money(row.refunded_after_minor),
    remaining: money(valueMinor - row.refunded_after_minor),
    duplicate,
  };
}

/** The fields of a resent refund that differ from the recorded one (names only). */
function differencesFrom(original: RefundsTable, input: RefundInput, currency: string | null, refundTime?: number) {
  const differences: string[] = [];
  if (input.orderId !== original.order_id) differences.push('orderId');
  if (input.amount !== undefined) {
    const resent = currency === original.currency ? toMinorUnits(input.amount, original.currency) : undefined;
    if (resent !== original.amount_minor) differences.push('amount');
  }
  if (currency !== original.currency) differences.push('currency');
  if (refundTime !== undefined && refundTime !== original.refund_time) differences.push('timestamp');
  if (input.reason !== undefined && input.reason !== original.reason) differences.push('reason');
  return differences;
}

type Outcome =
  | { kind: 'recorded'; row: RefundsTable; valueMinor: number }
  | { kind: 'duplicate'; row: RefundsTable }
  | { kind: 'not_found' }
  | { kind: 'ambiguous'; eventTypes: string[] }
  | { kind: 'currency_mismatch'; expected: string }
  | { kind: 'over_refund'; remaining: number; currency: string };

/** Why a refund was not recorded, as the shop webhooks answer it (docs/api.md "Shop webhooks in"). */
export type RefundRefusal =
  | 'order_not_recorded'
  | 'ambiguous_order'
  | 'currency_mismatch'
  | 'nothing_left'
  | 'over_remaining'
  | 'below_minor_unit';

/**
 * A refund recorded (or found recorded: its `currency` is the one it was recorded in), or why
 * it cannot apply to its order as things stand: with the error POST /v1/track/refund answers
 * for it, and `remaining` (what is left, in the conversion's currency) or `expected` (the
 * conversion's currency) where they tell more.
 */
export type RefundApplied =
  | { kind: 'recorded' | 'duplicate'; result: RefundResult; currency: string }
  | { kind: 'refused'; reason: RefundRefusal; error: ApiError; remaining?: number; expected?: string };

/**
 * The refund's own fields, checked before anything is read or written: its currency and time
 * (a caller recording several things at once checks them all first: shops/record.ts).
 */
export function checkRefundInput(input: Pick<RefundInput, 'currency' | 'timestamp'>, now: number) {
  const currency = normalizeCurrency(input.currency);
  if (!currency) {
    throw fieldError('invalid_currency', 'currency', 'invalid_format', `"${input.currency}" is not an ISO 4217 currency code`);
  }
  return { currency, refundTime: parseEventTime('timestamp', input.timestamp, now) };
}

/**
 * Records a refund once per (store, mode, refundId) against the conversion of its order: the
 * order's Purchase, else its only conversion. Exact (integer minor units) and safe under
 * concurrency: the refund key is the primary key of `refunds`, and the conversion row is locked
 * (PostgreSQL) or the one writer serializes (SQLite) between reading what is left and adding
 * this refund to it, so two refunds can never together exceed the conversion's value.
 */
export async function trackRefund(
  database: Database,
  tenant: Tenant,
  input: RefundInput,
  now = Date.now(),
): Promise<RefundResult> {
  const applied = await applyRefund(database, tenant, input, now);
  if (applied.kind === 'refused') throw applied.error;
  return applied.result;
}

/** `trackRefund`, answering a refund that cannot apply (unknown order, over what is left, …) instead of throwing it. */
export async function applyRefund(
  database: Database,
  tenant: Tenant,
  input: RefundInput,
  now = Date.now(),
): Promise<RefundApplied> {
  const { currency, refundTime } = checkRefundInput(input, now);
  // The literal as written when a double could not hold it (json-reader.ts).
  const amount = input.amount === undefined ? undefined : (exactNumber(input, 'amount') ?? input.amount);
  const store = await requireActiveStore(database.read, tenant, input.storeId);
  const livemode = modeFlag(tenant);
  const key = { storeId: store.id, livemode, refundId: input.refundId };

  const record = async (trx: Writer): Promise<Outcome> => {
    const existing = await findRefund(trx, key);
    if (existing) return { kind: 'duplicate', row: existing };
    const order = { storeId: store.id, livemode, orderId: input.orderId };
    let found = await purchaseOfOrder(trx, order);
    if (!found) {
      const all = await conversionsOfOrder(trx, order);
      if (all.length === 0) return { kind: 'not_found' };
      if (all.length > 1) return { kind: 'ambiguous', eventTypes: all.map((c) => c.eventType) };
      found = all[0];
    }
    const target = found && (await lockRefundTarget(trx, found.id, found.eventTime));
    if (!target) return { kind: 'not_found' };
    // After the lock: a concurrent request with this refundId may have committed meanwhile.
    const again = await findRefund(trx, key);
    if (again) return { kind: 'duplicate', row: again };
    return apply(trx, target);
  };

  const apply = async (trx: Writer, target: RefundTarget): Promise<Outcome> => {
    if (currency !== target.currency) return { kind: 'currency_mismatch', expected: target.currency };
    const left = target.value_minor - target.refunded_minor;
    const amountMinor = amount === undefined ? left : toMinorUnits(amount, currency);
    if (amountMinor <= 0 || amountMinor > left) return { kind: 'over_refund', remaining: left, currency };
    const row: RefundsTable = {
      id: newId('refund', now),
      store_id: store.id,
      livemode,
      refund_id: input.refundId,
      account_id: tenant.accountId,
      conversion_id: target.id,
      conversion_time: target.event_time,
      order_id: input.orderId,
      amount_minor: amountMinor,
      currency,
      refunded_after_minor: target.refunded_minor + amountMinor,
      refund_time: refundTime,
      created_at: now,
      reason: input.reason ?? null,
    };
    if (!(await insertRefund(trx, row))) {
      // The same refundId for another order committed first (the key decides).
      const winner = await findRefund(trx, key);
      if (!winner) throw new Error('refund dedup conflict without a stored row');
      return { kind: 'duplicate', row: winner };
    }
    // Its first refund makes the conversion a refunded one in the reconciliation (report-rollups.ts).
    await withReportRollup(trx, [target.id], () => setRefunded(trx, target.id, target.event_time, row.refunded_after_minor));
    // Google Ads adjustments and opt-in refund events, durable with the refund (destinations/refunds.ts).
    await forwardRefund(trx, store, row, now);
    // Counted in the analytics rollups by the next fold (analytics/rollups.ts).
    await enqueueForRollups(trx, 'refund', [row]);
    // refund.recorded (api.md §9): its webhook messages commit with the refund.
    await webhookEvents.emit(trx, refundRecordedEvent(row, target.value_minor));
    return { kind: 'recorded', row, valueMinor: target.value_minor };
  };

  const outcome = await database.write(record);
  const refused = (reason: RefundRefusal, error: ApiError, more: { remaining?: number; expected?: string } = {}) =>
    ({ kind: 'refused', reason, error, ...more }) as const;
  switch (outcome.kind) {
    case 'recorded':
      return { kind: 'recorded', result: resultOf(outcome.row, outcome.valueMinor, false), currency: outcome.row.currency };
    case 'duplicate': {
      const original = outcome.row;
      const target = await refundTarget(database.read, original.conversion_id, original.conversion_time);
      const result = resultOf(original, target?.value_minor ?? original.refunded_after_minor, true);
      const differences = differencesFrom(original, input, currency, input.timestamp === undefined ? undefined : refundTime);
      const withDifferences = { ...result, ...(differences.length > 0 && { differences }) };
      return { kind: 'duplicate', result: withDifferences, currency: original.currency };
    }
    case 'not_found':
      return refused(
        'order_not_recorded',
        new ApiError(
          'conversion_not_found',
          `No conversion with orderId ${JSON.stringify(input.orderId)} in this store in ${tenant.livemode ? 'live' : 'test'} mode`,
          { field: 'orderId', reason: 'unknown_value' },
        ),
      );
    case 'ambiguous':
      return refused(
        'ambiguous_order',
        fieldError(
          'invalid_request',
          'orderId',
          'ambiguous_order',
          `orderId ${JSON.stringify(input.orderId)} has no Purchase but several conversions (${outcome.eventTypes.join(', ')}): refund one order with one conversion, or record its Purchase`,
        ),
      );
    case 'currency_mismatch':
      return refused(
        'currency_mismatch',
        fieldError(
          'invalid_request',
          'currency',
          'currency_mismatch',
          `currency must be the conversion's currency, ${outcome.expected}`,
          { expected: outcome.expected },
        ),
        { expected: outcome.expected },
      );
    case 'over_refund': {
      const remaining = fromMinorUnits(outcome.remaining, outcome.currency);
      const tooSmall = amount !== undefined && toMinorUnits(amount, outcome.currency) === 0;
      const reason = outcome.remaining === 0 ? 'nothing_left' : tooSmall ? 'below_minor_unit' : 'over_remaining';
      const message =
        reason === 'nothing_left'
          ? 'Nothing is left to refund on this conversion'
          : reason === 'below_minor_unit'
            ? `amount is less than the currency's smallest unit`
            : `amount exceeds what is left unrefunded (${remaining} ${outcome.currency})`;
      return refused(reason, fieldError('invalid_request', 'amount', 'out_of_range', message, { remaining }), { remaining });
    }
  }
}

/**
 * A refund recorded as POST /v1/track/refund answers it (the batch's refund events too): the
 * result and where the refund stands on each ad platform (`forwarding`, api.md §9).
 */
export async function trackRefundWithForwarding(database: Database, tenant: Tenant, input: RefundInput, now = Date.now()) {
  const result = await trackRefund(database, tenant, input, now);
  const forwarding = await refundForwarding(database.read, {
    storeId: input.storeId,
    livemode: modeFlag(tenant),
    refundId: result.refundId,
  });
  return { ...result, forwarding };
}
