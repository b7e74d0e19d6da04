import type { Kysely } from 'kysely';

/**
 * Dated exchange rates and match quality (api.md §10; docs/operations.md "Exchange rates",
 * docs/api.md "Match quality").
 * - `fx_rates`: one rate per currency and day, loaded by `waytrack fx load`: `rate` units of
 *   `currency` for one unit of `base` (a decimal string, kept exactly as given). One base per
 *   installation (the loader refuses another).
 * - `conversions.fx_*`: for a conversion in another currency than its store's, what was
 *   recorded with it — the store currency it was converted to, the rate date used, the rate
 *   (store currency per unit of the conversion's, display only) and the value in the store's
 *   minor units (exact, half-even). Null when no rate was known; changed only by `fx restate`.
 * - `conversions.match_quality`: JSON of `{<destination>: {score, keys, missing, warnings}}`,
 *   computed when the conversion is recorded (raw customer data is never stored).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('fx_rates')
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('date', 'text', (c) => c.notNull())
    .addColumn('base', 'text', (c) => c.notNull())
    .addColumn('rate', 'text', (c) => c.notNull())
    .addColumn('loaded_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('fx_rates_pk', ['currency', 'date'])
    .execute();
  for (const [name, type] of [
    ['fx_currency', 'text'],
    ['fx_rate_date', 'text'],
    ['fx_rate', 'text'],
    ['fx_value_minor', 'bigint'],
    ['match_quality', 'text'],
  ] as const) {
    await db.schema.alterTable('conversions').addColumn(name, type).execute();
  }
}
