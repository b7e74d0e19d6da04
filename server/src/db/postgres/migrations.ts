import { type CreateTableBuilder, type Kysely, sql } from 'kysely';
import type { MigrationHooks } from '../engine.js';
import { ATTRIBUTION_EVIDENCE_FUNCTION, GUARDED_EVIDENCE_FUNCTION, IDENTITY_EVIDENCE_FUNCTION } from './attribution-evidence.js';
import { createPartitions, monthStart, PARTITIONED, type PartitionedTable } from './partitions.js';

/** PostgreSQL's part of the migrations that differ between engines (db/migrations). */
export class PostgresMigrations implements MigrationHooks {
  /** Several schemas of one database may each hold a Waytrack: the bookkeeping is the connection's schema's. */
  async migrationTableSchema(db: Kysely<unknown>): Promise<string | undefined> {
    const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
    return rows[0]?.schema;
  }

  clusteredOnKey<T extends string, C extends string>(table: CreateTableBuilder<T, C>): CreateTableBuilder<T, C> {
    return table;
  }

  /** 0004's rowid watermarks were the embedded database's only. */
  async queueUnfolded(): Promise<void> {}

  partitionEvents(db: Kysely<unknown>): Promise<void> {
    return partitionEvents(db);
  }

  /** A primary key changes in place; `capi_outbox` lost its foreign key to `conversions` in 0007. */
  async rekeyForRefunds(db: Kysely<unknown>): Promise<void> {
    await sql`alter table destination_jobs add column job_key text not null default ''`.execute(db);
    await sql`alter table destination_jobs add column kind text not null default 'conversion'`.execute(db);
    await sql`alter table destination_jobs drop constraint destination_jobs_pk`.execute(db);
    await sql`alter table destination_jobs add constraint destination_jobs_pk primary key (conversion_id, destination, job_key)`.execute(
      db,
    );
  }

  async evidenceFunction(db: Kysely<unknown>): Promise<void> {
    await sql.raw(EVIDENCE_FUNCTION).execute(db);
  }

  /** Replaces 0021's function (db/postgres/attribution-evidence.ts). */
  async attributionEvidenceFunction(db: Kysely<unknown>): Promise<void> {
    await sql`drop function if exists waytrack_evidence_clicks`.execute(db);
    await sql.raw(ATTRIBUTION_EVIDENCE_FUNCTION).execute(db);
  }

  /** Replaces 0024's function (same parameters and rows) with one that also reads identity links. */
  async identityEvidenceFunction(db: Kysely<unknown>): Promise<void> {
    await sql.raw(IDENTITY_EVIDENCE_FUNCTION).execute(db);
  }

  /** Replaces 0026's function (same parameters and rows) with one that starts only the lookups it has values for. */
  async guardedEvidenceFunction(db: Kysely<unknown>): Promise<void> {
    await sql.raw(GUARDED_EVIDENCE_FUNCTION).execute(db);
  }
}

/** What every branch returns: the columns of a candidate click. */
const EVIDENCE_COLUMNS =
  'c.id, c.fbclid, c.store_id, c.livemode, c.click_time, c.is_bot, c.fingerprint, c.derived_fingerprint, c.ip_address, c.user_agent';
/** The branch of an fbclid: through its key to its click, in its one partition. */
const byKey = (fbclid: string) => `
  select 'fbclid', ${EVIDENCE_COLUMNS}
    from clicks c
    where c.click_time >= _from and c.click_time <= _to and (c.id, c.click_time) = (
      select k.click_id, k.click_time from click_keys k
      where k.store_id = _store_id and k.livemode = _livemode and k.fbclid = ${fbclid})`;
/** The branch of a signal a click carries: the most recent matching clicks of the window. */
const recent = (lookup: string, column: string, value: string) => `
  (select '${lookup}', ${EVIDENCE_COLUMNS}
    from clicks c
    where c.store_id = _store_id and c.livemode = _livemode and c.${column} = ${value}
      and c.click_time >= _from and c.click_time <= _to and c.is_bot = 0
    order by c.click_time desc limit _limit)`;
/** The clicks earlier attributed conversions sharing a hashed email or phone were attributed to. */
const identity = (column: string, value: string) => `
        (select e.attributed_click_id from conversions e
          where e.store_id = _store_id and e.livemode = _livemode and e.${column} = ${value}
            and e.event_time >= _after and e.event_time <= _before and e.attributed = 1 and e.id <> _exclude_id
          order by e.event_time desc limit _limit)`;
/**
 * Migration 0021: every lookup of a conversion's evidence (db/postgres/evidence.ts) as the
 * branches of one UNION ALL, each tagged with its lookup, in a function whose plan is generic.
 *
 * Every branch is bounded by the candidates' window (`_from`, `_to`; the identity branch's
 * earlier conversions by `_after`): a click outside it is never a candidate. With the window, the
 * plan reads only the window's months: a generic plan prunes the others when execution starts,
 * where the branches without it started ~45 partition scans a conversion. But PostgreSQL's own
 * choice would then be a custom plan every time (pruned when planned, so costed lower than the
 * generic one): ~650 µs of planning a call on a 1M-click store, more than the lookups
 * themselves. A function may fix its plan mode; a statement cannot.
 *
 * An fbclid goes through its key to its click's partition, as `findClickByFbclid` does (db/postgres/clicks.ts);
 * identity clicks are those of this store and mode, as `findClicksByIds` keeps them. An absent
 * value is null: its branch finds nothing. `_exclude_id` is '' when nothing is excluded.
 */
const EVIDENCE_FUNCTION = `
create function waytrack_evidence_clicks(
  _click_id text, _account_id text, _store_id text, _livemode integer, _from bigint, _to bigint, _limit integer,
  _fbclid1 text, _fbclid2 text, _fingerprint text, _derived1 text, _derived2 text, _ip_address text,
  _email_hash text, _phone_hash text, _after bigint, _before bigint, _exclude_id text)
returns table (lookup text, id text, fbclid text, store_id text, livemode integer, click_time bigint, is_bot integer,
  fingerprint text, derived_fingerprint text, ip_address text, user_agent text)
language plpgsql stable
set plan_cache_mode = force_generic_plan
as $body$
#variable_conflict use_column
begin
  return query
  select 'click', ${EVIDENCE_COLUMNS}
    from clicks c
    where c.id = _click_id and c.account_id = _account_id and c.livemode = _livemode
      and c.click_time >= _from and c.click_time <= _to
  union all ${byKey('_fbclid1')}
  union all ${byKey('_fbclid2')}
  union all ${recent('fingerprint', 'fingerprint', '_fingerprint')}
  union all ${recent('derived', 'derived_fingerprint', '_derived1')}
  union all ${recent('derived', 'derived_fingerprint', '_derived2')}
  union all
  select 'identity', ${EVIDENCE_COLUMNS}
    from clicks c
    where c.store_id = _store_id and c.livemode = _livemode and c.click_time >= _from and c.click_time <= _to
      and c.id in (${identity('email_hash', '_email_hash')}
        union ${identity('phone_hash', '_phone_hash')})
  union all ${recent('ip', 'ip_address', '_ip_address')};
end
$body$`;

/** Months of existing history that get partitions of their own; anything older goes to the default one. */
const HISTORY_MONTHS = 36;

/**
 * Migration 0007: clicks and conversions become tables range-partitioned by month of their
 * event time (db/postgres/partitions.ts), so that retention drops whole months.
 *
 * What a partitioned table cannot have, and what replaces it:
 * - A unique constraint without the partition key: the dedup keys (store, mode, fbclid) and
 *   (store, mode, eventType, orderId) move to two unpartitioned tables, `click_keys` and
 *   `conversion_keys`, each row naming its event and the event's time. A writer inserts the key
 *   first; the key's primary key decides which of two concurrent writers stores the event
 *   (db/postgres/clicks.ts, conversions.ts), and a duplicate is read by id and time, from its
 *   one partition. (Looking an fbclid up in the partitioned table itself probes, and plans
 *   for, every month: that halved click ingest.)
 * - A primary key on `id` alone: it becomes (id, time); ids stay unique (they are generated).
 * - Foreign keys pointing at them (touchpoints → clicks/conversions, capi_outbox →
 *   conversions): dropped; retention deletes those rows itself before dropping a month.
 */
async function partitionEvents(db: Kysely<unknown>): Promise<void> {
  const now = Date.now();
  let from = monthStart(now, -3); // clicks may be reported up to 90 days late
  for (const { table, column } of PARTITIONED) {
    const { rows } = await sql<{
      oldest: number | null;
    }>`select min(${sql.ref(column)}) as oldest from ${sql.table(table)}`.execute(db);
    const oldest = rows[0]?.oldest;
    if (oldest !== null && oldest !== undefined)
      from = Math.min(from, Math.max(monthStart(Number(oldest)), monthStart(now, -HISTORY_MONTHS)));
  }

  const indexes = new Map<PartitionedTable, { name: string; definition: string }[]>();
  for (const { table, column } of PARTITIONED) {
    const { rows } = await sql<{ name: string; definition: string }>`
      select indexname as name, indexdef as definition from pg_indexes
      where schemaname = current_schema() and tablename = ${table}`.execute(db);
    indexes.set(table, rows);
    const old = `${table}_unpartitioned`;
    await sql`alter table ${sql.table(table)} rename to ${sql.id(old)}`.execute(db);
    await sql`create table ${sql.table(table)} (like ${sql.table(old)} including defaults) partition by range (${sql.ref(column)})`.execute(
      db,
    );
    await sql`create table ${sql.id(`${table}_pdefault`)} partition of ${sql.table(table)} default`.execute(db);
  }
  await createPartitions(db, from, now);

  for (const { table, column } of PARTITIONED) {
    const old = `${table}_unpartitioned`;
    await sql`insert into ${sql.table(table)} select * from ${sql.table(old)}`.execute(db);
    // Drops the foreign keys that point at it, too (touchpoints, capi_outbox).
    await sql`drop table ${sql.table(old)} cascade`.execute(db);
    await sql`alter table ${sql.table(table)} add constraint ${sql.id(`${table}_pkey`)} primary key (id, ${sql.ref(column)})`.execute(
      db,
    );
    for (const index of indexes.get(table) ?? []) {
      // The dedup keys live in their key tables (below).
      if (index.name === `${table}_pkey` || index.name === `${table}_dedup`) continue;
      await sql.raw(index.definition).execute(db);
    }
  }

  await db.schema
    .createTable('click_keys')
    .addColumn('store_id', 'text', (c) => c.notNull())
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('fbclid', 'text', (c) => c.notNull())
    .addColumn('click_id', 'text', (c) => c.notNull())
    .addColumn('click_time', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('click_keys_pk', ['store_id', 'livemode', 'fbclid'])
    .execute();
  await sql`insert into click_keys select store_id, livemode, fbclid, id, click_time from clicks`.execute(db);
  // Retention deletes the keys of a dropped month by time.
  await db.schema.createIndex('click_keys_time').on('click_keys').column('click_time').execute();

  await db.schema
    .createTable('conversion_keys')
    .addColumn('store_id', 'text', (c) => c.notNull())
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('order_id', 'text', (c) => c.notNull())
    .addColumn('conversion_id', 'text', (c) => c.notNull())
    .addColumn('event_time', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('conversion_keys_pk', ['store_id', 'livemode', 'event_type', 'order_id'])
    .execute();
  await sql`insert into conversion_keys select store_id, livemode, event_type, order_id, id, event_time from conversions`.execute(
    db,
  );
  await db.schema.createIndex('conversion_keys_time').on('conversion_keys').column('event_time').execute();
  // The foreign keys from touchpoints and capi_outbox to the two tables are gone with `cascade`;
  // touchpoints keep their own primary key, and capi_outbox its own.
}
