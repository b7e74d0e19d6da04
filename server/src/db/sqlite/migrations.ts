import { type CreateTableBuilder, type Kysely, sql } from 'kysely';
import type { MigrationHooks } from '../engine.js';

/** SQLite's part of the migrations that differ between engines (db/migrations). */
export class SqliteMigrations implements MigrationHooks {
  async migrationTableSchema(): Promise<string | undefined> {
    return undefined;
  }

  /** Reads of these tables are range scans of their key. */
  clusteredOnKey<T extends string, C extends string>(table: CreateTableBuilder<T, C>): CreateTableBuilder<T, C> {
    return table.modifyEnd(sql`without rowid`);
  }

  async queueUnfolded(db: Kysely<unknown>): Promise<void> {
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

  /** Monthly partitions are PostgreSQL's. */
  async partitionEvents(): Promise<void> {}

  /** SQLite runs the lookups one by one (db/sqlite/evidence.ts): nothing to plan once. */
  async evidenceFunction(): Promise<void> {}

  /** As `evidenceFunction`: nothing to plan once. */
  async attributionEvidenceFunction(): Promise<void> {}

  /** As `evidenceFunction`: nothing to plan once. */
  async identityEvidenceFunction(): Promise<void> {}

  /** As `evidenceFunction`: nothing to plan once. */
  async guardedEvidenceFunction(): Promise<void> {}

  /** SQLite cannot change a primary key in place, nor drop a foreign key: both tables are rebuilt (same rows). */
  async rekeyForRefunds(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('destination_jobs_0019')
      .addColumn('conversion_id', 'text', (c) => c.notNull())
      .addColumn('destination', 'text', (c) => c.notNull())
      .addColumn('job_key', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('kind', 'text', (c) => c.notNull().defaultTo('conversion'))
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('store_id', 'text', (c) => c.notNull())
      .addColumn('livemode', 'integer', (c) => c.notNull())
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull())
      .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('claimed_by', 'text')
      .addColumn('last_error', 'text')
      .addColumn('trace_id', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('sent_at', 'bigint')
      .addPrimaryKeyConstraint('destination_jobs_pk', ['conversion_id', 'destination', 'job_key'])
      .execute();
    await sql`insert into destination_jobs_0019 (conversion_id, destination, account_id, store_id, livemode, payload,
      status, attempts, next_attempt_at, expires_at, claimed_by, last_error, trace_id, created_at, updated_at, sent_at)
      select conversion_id, destination, account_id, store_id, livemode, payload, status, attempts, next_attempt_at,
      expires_at, claimed_by, last_error, trace_id, created_at, updated_at, sent_at from destination_jobs`.execute(db);
    await db.schema.dropTable('destination_jobs').execute();
    await db.schema.alterTable('destination_jobs_0019').renameTo('destination_jobs').execute();
    await db.schema.createIndex('destination_jobs_due').on('destination_jobs').columns(['status', 'next_attempt_at']).execute();
    await rebuildCapiOutbox(db);
  }
}

const CAPI_COLUMNS = `conversion_id, account_id, store_id, livemode, pixel_id, test_event_code, event, status, attempts,
  next_attempt_at, expires_at, claimed_by, last_error, fbtrace_id, created_at, updated_at, sent_at`;

/** SQLite: `capi_outbox` as 0002 made it, without the foreign key from its key to `conversions`. */
async function rebuildCapiOutbox(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('capi_outbox_0019')
    .addColumn('conversion_id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('store_id', 'text', (c) => c.notNull().references('stores.id'))
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('pixel_id', 'text', (c) => c.notNull())
    .addColumn('test_event_code', 'text')
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('claimed_by', 'text')
    .addColumn('last_error', 'text')
    .addColumn('fbtrace_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('sent_at', 'bigint')
    .execute();
  await sql`insert into capi_outbox_0019 (${sql.raw(CAPI_COLUMNS)}) select ${sql.raw(CAPI_COLUMNS)} from capi_outbox`.execute(db);
  await db.schema.dropTable('capi_outbox').execute();
  await db.schema.alterTable('capi_outbox_0019').renameTo('capi_outbox').execute();
  await db.schema.createIndex('capi_outbox_due').on('capi_outbox').columns(['status', 'next_attempt_at']).execute();
  await db.schema
    .createIndex('capi_outbox_store_due')
    .on('capi_outbox')
    .columns(['store_id', 'status', 'next_attempt_at'])
    .execute();
}
