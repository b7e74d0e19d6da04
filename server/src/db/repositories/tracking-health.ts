import type { Reader } from '../database.js';

/**
 * Conversions of a store and mode with a destination job pending since before `cutoff`, per
 * destination: a range seek on `destination_jobs_store_pending` (store, destination, status,
 * created_at) for each destination that has any pending job.
 */
export async function pendingSince(
  db: Reader,
  storeId: string,
  livemode: number,
  cutoff: number,
): Promise<Array<{ destination: string; conversions: number; oldest: number }>> {
  const rows = await db
    .selectFrom('destination_jobs')
    .select((eb) => [
      'destination',
      eb.fn.count<number>('conversion_id').distinct().as('conversions'),
      eb.fn.min<number>('created_at').as('oldest'),
    ])
    .where('store_id', '=', storeId)
    .where('status', '=', 'pending')
    .where('created_at', '<', cutoff)
    .where('livemode', '=', livemode)
    .groupBy('destination')
    .orderBy('destination')
    .execute();
  return rows.map((r) => ({ destination: r.destination, conversions: Number(r.conversions), oldest: Number(r.oldest) }));
}
