import type { Reader } from '../../src/db/database.js';

/**
 * Aggregates straight over the stored rows. Analytics read the rollups (rollups.ts) instead,
 * which are far faster on large stores; these stay as the reference the rollups are tested against.
 */

export interface TimeRange {
  from: number;
  to: number; // exclusive
}

/** Non-bot clicks of a store and mode with click time in range. */
export async function countClicks(db: Reader, storeId: string, livemode: number, range: TimeRange): Promise<number> {
  const row = await db
    .selectFrom('clicks')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('store_id', '=', storeId)
    .where('livemode', '=', livemode)
    .where('click_time', '>=', range.from)
    .where('click_time', '<', range.to)
    .where('is_bot', '=', 0)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export interface ConversionAggregate {
  currency: string;
  isPurchase: boolean;
  conversions: number;
  attributed: number;
  valueMinor: number;
  attributedValueMinor: number;
}

/** Conversion counts and value sums with event time in range, per (currency, is Purchase). */
export async function aggregateConversions(
  db: Reader,
  storeId: string,
  livemode: number,
  range: TimeRange,
): Promise<ConversionAggregate[]> {
  const rows = await db
    .selectFrom('conversions')
    .select((eb) => [
      'currency',
      eb.case().when('event_type', '=', 'Purchase').then(1).else(0).end().as('is_purchase'),
      eb.fn.countAll<number>().as('conversions'),
      eb.fn.sum<number>('attributed').as('attributed'),
      eb.fn.sum<number>('value_minor').as('value_minor'),
      eb.fn
        .sum<number>(eb.case().when('attributed', '=', 1).then(eb.ref('value_minor')).else(0).end())
        .as('attributed_value_minor'),
    ])
    .where('store_id', '=', storeId)
    .where('livemode', '=', livemode)
    .where('event_time', '>=', range.from)
    .where('event_time', '<', range.to)
    .groupBy(['currency', 'is_purchase'])
    .execute();
  return rows.map((r) => ({
    currency: r.currency,
    isPurchase: Number(r.is_purchase) === 1,
    conversions: Number(r.conversions),
    attributed: Number(r.attributed),
    valueMinor: Number(r.value_minor),
    attributedValueMinor: Number(r.attributed_value_minor),
  }));
}

export interface RefundAggregate {
  currency: string;
  refundsMinor: number;
  attributedRefundsMinor: number;
}

/** Refunds of Purchase conversions with refund time in range, per currency: all, and those of conversions attributed now. */
export async function aggregateRefunds(
  db: Reader,
  storeId: string,
  livemode: number,
  range: TimeRange,
): Promise<RefundAggregate[]> {
  const rows = await db
    .selectFrom('refunds as r')
    .innerJoin('conversions as c', 'c.id', 'r.conversion_id')
    .select((eb) => [
      'r.currency as currency',
      eb.fn.sum<number>('r.amount_minor').as('total'),
      eb.fn.sum<number>(eb.case().when('c.attributed', '=', 1).then(eb.ref('r.amount_minor')).else(0).end()).as('attributed'),
    ])
    .where('r.store_id', '=', storeId)
    .where('r.livemode', '=', livemode)
    .where('r.refund_time', '>=', range.from)
    .where('r.refund_time', '<', range.to)
    .where('c.event_type', '=', 'Purchase')
    .groupBy('r.currency')
    .execute();
  return rows.map((r) => ({
    currency: r.currency,
    refundsMinor: Number(r.total),
    attributedRefundsMinor: Number(r.attributed),
  }));
}
