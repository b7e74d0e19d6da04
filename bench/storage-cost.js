// node bench/storage-cost.js — what a store costs on disk, and how long backing it up and
// restoring it take (issue 41 point 4; architecture.md "a big merchant's year").
//
// On a kept bench store (bench/kept-store.js: built once with bench/attribution-store.js's
// generator, folded into its rollups by the real server, then copied per run), it reports:
//   - every table and index: rows, bytes (SQLite: the `dbstat` virtual table, pages as stored;
//     PostgreSQL: heap + TOAST and each index, summed over a partitioned table's partitions),
//     bytes a row;
//   - bytes per 1,000 clicks (the tables that grow with clicks: clicks, click_keys,
//     click_ids, attribution_keys, with their indexes) and per 1,000 conversions (conversions,
//     conversion_keys, touchpoints, destination_jobs, customers, refunds, with their indexes),
//     and the largest contributors;
//   - the time to back the store up and to restore it, with the tools docs/operations.md gives:
//     SQLite `waytrack backup FILE` (online backup API, quick_check, fsync) and `waytrack restore
//     FILE` into a new DATA_DIR; PostgreSQL `pg_dump --format=custom` and `pg_restore` into a new
//     database, and the dump's size.
//
//   node bench/storage-cost.js --store DIR [--clicks N]      SQLite (builds DIR's store if missing)
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node bench/storage-cost.js --store DIR
//   node bench/storage-cost.js --data-dir DIR | --database-url URL   an existing store, sizes only
//   … --backup                                                   and its backup and restore times
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import SqliteDriver from 'better-sqlite3';
import pg from 'pg';
import { keptStore } from './kept-store.js';
import { argValue, benchEngine, bin, build, createBenchDatabase, machineContext } from './lib.js';

/** The tables whose rows grow with clicks, and with conversions; the rest is counted apart. */
export const CLICK_TABLES = ['clicks', 'click_keys', 'click_ids', 'attribution_keys'];
export const CONVERSION_TABLES = [
  'conversions',
  'conversion_keys',
  'touchpoints',
  'destination_jobs',
  'customers',
  'refunds',
  'identity_links',
];

/** Tables and indexes of an embedded database: [{ table, name, kind, bytes }] and row counts. */
function sqliteSizes(dataDir) {
  const db = new SqliteDriver(path.join(dataDir, 'waytrack.db'), { readonly: true });
  try {
    const owners = new Map(
      db
        .prepare("select name, tbl_name, type from sqlite_master where type in ('table', 'index')")
        .all()
        .map((r) => [r.name, r]),
    );
    const objects = db
      .prepare('select name, sum(pgsize) as bytes from dbstat group by name')
      .all()
      .map((r) => {
        const owner = owners.get(r.name);
        return {
          table: owner?.tbl_name ?? r.name,
          name: r.name,
          kind: owner?.type === 'index' || r.name.startsWith('sqlite_autoindex') ? 'index' : 'table',
          bytes: r.bytes,
        };
      });
    const rows = Object.fromEntries(
      [...new Set(objects.filter((o) => o.kind === 'table').map((o) => o.table))]
        .filter((t) => !t.startsWith('sqlite_'))
        .map((t) => [t, db.prepare(`select count(*) as n from "${t}"`).get().n]),
    );
    return { objects, rows, fileBytes: statSync(path.join(dataDir, 'waytrack.db')).size };
  } finally {
    db.close();
  }
}

/** The same of a PostgreSQL database; partitions are counted under their partitioned table. */
async function postgresSizes(url) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('vacuum analyze');
    const { rows } = await client.query(`
      with recursive tree as (
        select c.oid, c.oid as root from pg_class c
          where c.relkind in ('r', 'p') and c.relnamespace = current_schema()::regnamespace and not c.relispartition
        union all
        select i.inhrelid, t.root from pg_inherits i join tree t on i.inhparent = t.oid
      )
      select r.relname as "table", 'table' as kind, r.relname as name,
          sum(pg_table_size(t.oid))::bigint as bytes, sum(c.reltuples)::bigint as rows
        from tree t join pg_class r on r.oid = t.root join pg_class c on c.oid = t.oid group by r.relname
      union all
      select r.relname, 'index', coalesce(pi.relname, ix.relname), sum(pg_relation_size(ix.oid))::bigint, null
        from tree t join pg_class r on r.oid = t.root
        join pg_index x on x.indrelid = t.oid join pg_class ix on ix.oid = x.indexrelid
        left join pg_inherits ih on ih.inhrelid = ix.oid left join pg_class pi on pi.oid = ih.inhparent
        group by r.relname, coalesce(pi.relname, ix.relname)`);
    const objects = rows.map((r) => ({ table: r.table, name: r.name, kind: r.kind, bytes: Number(r.bytes) }));
    const counts = {};
    for (const table of [...CLICK_TABLES, ...CONVERSION_TABLES]) {
      if (!objects.some((o) => o.table === table)) continue;
      counts[table] = Number((await client.query(`select count(*) as n from ${pg.escapeIdentifier(table)}`)).rows[0].n);
    }
    const total = Number((await client.query('select pg_database_size(current_database()) as n')).rows[0].n);
    return { objects, rows: counts, fileBytes: total };
  } finally {
    await client.end();
  }
}

const mb = (bytes) => `${(bytes / 1_048_576).toFixed(1)} MB`;

/** The report of one store's sizes: per table, per 1,000 clicks and conversions, the largest contributors. */
export function costReport({ objects, rows, fileBytes }) {
  const byTable = new Map();
  for (const o of objects) {
    const entry = byTable.get(o.table) ?? { data: 0, indexes: 0, parts: [] };
    if (o.kind === 'index') entry.indexes += o.bytes;
    else entry.data += o.bytes;
    entry.parts.push(o);
    byTable.set(o.table, entry);
  }
  const family = (tables) =>
    tables.reduce((sum, t) => sum + (byTable.get(t) ? byTable.get(t).data + byTable.get(t).indexes : 0), 0);
  const clicks = rows.clicks ?? 0;
  const conversions = rows.conversions ?? 0;
  const lines = ['table                        rows         data       indexes    bytes/row'];
  const tables = [...byTable.entries()].sort((a, b) => b[1].data + b[1].indexes - (a[1].data + a[1].indexes));
  for (const [table, e] of tables) {
    if (e.data + e.indexes < 64 * 1024) continue;
    const n = rows[table];
    lines.push(
      `${table.padEnd(26)} ${String(n ?? '').padStart(10)} ${mb(e.data).padStart(11)} ${mb(e.indexes).padStart(11)} ${
        n ? String(Math.round((e.data + e.indexes) / n)).padStart(8) : ''
      }`,
    );
  }
  const largest = objects
    .slice()
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, 8)
    .map((o) => `${o.kind === 'index' ? `index ${o.name} (${o.table})` : `table ${o.name}`} ${mb(o.bytes)}`);
  return {
    lines,
    largest,
    perThousandClicks: clicks ? Math.round((family(CLICK_TABLES) / clicks) * 1000) : undefined,
    perThousandConversions: conversions ? Math.round((family(CONVERSION_TABLES) / conversions) * 1000) : undefined,
    fileBytes,
  };
}

function seconds(work) {
  const started = performance.now();
  work();
  return Math.round((performance.now() - started) / 100) / 10;
}

/** Backup and restore with the documented tools; returns their times and the backup's size. */
async function backupRestore(engine, target) {
  const scratch = mkdtempSync(path.join(tmpdir(), 'waytrack-cost-'));
  try {
    if (!target.database) {
      const file = path.join(scratch, 'backup.db');
      const env = { ...process.env, DATA_DIR: target.dataDir, LOG_LEVEL: 'silent' };
      const backup = seconds(() => execFileSync(process.execPath, [bin, 'backup', file], { env, stdio: 'ignore' }));
      const restoreDir = path.join(scratch, 'restored');
      const restore = seconds(() =>
        execFileSync(process.execPath, [bin, 'restore', file], { env: { ...env, DATA_DIR: restoreDir }, stdio: 'ignore' }),
      );
      return { backup, restore, backupBytes: statSync(file).size };
    }
    const file = path.join(scratch, 'backup.dump');
    const backup = seconds(() =>
      execFileSync('pg_dump', ['--format=custom', `--file=${file}`, `--dbname=${target.database.url}`], { stdio: 'inherit' }),
    );
    const restored = await createBenchDatabase(engine.adminUrl, 'restored');
    try {
      const restore = seconds(() =>
        execFileSync('pg_restore', ['--no-owner', '--jobs=2', `--dbname=${restored.url}`, file], { stdio: 'inherit' }),
      );
      return { backup, restore, backupBytes: statSync(file).size };
    } finally {
      await restored.drop();
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

export async function measureStorage(engine, target, { backup = true } = {}) {
  const sizes = target.database ? await postgresSizes(target.database.url) : sqliteSizes(target.dataDir);
  const report = costReport(sizes);
  return { ...report, ...(backup && (await backupRestore(engine, target))) };
}

export function printStorage(label, result) {
  console.log(`\n${label}`);
  for (const line of result.lines) console.log(`  ${line}`);
  console.log(`  per 1,000 clicks (${CLICK_TABLES.join(', ')} + indexes): ${(result.perThousandClicks / 1024).toFixed(0)} KB`);
  console.log(
    `  per 1,000 conversions (${CONVERSION_TABLES.join(', ')} + indexes): ${(result.perThousandConversions / 1024).toFixed(0)} KB`,
  );
  console.log(`  whole database: ${mb(result.fileBytes)}`);
  console.log(`  largest: ${result.largest.join('; ')}`);
  if (result.backup !== undefined) {
    console.log(`  backup ${result.backup} s (${mb(result.backupBytes)}), restore ${result.restore} s`);
  }
}

async function main() {
  const engine = benchEngine();
  const dataDir = argValue('--data-dir');
  const databaseUrl = argValue('--database-url');
  if (dataDir || databaseUrl) {
    const target = databaseUrl ? { database: { url: databaseUrl } } : { dataDir };
    const backup = process.argv.includes('--backup');
    printStorage(dataDir ?? databaseUrl, await measureStorage(engine, target, { backup }));
    return;
  }
  const dir = argValue('--store');
  if (!dir) throw new Error('usage: node bench/storage-cost.js --store DIR [--clicks N] | --data-dir DIR | --database-url URL');
  const clicksArg = argValue('--clicks');
  const code = build();
  process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
  console.log(`server: ${code}\n${machineContext()}`);
  const kept = await keptStore(engine, dir, clicksArg === undefined ? undefined : Number(clicksArg));
  const copy = await kept.copy('cost');
  try {
    printStorage(`${engine.name}, a store of ${kept.meta.clicks} clicks`, await measureStorage(engine, copy));
  } finally {
    await copy.remove();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
