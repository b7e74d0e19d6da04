import type { Kysely } from 'kysely';

/**
 * What retention (RETENTION_DAYS, db/repositories/retention.ts) needs so that deleting expired
 * events never walks a whole table:
 *
 * - `clicks_click_time`, `conversions_event_time`: the oldest events, across every store and
 *   mode. The (store_id, livemode, time) indexes of 0001 put time third: a bare `time < ?`
 *   cannot range over them (PostgreSQL then reads some index whole).
 * - `touchpoints_click`: the touchpoints naming a click. Both engines check the foreign key
 *   touchpoints.click_id → clicks.id for every click deleted by looking such touchpoints up;
 *   without it each check reads every touchpoint.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('clicks_click_time').on('clicks').column('click_time').execute();
  await db.schema.createIndex('conversions_event_time').on('conversions').column('event_time').execute();
  await db.schema.createIndex('touchpoints_click').on('touchpoints').column('click_id').execute();
}
