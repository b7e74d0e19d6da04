// node bench/storage-floor.js [--engine sqlite|postgres] — the storage floor: what the database
// engine itself costs to store our click rows durably, with no server, no HTTP and none of our
// code on the path, in transactions of BENCH_FLOOR_BATCH (50, 100 and 1,000) rows. It bounds what any
// server on this schema can do (issue 27's arithmetic, bench/README.md "The storage floor").
//
// The rows are real: one click is tracked through the server's own code on a fresh, migrated
// database, read back, and copied with a fresh id and fbclid for every row.
// - SQLite: one thread and one connection (SQLite has one writer) with the server's settings
//   (WAL, synchronous=NORMAL, foreign keys); per transaction BEGIN, each row's click insert and
//   rollup-queue insert (the server's two statements, prepared once), COMMIT, then fdatasync of
//   the log, as the server's log keeper does before any answer; a passive checkpoint at every
//   4 MB of log. Run three times: with the schema's indexes, without the clicks table's six
//   secondary indexes (what they cost), and with each click's ambiguity rows as well (the
//   server writes them with the click: attribution/keys.ts). CPU is this process's, all threads.
// - PostgreSQL (`--engine postgres`, DATABASE_URL the admin URL as for `npm run bench`): per
//   transaction the rows go by server-side `COPY … FROM` a file into click_keys, clicks and
//   rollup_queue (the cheapest way PostgreSQL takes rows: no statement per row, no planning),
//   then COMMIT with synchronous_commit on. CPU is the backend's (from /proc), plus PostgreSQL's
//   WAL writer and checkpointer over the run. Then the same rows through the server's own
//   statement (db/postgres/clicks.ts: keys, clicks and queue rows in one statement, sent as the
//   server sends it: the rows of one synchronous stretch as one batch, no transaction around it).
//   Both again with every click from an address of its own, `COPY` then with the clicks'
//   ambiguity rows too (the server's statement writes them with the click).
import { chmodSync, closeSync, fdatasyncSync, mkdtempSync, openSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Sqlite from 'better-sqlite3';
import pg from 'pg';
import { benchEngine, cpuMs, createBenchDatabase, machineContext, postgresCpuMs, source } from './lib.js';

const ROWS = Number(process.env.BENCH_FLOOR_ROWS ?? 100_000);
const BATCHES = (process.env.BENCH_FLOOR_BATCH ?? '50,100,1000').split(',').map(Number);
const engine = benchEngine();

/** A click tracked by the server's own code on the fresh database `openDatabase` opens, as stored. */
async function templateClick(openDatabase) {
  const { createAccount } = await source('accounts/accounts.ts');
  const { createStore } = await source('stores/stores.ts');
  const { trackClick } = await source('tracking/clicks.ts');
  const database = openDatabase();
  try {
    await database.migrate();
    const account = await createAccount(database, { email: 'floor@example.com' });
    const tenant = { accountId: account.accountId, livemode: true };
    const store = await createStore(database, tenant, { name: 'Floor', domain: 'bench.example.com', platform: 'custom' });
    const tracked = await trackClick(database, tenant, {
      fbclid: 'floor_template',
      storeId: store.id,
      landingPage: 'https://bench.example.com/p?utm_source=facebook&utm_campaign=bf',
      ipAddress: '203.0.113.9',
      userAgent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0) AppleWebKit/605.1.15 Safari/605.1.15',
    });
    const row = await database.read.selectFrom('clicks').selectAll().where('id', '=', tracked.clickId).executeTakeFirstOrThrow();
    return row;
  } finally {
    await database.close();
  }
}

/** The template with a fresh id and fbclid (the same lengths as the server's). */
function rowsFrom(template, count, offset) {
  const rows = [];
  for (let i = 0; i < count; i++) {
    const n = String(offset + i).padStart(10, '0');
    rows.push({
      ...template,
      id: `${template.id.slice(0, -10)}${n}`,
      fbclid: `floor_${n}_${process.pid}`,
      fbc: `fb.1.1.floor_${n}`,
    });
  }
  return rows;
}

const us = (ms, n) => ((1000 * ms) / n).toFixed(1);

/**
 * Each row from an address of its own (an IPv6 /64 each, documentation prefix) and a fingerprint
 * of its own, as real traffic is: its ambiguity rows' keys (attribution/keys.ts) then fall at
 * their own places in the table, where the template's would all share one key.
 */
function ownAddresses(rows) {
  rows.forEach((row, i) => {
    row.ip_address = `2001:db8:${((i >> 16) & 0xffff).toString(16)}:${(i & 0xffff).toString(16)}::1`;
    row.ip_network = `2001:db8:${((i >> 16) & 0xffff).toString(16)}:${(i & 0xffff).toString(16)}::/64`;
    row.fingerprint = `fp_${i}`;
  });
  return rows;
}

async function sqliteFloor() {
  const { openSqlite } = await source('db/sqlite/database.ts');
  const dataDir = mkdtempSync(path.join(tmpdir(), 'waytrack-floor-'));
  try {
    const template = await templateClick(() => openSqlite(dataDir));
    const file = path.join(dataDir, 'waytrack.db');
    const { ambiguityRows } = await source('attribution/keys.ts');
    const run = (label, dropIndexes, batch, keys = false) => {
      const raw = new Sqlite(file);
      raw.pragma('journal_mode = WAL');
      raw.pragma('synchronous = NORMAL');
      raw.pragma('wal_autocheckpoint = 0');
      raw.pragma('foreign_keys = ON');
      raw.exec('delete from rollup_queue; delete from clicks; delete from attribution_keys;');
      raw.pragma('wal_checkpoint(TRUNCATE)');
      if (dropIndexes) {
        for (const { name } of raw
          .prepare("select name from sqlite_master where type = 'index' and tbl_name = 'clicks' and sql is not null")
          .all()) {
          raw.exec(`drop index "${name}"`);
        }
      }
      const columns = Object.keys(template);
      const insertClick = raw.prepare(
        `insert into "clicks" (${columns.map((c) => `"${c}"`).join(', ')}) values (${columns.map((c) => `@${c}`).join(', ')}) on conflict ("store_id", "livemode", "fbclid") do nothing`,
      );
      const insertQueue = raw.prepare(
        `insert into "rollup_queue" ("id", "store_id", "kind", "version") values (?, ?, 'click', 0)`,
      );
      const insertKey = raw.prepare(
        'insert into "attribution_keys" ("day", "k", "browser") values (?, ?, ?) on conflict ("day", "k", "browser") do nothing',
      );
      const wal = openSync(`${file}-wal`, 'r');
      const rows = rowsFrom(template, ROWS, 0);
      // With the ambiguity rows (attribution/keys.ts, written with every click that is not a bot's).
      const keyRows = keys ? ownAddresses(rows).map((row) => ambiguityRows(row)) : [];
      const begin = raw.prepare('begin');
      const commit = raw.prepare('commit');
      const cpuBefore = process.cpuUsage();
      const started = performance.now();
      for (let i = 0; i < ROWS; i += batch) {
        begin.run();
        for (let j = i; j < Math.min(i + batch, ROWS); j++) {
          const row = rows[j];
          insertClick.run(row);
          insertQueue.run(row.id, row.store_id);
          if (keys) for (const key of keyRows[j]) insertKey.run(key.day, key.k, key.browser);
        }
        commit.run();
        fdatasyncSync(wal);
        if (statSync(`${file}-wal`).size > 4 * 1024 * 1024) raw.pragma('wal_checkpoint(PASSIVE)');
      }
      const wall = performance.now() - started;
      const cpu = process.cpuUsage(cpuBefore);
      closeSync(wal);
      raw.close();
      const cpuMsTotal = (cpu.user + cpu.system) / 1000;
      console.log(
        `SQLite, ${label}, ${batch} rows a transaction: ${us(cpuMsTotal, ROWS)} µs of CPU a click ` +
          `(user ${us(cpu.user / 1000, ROWS)}, system ${us(cpu.system / 1000, ROWS)}); ` +
          `${Math.round((ROWS * 1000) / wall)} clicks/s on its one writer`,
      );
    };
    for (const batch of BATCHES) run('the schema as it is', false, batch);
    for (const batch of BATCHES) run('without the six secondary click indexes', true, batch);
    for (const batch of BATCHES) run('with the ambiguity rows (~3 a click)', false, batch, true);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function postgresFloor() {
  const { openPostgres } = await source('db/postgres/database.ts');
  const { ambiguityRows } = await source('attribution/keys.ts');
  const { INSERT_CLICK } = await source('db/repositories/clicks.ts');
  const database = await createBenchDatabase(engine.adminUrl, 'floor');
  const csvDir = mkdtempSync(path.join(tmpdir(), 'waytrack-floor-'));
  chmodSync(csvDir, 0o755); // PostgreSQL's own processes read the files
  try {
    const template = await templateClick(() => openPostgres(database.url));
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const backend = (await client.query('select pg_backend_pid() as pid')).rows[0].pid;
      const columns = Object.keys(template);
      const csv = (values) =>
        `${values.map((v) => (v === null || v === undefined ? '' : `"${String(v).replaceAll('"', '""')}"`)).join(',')}\n`;
      // Files the server's own process reads (COPY FROM a file needs a superuser, as the bench's role is).
      const write = (name, lines) => {
        const file = path.join(csvDir, name);
        writeFileSync(file, lines.join(''), { mode: 0o644 });
        return file;
      };
      const run = async (batch, offset, keys = false) => {
        await client.query('truncate clicks, click_keys, rollup_queue, attribution_keys');
        await client.query('checkpoint');
        const rows = keys ? ownAddresses(rowsFrom(template, ROWS, offset)) : rowsFrom(template, ROWS, offset);
        const files = [];
        for (let i = 0; i < ROWS; i += batch) {
          const part = rows.slice(i, i + batch);
          files.push([
            write(
              `k${i}.csv`,
              part.map((r) => csv([r.store_id, r.livemode, r.fbclid, r.id, r.click_time])),
            ),
            write(
              `c${i}.csv`,
              part.map((r) => csv(columns.map((c) => r[c]))),
            ),
            write(
              `q${i}.csv`,
              part.map((r) => csv([r.id, r.store_id, 'click', 0])),
            ),
            keys &&
              write(
                `a${i}.csv`,
                part.flatMap((r) => ambiguityRows(r).map((a) => csv([a.day, a.k, a.browser]))),
              ),
          ]);
        }
        const backendBefore = cpuMs(backend);
        const allBefore = postgresCpuMs();
        const started = performance.now();
        for (const [clickKeys, clicks, queue, ambiguity] of files) {
          await client.query('begin');
          await client.query(
            `copy click_keys (store_id, livemode, fbclid, click_id, click_time) from '${clickKeys}' (format csv)`,
          );
          await client.query(`copy clicks (${columns.map((c) => `"${c}"`).join(', ')}) from '${clicks}' (format csv)`);
          await client.query(`copy rollup_queue (id, store_id, kind, version) from '${queue}' (format csv)`);
          if (ambiguity) await client.query(`copy attribution_keys (day, k, browser) from '${ambiguity}' (format csv)`);
          await client.query('commit');
        }
        const wall = performance.now() - started;
        const backendMs = cpuMs(backend) - backendBefore;
        const allMs = postgresCpuMs() - allBefore;
        console.log(
          `PostgreSQL, COPY${keys ? ' with the ambiguity rows' : ''}, ${batch} rows a transaction: ${us(backendMs, ROWS)} µs of the backend's CPU a click, ` +
            `${us(allMs, ROWS)} µs with PostgreSQL's other processes (WAL writer, checkpointer; other databases' too); ` +
            `${Math.round((ROWS * 1000) / wall)} clicks/s on one connection`,
        );
        for (const names of files) for (const file of names) if (file) rmSync(file);
      };
      // The server's own statement (db/postgres/clicks.ts) through its storage layer, for comparison.
      const ours = async (batch, offset, own = false) => {
        await client.query('truncate clicks, click_keys, rollup_queue, attribution_keys');
        await client.query('checkpoint');
        const rows = own ? ownAddresses(rowsFrom(template, ROWS, offset)) : rowsFrom(template, ROWS, offset);
        const server = openPostgres(database.url);
        try {
          // As the server runs it (INSERT_CLICK's batch): one statement, no transaction around it.
          const insert = (row) => server.runWrite(INSERT_CLICK, row);
          // Warm-up: connected, and the statement named (from its third use, `StatementNames`).
          const warm = 3 * batch;
          for (let i = 0; i < warm; i += batch) await Promise.all(rows.slice(i, i + batch).map(insert));
          const before = postgresCpuMs(database.name);
          const started = performance.now();
          for (let i = warm; i < ROWS; i += batch) await Promise.all(rows.slice(i, i + batch).map(insert));
          const wall = performance.now() - started;
          const n = ROWS - warm;
          console.log(
            `PostgreSQL, the server's statement${own ? ', every click from an address of its own' : ''}, ${batch} rows a statement: ${us(postgresCpuMs(database.name) - before, n)} µs ` +
              `of the backends' CPU a click; ${Math.round((n * 1000) / wall)} clicks/s on one connection`,
          );
        } finally {
          await server.close();
        }
      };
      let offset = 0;
      for (const batch of BATCHES) {
        await run(batch, offset);
        await run(batch, offset + ROWS, true);
        await ours(batch, offset + 2 * ROWS);
        await ours(batch, offset + 3 * ROWS, true);
        offset += 4 * ROWS;
      }
    } finally {
      await client.end();
    }
  } finally {
    rmSync(csvDir, { recursive: true, force: true });
    await database.drop();
  }
}

console.log(`Storage floor — ${engine.label}, ${ROWS.toLocaleString('en')} clicks a run; ${machineContext()}`);
if (engine.name === 'sqlite') await sqliteFloor();
else await postgresFloor();
