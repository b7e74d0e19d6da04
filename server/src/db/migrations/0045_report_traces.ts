import { type Kysely, sql } from 'kysely';
import { engineOf } from '../engine.js';

/**
 * The reconciliation's trace ids of past days, packed (analytics/trace-compaction.ts):
 * `rollup_report_traces` holds, per store, mode, local day and destination, the trace ids and
 * their counts (`[ids, counts]`, two JSON arrays). The report rollups keep one row per trace id (`trace|<id>` items of
 * `rollup_reports`) as the fold and each recording write them; a year of a store sending each
 * conversion in a request of its own is ~245,000 such rows, and gathering them took a 365-day
 * report ~0.5 s (bench/README.md). Days at least two days old are moved into one packed row each
 * (the rows' counts added to it, the rows deleted, in one transaction); a later change of such a
 * day writes a row again, and the report adds the rows to the packed counts.
 *
 * `rollup_reports_old_traces` (partial: trace rows only, by day) finds the rows left to pack
 * without walking the counts. Created only when absent; down packs nothing back: it returns the
 * packed counts to rows first.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const { clusteredOnKey: onKey } = engineOf(db).migrations;
  await onKey(
    db.schema
      .createTable('rollup_report_traces')
      .ifNotExists()
      .addColumn('store_id', 'text', (c) => c.notNull())
      .addColumn('livemode', 'integer', (c) => c.notNull())
      .addColumn('local_date', 'text', (c) => c.notNull())
      .addColumn('destination', 'text', (c) => c.notNull())
      .addColumn('traces', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('rollup_report_traces_pk', ['store_id', 'livemode', 'local_date', 'destination']),
  ).execute();
  await sql`create index if not exists rollup_reports_old_traces on rollup_reports (local_date)
    where substr(item, 1, 6) = 'trace|'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists rollup_reports_old_traces`.execute(db);
  // The older version reads trace rows only: the packed counts go back to rows, then the table.
  const packed = await sql<{ store_id: string; livemode: number; local_date: string; destination: string; traces: string }>`
    select store_id, livemode, local_date, destination, traces from rollup_report_traces`.execute(db);
  for (const row of packed.rows) {
    const [ids, counts] = JSON.parse(row.traces) as [string[], number[]];
    for (const [i, id] of ids.entries()) {
      const count = counts[i] as number;
      await sql`insert into rollup_reports (store_id, livemode, report, local_date, destination, item, count)
        values (${row.store_id}, ${row.livemode}, 'reconciliation', ${row.local_date}, ${row.destination}, ${`trace|${id}`}, ${count})
        on conflict (store_id, livemode, report, local_date, destination, item)
        do update set count = rollup_reports.count + excluded.count`.execute(db);
    }
  }
  await db.schema.dropTable('rollup_report_traces').ifExists().execute();
}
