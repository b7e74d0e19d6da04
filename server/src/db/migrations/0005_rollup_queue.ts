import { type Kysely, SqliteAdapter, sql } from 'kysely';

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
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  let table = db.schema
    .createTable('rollup_queue')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('store_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull());
  if (sqlite) table = table.modifyEnd(sql`without rowid`);
  await table.execute();
  await db.schema.createIndex('rollup_queue_store').on('rollup_queue').columns(['store_id', 'id']).execute();

  if (sqlite) {
    // An existing embedded database: queue what the watermarks had not reached yet, and the
    // whole of any store whose rebuild was under way (its rollups start again from nothing).
    const mark = (name: string) => sql`(select coalesce(max(value), 0) from rollup_state where name = ${name})`;
    await sql`insert into rollup_queue (id, store_id, kind, version)
      select id, store_id, 'click', 0 from clicks where rowid > ${mark('clicks')}`.execute(db);
    await sql`insert into rollup_queue (id, store_id, kind, version)
      select id, store_id, 'conversion', 0 from conversions where rowid > ${mark('conversions')}`.execute(db);
    const rebuilding = sql`(select store_id from rollup_stores where rebuild_clicks is not null)`;
    for (const rollup of ['rollup_days', 'rollup_hours', 'rollup_dimension_clicks', 'rollup_dimension_credits']) {
      await sql`delete from ${sql.table(rollup)} where store_id in ${rebuilding}`.execute(db);
    }
    for (const [events, kind] of [
      ['clicks', 'click'],
      ['conversions', 'conversion'],
    ] as const) {
      await sql`insert into rollup_queue (id, store_id, kind, version)
        select id, store_id, ${kind}, 0 from ${sql.table(events)} where store_id in ${rebuilding}
        on conflict (id) do nothing`.execute(db);
    }
  }
  await db.schema.dropTable('rollup_state').execute();
  for (const column of ['rebuild_clicks', 'rebuild_conversions', 'rebuild_until_clicks', 'rebuild_until_conversions']) {
    await db.schema.alterTable('rollup_stores').dropColumn(column).execute();
  }
}
