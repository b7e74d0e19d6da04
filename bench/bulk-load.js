// Bulk loads of a bench store (bench/attribution.js): rows written straight into the tables,
// bypassing the API, much faster than the service's own writes; each engine's sink takes rows
// in the column order below and `finish()` leaves the database as the service would.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import SqliteDriver from 'better-sqlite3';
import pg from 'pg';

const CLICK_COLUMNS = [
  'id',
  'account_id',
  'store_id',
  'livemode',
  'fbclid',
  'click_time',
  'created_at',
  'landing_page',
  'referrer',
  'ip_address',
  'user_agent',
  'fingerprint',
  'derived_fingerprint',
  'fbp',
  'fbc',
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'utm_content',
  'utm_term',
  'campaign_id',
  'adset_id',
  'ad_id',
  'is_bot',
];
const CONVERSION_COLUMNS = [
  'id',
  'account_id',
  'store_id',
  'livemode',
  'event_type',
  'order_id',
  'event_id',
  'event_time',
  'created_at',
  'value_minor',
  'currency',
  'products',
  'user_data',
  'email_hash',
  'phone_hash',
  'ip_address',
  'user_agent',
  'fingerprint',
  'ref_click_id',
  'ref_fbclid',
  'ref_fbc',
  'fbp',
  'event_source_url',
  'attributed',
  'attributed_click_id',
  'attributed_fbclid',
  'confidence',
  'attribution_signal',
  'capi_status',
  'capi_attempts',
  'capi_last_error',
  'capi_sent_at',
];
export const TABLES = {
  clicks: CLICK_COLUMNS,
  conversions: CONVERSION_COLUMNS,
  touchpoints: ['conversion_id', 'click_id', 'signal', 'score', 'click_time'],
  ad_spend: [
    'id',
    'account_id',
    'store_id',
    'livemode',
    'date',
    'platform',
    'campaign_id',
    'campaign_name',
    'amount_minor',
    'currency',
    'created_at',
    'updated_at',
  ],
};
/** The bulk-loaded events go into the rollup queue too, as the service queues every event it stores. */
export const QUEUE_EVENTS = `insert into rollup_queue (id, store_id, kind, version)
  select id, store_id, 'click', 0 from clicks union all select id, store_id, 'conversion', 0 from conversions`;
/** The spend month rollups (migration 0041) of the bulk-loaded spend entries, as the service's spend writes keep them. */
export const SPEND_MONTHS = `insert into rollup_spend_months
    (store_id, livemode, month, platform, campaign_id, currency, amount_minor, entries, campaign_name)
  select store_id, livemode, substr(date, 1, 7), platform, campaign_id, currency, sum(amount_minor), count(*), max(campaign_name)
  from ad_spend group by store_id, livemode, substr(date, 1, 7), platform, campaign_id, currency`;

/**
 * Bulk load into the embedded database (the server runs with WAL and its own fsyncs): a
 * rollback journal, no fsync, secondary indexes dropped and built once at the end. `tables` (table →
 * columns; default the four above) says what rows `add` takes; `after` are the statements run
 * before the commit (default: queue the events for the rollups, sum the spend per month).
 */
export function sqliteSink(dataDir, { tables = TABLES, after = [QUEUE_EVENTS, SPEND_MONTHS] } = {}) {
  const raw = new SqliteDriver(path.join(dataDir, 'waytrack.db'));
  // The database is in WAL mode (the migrations set it), where `journal_mode = OFF` is refused and
  // the mode stays WAL: every loaded page went through the log (24 GB of it at 20M clicks). A
  // rollback journal keeps only the pages a transaction changes that existed before it, next to
  // nothing for a load into empty tables; OFF itself better-sqlite3's defensive mode refuses.
  raw.pragma('journal_mode = DELETE');
  raw.pragma('synchronous = OFF');
  raw.pragma('cache_size = -1000000');
  const indexes = raw
    .prepare(
      `select name, sql from sqlite_master where type = 'index' and sql is not null and tbl_name in (${Object.keys(tables)
        .map((t) => `'${t}'`)
        .join(', ')})`,
    )
    .all();
  for (const index of indexes) raw.exec(`drop index ${index.name}`);
  const statements = Object.fromEntries(
    Object.entries(tables).map(([table, columns]) => [
      table,
      raw.prepare(`insert into ${table} (${columns.join(', ')}) values (${columns.map(() => '?').join(', ')})`),
    ]),
  );
  raw.exec('begin');
  return {
    add(table, values) {
      statements[table].run(values);
    },
    async finish() {
      for (const statement of after) raw.exec(statement);
      raw.exec('commit');
      for (const index of indexes) raw.exec(index.sql);
      raw.pragma('journal_mode = WAL');
      raw.close();
      // The load leaves ~1.3 GB of dirty pages for the kernel to write back; measured while that
      // ran, every fsync of the servers below waited behind it (a 10k-store p99 of 324 ms).
      execFileSync('sync');
    },
  };
}

/**
 * Bulk load into a PostgreSQL bench database: batches of 5,000 rows as one `insert … select
 * from unnest(<one array per column>)`, in one transaction; secondary indexes dropped and built
 * once at the end; then VACUUM ANALYZE (planner statistics, as autovacuum would have them on a
 * database that grew to this size) and CHECKPOINT (nothing of the load left to write back).
 * `tables` and `after` as for `sqliteSink`.
 */
export async function postgresSink(database, { tables = TABLES, after = [QUEUE_EVENTS, SPEND_MONTHS] } = {}) {
  const client = await database.connect();
  await client.query('set synchronous_commit = off');
  await client.query("set maintenance_work_mem = '512MB'");
  try {
    // Skip the per-row foreign key triggers of the load (superuser only; else they just run).
    await client.query('set session_replication_role = replica');
  } catch {}
  const casts = {};
  for (const [table, columns] of Object.entries(tables)) {
    const { rows } = await client.query(
      'select column_name, udt_name from information_schema.columns where table_schema = current_schema() and table_name = $1',
      [table],
    );
    const types = new Map(rows.map((r) => [r.column_name, r.udt_name]));
    casts[table] = columns.map((c, i) => `$${i + 1}::${types.get(c)}[]`).join(', ');
  }
  const indexes = (
    await client.query(`select indexname, indexdef from pg_indexes where schemaname = current_schema()
      and tablename in (${Object.keys(tables)
        .map((t) => `'${t}'`)
        .join(', ')})
      and indexname not in (select conname from pg_constraint)`)
  ).rows;
  for (const index of indexes) await client.query(`drop index ${pg.escapeIdentifier(index.indexname)}`);
  await client.query('begin');
  const buffers = Object.fromEntries(Object.keys(tables).map((table) => [table, []]));
  const flush = async (table) => {
    const rows = buffers[table];
    if (rows.length === 0) return;
    buffers[table] = [];
    const columns = tables[table];
    const arrays = columns.map((_, i) => rows.map((r) => r[i]));
    await client.query(
      `insert into ${table} (${columns.map((c) => pg.escapeIdentifier(c)).join(', ')}) select * from unnest(${casts[table]})`,
      arrays,
    );
  };
  return {
    add(table, values) {
      buffers[table].push(values);
      return buffers[table].length >= 5_000 ? flush(table) : undefined;
    },
    async finish() {
      for (const table of Object.keys(tables)) await flush(table);
      for (const statement of after) await client.query(statement);
      // The dedup keys the service keeps beside the partitioned tables (migration 0007).
      await client.query(
        'insert into click_keys (store_id, livemode, fbclid, click_id, click_time) select store_id, livemode, fbclid, id, click_time from clicks',
      );
      await client.query(`insert into conversion_keys (store_id, livemode, event_type, order_id, conversion_id, event_time)
        select store_id, livemode, event_type, order_id, id, event_time from conversions`);
      // A partitioned table's index is listed "ON ONLY" the parent: recreated so, no partition would get one.
      for (const index of indexes) await client.query(index.indexdef.replace(' ON ONLY ', ' ON '));
      await client.query('commit');
      await client.query('reset session_replication_role');
      await client.query('vacuum analyze');
      await client.query('checkpoint');
      await client.end();
    },
  };
}
