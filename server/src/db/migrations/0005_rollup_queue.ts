import type { Kysely } from 'kysely';
import { engineOf } from '../engine.js';

/**
 * The rollup queue: every click and conversion not yet folded into the analytics rollups has a
 * row here, inserted in the same transaction as the event. A fold deletes the rows it folded
 * in the transaction that adds them to the rollups, so a row is counted once however many
 * instances fold, and a row is never skipped however late its transaction commits (a rowid or
 * sequence watermark skips a row whose id was taken before, but committed after, the mark).
 * `version` moves when a queued conversion's attribution changes, or its store's rollups are
 * rebuilt: a fold computed from the old state then no longer matches and is not written.
 *
 * Replaces the rowid watermarks of 0004 (and its step-by-step rebuild state).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const { migrations } = engineOf(db);
  const table = db.schema
    .createTable('rollup_queue')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('store_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull());
  await migrations.clusteredOnKey(table).execute();
  await db.schema.createIndex('rollup_queue_store').on('rollup_queue').columns(['store_id', 'id']).execute();

  // An existing embedded database: what 0004's watermarks had not reached yet is queued.
  await migrations.queueUnfolded(db);
  await db.schema.dropTable('rollup_state').execute();
  for (const column of ['rebuild_clicks', 'rebuild_conversions', 'rebuild_until_clicks', 'rebuild_until_conversions']) {
    await db.schema.alterTable('rollup_stores').dropColumn(column).execute();
  }
}
