import type { Kysely } from 'kysely';

/**
 * Index-backed evidence lookups for the attribution signals: each signal finds its candidate
 * clicks (or earlier conversions, for identity) by an exact key and a time range, so the cost
 * of attributing a conversion does not grow with the number of stored clicks.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const column of ['fingerprint', 'derived_fingerprint', 'ip_address']) {
    await db.schema
      .createIndex(`clicks_${column}`)
      .on('clicks')
      .columns(['store_id', 'livemode', column, 'click_time'])
      .execute();
  }
  // `attributed` is in the key: many unattributed conversions sharing one email (a guest-checkout
  // placeholder, say) must not be walked to find the few attributed ones.
  for (const column of ['email_hash', 'phone_hash']) {
    await db.schema
      .createIndex(`conversions_${column}`)
      .on('conversions')
      .columns(['store_id', 'livemode', column, 'attributed', 'event_time'])
      .execute();
  }
}
