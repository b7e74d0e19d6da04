// node bench/attribution.js — attribution cost vs data size, and analytics over a large store.
//
// Writes two fresh databases directly (fast bulk insert, bypassing the API): 10,000 clicks and
// 1,000,000 clicks / 100,000 conversions over 90 days, with a realistic shape (a few sources,
// 10 campaigns × 3 ad sets × 3 ads, 20 landing pages, 2 % bots, 60 % of conversions attributed
// with 1–3 touchpoints, daily spend per campaign). Then it starts the real server (compiled,
// HTTPS) on each and drives it with autocannon from this process:
//   - POST /v1/track/conversion at a fixed 500 req/s: p50 and p99, small vs large database;
//   - GET metrics, timeseries (day) and breakdown (campaign_id; last_click and linear) over
//     90 days: p50 each.
// Prints one table; figures are recorded in bench/README.md.
//
//   node bench/attribution.js                         embedded SQLite (it builds the server first)
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node bench/attribution.js
//                                                     PostgreSQL: two fresh databases
//                                                     waytrack_bench_attr_… on that server, dropped at the end
//   … --engine sqlite|postgres                        choose explicitly
//   … --clicks 200000                                 a smaller large store (conversions: a tenth)
//   node bench/attribution.js fold [CLICKS]           only the initial rollup build (default 200,000 clicks)

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import SqliteDriver from 'better-sqlite3';
import pg from 'pg';
import {
  argValue,
  benchEngine,
  build,
  cannon,
  createBenchDatabase,
  machineContext,
  postgresContext,
  source,
  startServer,
  waitForQuiet,
  withCpu,
} from './lib.js';

const DAY_MS = 86_400_000;
const READ_SECONDS = Number(process.env.BENCH_READ_SECONDS ?? 6);
const WRITE_SECONDS = Number(process.env.BENCH_WRITE_SECONDS ?? 10);

/** Deterministic pseudo-random numbers, so every run writes the same data. */
function rng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = (random, items, weights) => {
  if (!weights) return items[Math.floor(random() * items.length)];
  let r = random() * weights.reduce((a, b) => a + b, 0);
  for (let i = 0; i < items.length; i++) {
    r -= weights[i];
    if (r < 0) return items[i];
  }
  return items[items.length - 1];
};

const SOURCES = [
  ['facebook', 'paid_social', 60],
  ['instagram', 'paid_social', 25],
  ['google', 'cpc', 10],
  ['newsletter', 'email', 5],
];
const CAMPAIGNS = Array.from({ length: 10 }, (_, i) => ({ id: `2385${1000 + i}`, name: `campaign_${i}`, weight: 10 - i }));
const PAGES = Array.from({ length: 20 }, (_, i) => `https://bench.example.com/products/item-${i}`);
const AGENTS = [
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Mobile Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36',
];
const BOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';

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
const TABLES = {
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
const QUEUE_EVENTS = `insert into rollup_queue (id, store_id, kind, version)
  select id, store_id, 'click', 0 from clicks union all select id, store_id, 'conversion', 0 from conversions`;

/**
 * Bulk load into the embedded database (the server runs with WAL and its own fsyncs): no
 * journal, no fsync, secondary indexes dropped and built once at the end.
 */
function sqliteSink(dataDir) {
  const raw = new SqliteDriver(path.join(dataDir, 'waytrack.db'));
  raw.pragma('journal_mode = OFF');
  raw.pragma('synchronous = OFF');
  raw.pragma('cache_size = -1000000');
  const indexes = raw
    .prepare(
      "select name, sql from sqlite_master where type = 'index' and sql is not null and tbl_name in ('clicks', 'conversions')",
    )
    .all();
  for (const index of indexes) raw.exec(`drop index ${index.name}`);
  const statements = Object.fromEntries(
    Object.entries(TABLES).map(([table, columns]) => [
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
      raw.exec(QUEUE_EVENTS);
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
 */
async function postgresSink(database) {
  const client = await database.connect();
  await client.query('set synchronous_commit = off');
  await client.query("set maintenance_work_mem = '512MB'");
  try {
    // Skip the per-row foreign key triggers of the load (superuser only; else they just run).
    await client.query('set session_replication_role = replica');
  } catch {}
  const casts = {};
  for (const [table, columns] of Object.entries(TABLES)) {
    const { rows } = await client.query(
      'select column_name, udt_name from information_schema.columns where table_schema = current_schema() and table_name = $1',
      [table],
    );
    const types = new Map(rows.map((r) => [r.column_name, r.udt_name]));
    casts[table] = columns.map((c, i) => `$${i + 1}::${types.get(c)}[]`).join(', ');
  }
  const indexes = (
    await client.query(`select indexname, indexdef from pg_indexes where schemaname = current_schema()
      and tablename in ('clicks', 'conversions', 'touchpoints')
      and indexname not in (select conname from pg_constraint)`)
  ).rows;
  for (const index of indexes) await client.query(`drop index ${pg.escapeIdentifier(index.indexname)}`);
  await client.query('begin');
  const buffers = Object.fromEntries(Object.keys(TABLES).map((table) => [table, []]));
  const flush = async (table) => {
    const rows = buffers[table];
    if (rows.length === 0) return;
    buffers[table] = [];
    const columns = TABLES[table];
    const arrays = columns.map((_, i) => rows.map((r) => r[i]));
    await client.query(`insert into ${table} (${columns.join(', ')}) select * from unnest(${casts[table]})`, arrays);
  };
  return {
    add(table, values) {
      buffers[table].push(values);
      return buffers[table].length >= 5_000 ? flush(table) : undefined;
    },
    async finish() {
      for (const table of Object.keys(TABLES)) await flush(table);
      await client.query(QUEUE_EVENTS);
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

/**
 * A fresh database (`target`: `{ dataDir }` for SQLite, `{ dataDir, database }` for a PostgreSQL
 * bench database) with an account, a store and `clicks` clicks / `conversions` conversions over
 * the last 90 days. Returns the keys, the store id and recent clicks conversions can name.
 */
async function generate(target, { clicks, conversions }) {
  const { openDatabase } = await source('db/open.ts');
  const { createAccount } = await source('accounts/accounts.ts');
  const { createStore } = await source('stores/stores.ts');
  const database = openDatabase({ databaseUrl: target.database?.url, dataDir: target.dataDir });
  await database.migrate();
  const account = await createAccount(database, { email: 'bench@example.com' });
  const tenant = { accountId: account.accountId, livemode: true };
  // No Conversions API token, so no secrets box is needed.
  const store = await createStore(database, tenant, {
    name: 'Bench',
    domain: 'bench.example.com',
    platform: 'custom',
    timezone: 'America/New_York',
  });
  await database.close();

  const sink = target.database ? await postgresSink(target.database) : sqliteSink(target.dataDir);
  const add = async (table, values) => {
    const flushing = sink.add(table, values);
    if (flushing) await flushing;
  };
  const random = rng(clicks);
  const hex = (n) => {
    let out = '';
    while (out.length < n)
      out += Math.floor(random() * 0x100000000)
        .toString(16)
        .padStart(8, '0');
    return out.slice(0, n);
  };
  // Time-sortable ids like the service's (prefix, 10 base32 time digits, 16 random), from the seeded generator.
  const idOf = (prefix, ms) => {
    const alphabet = '0123456789abcdefghjkmnpqrstvwxyz';
    let time = '';
    for (let rest = ms, i = 0; i < 10; i++, rest = Math.floor(rest / 32)) time = alphabet[rest % 32] + time;
    let tail = '';
    for (let i = 0; i < 16; i++) tail += alphabet[Math.floor(random() * 32)];
    return `${prefix}_${time}${tail}`;
  };
  const now = Date.now();
  const start = now - 90 * DAY_MS + 3_600_000;
  // Click times in order, so the insertion order is roughly time order, as in production.
  const times = Array.from({ length: clicks }, () => start + Math.floor(random() * (now - start - 60_000))).sort((a, b) => a - b);
  const stored = new Array(clicks);
  for (let i = 0; i < clicks; i++) {
    const time = times[i];
    const [source, medium] = pick(
      random,
      SOURCES,
      SOURCES.map((s) => s[2]),
    );
    const campaign = pick(
      random,
      CAMPAIGNS,
      CAMPAIGNS.map((c) => c.weight),
    );
    const adset = Math.floor(random() * 3);
    const ad = Math.floor(random() * 3);
    const fbclid = `IwAR${String(i).padStart(7, '0')}_${hex(10)}`;
    const ip = `10.${Math.floor(random() * 256)}.${Math.floor(random() * 256)}.${Math.floor(random() * 256)}`;
    const bot = random() < 0.02;
    const ua = bot ? BOT : pick(random, AGENTS);
    const tagged = random() < 0.9; // some clicks arrive without campaign parameters
    const page = pick(random, PAGES);
    const params = new URLSearchParams(
      tagged
        ? {
            utm_source: source,
            utm_medium: medium,
            utm_campaign: campaign.name,
            utm_content: `ad_${adset}_${ad}`,
            campaign_id: campaign.id,
            adset_id: `${campaign.id}${adset}`,
            ad_id: `${campaign.id}${adset}${ad}`,
            fbclid,
          }
        : { fbclid },
    );
    const id = idOf('clk', time);
    // in CLICK_COLUMNS order
    await add('clicks', [
      id,
      tenant.accountId,
      store.id,
      1,
      fbclid,
      time,
      time,
      `${page}?${params}`,
      null,
      ip,
      ua,
      hex(16),
      createHash('sha256').update(`${ip}|${ua}`).digest('hex'),
      null,
      `fb.1.${time}.${fbclid}`,
      tagged ? source : null,
      tagged ? medium : null,
      tagged ? campaign.name : null,
      tagged ? `ad_${adset}_${ad}` : null,
      null,
      tagged ? campaign.id : null,
      tagged ? `${campaign.id}${adset}` : null,
      tagged ? `${campaign.id}${adset}${ad}` : null,
      bot ? 1 : 0,
    ]);
    stored[i] = { id, fbclid, time, bot };
  }

  const events = Array.from({ length: conversions }, () => {
    const attributed = random() < 0.6;
    let index = Math.floor(random() * clicks);
    while (stored[index].bot) index = (index + 1) % clicks;
    const click = stored[index];
    const time = attributed
      ? Math.min(now - 60_000, click.time + Math.floor(random() * 3 * DAY_MS))
      : start + Math.floor(random() * (now - start - 60_000));
    return { attributed, index, time };
  }).sort((a, b) => a.time - b.time);
  for (let n = 0; n < events.length; n++) {
    const e = events[n];
    const eventType = pick(random, ['Purchase', 'Lead', 'AddToCart'], [80, 15, 5]);
    const currency = random() < 0.02 ? 'EUR' : 'USD';
    const value = eventType === 'Purchase' ? 500 + Math.floor(random() * 30_000) : 0;
    const id = idOf('conv', e.time);
    const orderId = `order_${n}`;
    const winner = stored[e.index];
    const emailHash = createHash('sha256')
      .update(`buyer${Math.floor(random() * conversions)}@example.com`)
      .digest('hex');
    // in CONVERSION_COLUMNS order
    await add('conversions', [
      id,
      tenant.accountId,
      store.id,
      1,
      eventType,
      orderId,
      orderId,
      e.time,
      e.time,
      value,
      currency,
      '[]',
      '{}',
      emailHash,
      null,
      null,
      null,
      null,
      null,
      e.attributed ? winner.fbclid : null,
      null,
      null,
      null,
      e.attributed ? 1 : 0,
      e.attributed ? winner.id : null,
      e.attributed ? winner.fbclid : null,
      e.attributed ? 100 : null,
      e.attributed ? 'explicit' : null,
      'skipped',
      0,
      null,
      null,
    ]);
    if (!e.attributed) continue;
    await add('touchpoints', [id, winner.id, 'explicit', 100, winner.time]);
    // up to two earlier clicks of the last week as further touchpoints
    const extra = Math.floor(random() * 3);
    for (let k = 1; k <= extra; k++) {
      const other = stored[e.index - k * 97];
      if (!other || other.bot || e.time - other.time > 7 * DAY_MS) continue;
      await add('touchpoints', [id, other.id, 'ip', 60, other.time]);
    }
  }
  for (let d = 0; d <= 91; d++) {
    const date = new Date(now - d * DAY_MS).toISOString().slice(0, 10);
    for (const c of CAMPAIGNS) {
      await add('ad_spend', [
        idOf('spend', now),
        tenant.accountId,
        store.id,
        1,
        date,
        'meta',
        c.id,
        c.name,
        5_000 + c.weight * 2_000,
        'USD',
        now,
        now,
      ]);
    }
  }
  await sink.finish();
  // Recent, non-bot clicks within the attribution window: what conversions in the benchmark name.
  const recent = stored.filter((c) => !c.bot && now - c.time < 5 * DAY_MS).map((c) => c.fbclid);
  return { key: account.keys.live, storeId: store.id, recent };
}

function startBenchServer(target) {
  return startServer({
    DATA_DIR: target.dataDir,
    ...(target.database && { DATABASE_URL: target.database.url }),
    RATE_LIMIT_RPS: '1000000',
    RATE_LIMIT_BURST: '10000000',
  });
}

/**
 * A bench store (SQLite data directory, or PostgreSQL bench database plus a data directory for
 * the server's certificate) and how to remove it.
 */
async function benchTarget(engine, label) {
  const dataDir = mkdtempSync(path.join(tmpdir(), `waytrack-attr-${label}-`));
  const database = engine.name === 'postgres' ? await createBenchDatabase(engine.adminUrl, `attr_${label}`) : undefined;
  return {
    dataDir,
    database,
    async remove() {
      rmSync(dataDir, { recursive: true, force: true });
      await database?.drop();
    },
  };
}

/**
 * After the first read folded the imported rows into the rollups: a restart, so conversions are
 * measured in the steady state rather than behind that one-off fold. On SQLite a clean shutdown
 * checkpoints the write-ahead log the fold filled; on PostgreSQL the fold left ~1.1M deleted
 * queue rows and fresh rollup tables, which VACUUM ANALYZE cleans and describes (autovacuum
 * would, minutes later), and CHECKPOINT writes back.
 */
async function settle(target, server) {
  await server.stop();
  if (target.database) {
    const client = await target.database.connect();
    try {
      await client.query('vacuum analyze');
      await client.query('checkpoint');
    } finally {
      await client.end();
    }
  }
  return startBenchServer(target);
}

/** 1000000 → '1M', 200000 → '200k'. */
const size = (n) =>
  n >= 1_000_000 && n % 1_000_000 === 0 ? `${n / 1_000_000}M` : n >= 1000 ? `${Math.round(n / 1000)}k` : `${n}`;

/**
 * POST /v1/track/conversion at a fixed rate; each names a recent click (fbclid) and carries the
 * buyer's IP and user agent, and with `allSignals` also a fingerprint and an email (the email of
 * earlier attributed conversions: the identity signal finds them).
 */
async function conversionLatency(server, data, label, { allSignals = true, readEveryMs = 0 } = {}) {
  const { url } = server;
  const headers = { authorization: `Bearer ${data.key}`, 'content-type': 'application/json' };
  let n = 0;
  const body = () => {
    const i = n++;
    return JSON.stringify({
      storeId: data.storeId,
      eventType: 'Purchase',
      orderId: `${label}_${process.pid}_${i}`,
      eventValue: 10 + (i % 200),
      currency: 'USD',
      fbclid: data.recent[(i * 7919) % data.recent.length],
      ipAddress: `10.1.${(i >> 8) & 255}.${i & 255}`,
      userAgent: AGENTS[i % AGENTS.length],
      ...(allSignals && { fingerprint: `fp${i}`, customerData: { email: `buyer${i}@example.com` } }),
    });
  };
  const request = { method: 'POST', headers, setupRequest: (req) => ({ ...req, body: body() }) };
  // warm-up: compiled statements, caches, JIT
  await cannon({ url: `${url}/v1/track/conversion`, connections: 10, duration: 2, overallRate: 500, requests: [request] });
  // With `readEveryMs`, a dashboard reads the store's metrics meanwhile (each read first folds
  // the rows stored since the rollups were last brought up to date).
  const reads = [];
  let measuring = true;
  const dashboard = (async () => {
    while (readEveryMs > 0 && measuring) {
      await new Promise((resolve) => setTimeout(resolve, readEveryMs));
      const started = performance.now();
      const response = await fetch(`${url}/v1/analytics/metrics?storeId=${data.storeId}`, { headers });
      if (response.status !== 200) throw new Error(`${label}: metrics read ${response.status}`);
      reads.push(performance.now() - started);
    }
  })();
  const { value: result, cpu } = await withCpu({ server: server.child.pid, client: process.pid }, () =>
    cannon({
      url: `${url}/v1/track/conversion`,
      connections: 10,
      duration: WRITE_SECONDS,
      overallRate: 500,
      requests: [request],
    }),
  );
  measuring = false;
  await dashboard;
  // Non-2xx answers are reported in the table (latencyNote), not hidden: a 503 under load is a finding.
  reads.sort((a, b) => a - b);
  // CPU per conversion, µs (a share of one core over the run ÷ requests per second).
  const perRequest = (share) => Math.round((share * 10_000) / result.requests.average);
  const cost = { server: perRequest(cpu.server), postgres: perRequest(cpu.postgres), client: perRequest(cpu.client) };
  return { ...result, reads, cpu, cost };
}

const latencyNote = (r) =>
  `p99 ${r.exact.p99} ms, ${r.requests.average.toFixed(0)} req/s${r.non2xx ? `, ${r.non2xx} NON-2XX (${statusList(r)})` : ''}` +
  `${r.errors ? `, ${r.errors} errors/timeouts` : ''}${r.cost ? `; CPU/request ${costNote(r.cost)}` : ''}`;

/** CPU per request, µs: the server's, PostgreSQL's (when it runs) and the client's (autocannon, in this process). */
const costNote = (cost) =>
  `server ${cost.server} µs${cost.postgres > 0 ? `, PostgreSQL ${cost.postgres} µs` : ''}, client ${cost.client} µs`;

/** The status codes of a run, e.g. "200×4990 503×10". */
const statusList = (r) =>
  Object.entries(r.statusCodeStats ?? {})
    .map(([code, { count }]) => `${code}×${count}`)
    .join(' ');

async function readLatency(url, data, pathAndQuery) {
  const headers = { authorization: `Bearer ${data.key}` };
  const target = `${url}${pathAndQuery}`;
  const check = await fetch(target, { headers });
  if (check.status !== 200) throw new Error(`${pathAndQuery}: ${check.status} ${await check.text()}`);
  await cannon({ url: target, headers, connections: 4, duration: 1 });
  const result = await cannon({ url: target, headers, connections: 4, duration: READ_SECONDS });
  return result;
}

/**
 * GET without a time limit (fetch gives up on response headers after 300 s; a first read that
 * folds millions of rows may take longer). Resolves with the status and the parsed body.
 */
function slowGet(url, headers) {
  return new Promise((resolve, reject) => {
    const request = https.get(url, { headers, rejectUnauthorized: false }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => {
        body += chunk;
      });
      response.on('end', () => resolve({ status: response.statusCode, body }));
    });
    request.on('error', reject);
  });
}

async function timed(work) {
  const started = performance.now();
  const value = await work();
  return { value, ms: performance.now() - started };
}

async function main() {
  const engine = benchEngine();
  const clicks = Number(argValue('--clicks') ?? 1_000_000);
  const big = size(clicks);
  const code = build();
  process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0'; // the bench talks to its own self-signed servers on 127.0.0.1
  const context = [`server: ${code}`, machineContext()];
  if (engine.name === 'postgres') context.push(await postgresContext(engine.adminUrl));
  const small = await benchTarget(engine, 'small');
  const large = await benchTarget(engine, 'large');
  const rows = [];
  const row = (name, value, note = '') => {
    rows.push([name, value, note]);
    console.log(`  ${name}: ${value} ${note}`);
  };
  const quietNote = async (runs) => {
    const quiet = await waitForQuiet();
    context.push(
      quiet.quiet
        ? `machine quiet before the ${runs} (${quiet.busy} % of a core busy; waited ${quiet.waited} s)`
        : `machine NOT quiet before the ${runs}: ${quiet.busy} % of a core busy after waiting ${quiet.waited} s (other processes)`,
    );
  };
  let server;
  try {
    console.log('generating 10,000 clicks / 1,000 conversions …');
    const smallData = await generate(small, { clicks: 10_000, conversions: 1_000 });
    console.log(`generating ${clicks.toLocaleString('en')} clicks / ${(clicks / 10).toLocaleString('en')} conversions …`);
    const gen = await timed(() => generate(large, { clicks, conversions: clicks / 10 }));
    const largeData = gen.value;
    row(`data generation (${big} clicks)`, `${(gen.ms / 1000).toFixed(1)} s`, 'bulk load, bypassing the API');

    server = await startBenchServer(small);
    // As for the large store below: the first read folds the imported rows into the rollups, and
    // `settle` restarts the server, so the conversion runs pay for neither.
    await fetch(`${server.url}/v1/analytics/metrics?storeId=${smallData.storeId}&startDate=2000-01-01&endDate=2000-01-01`, {
      headers: { authorization: `Bearer ${smallData.key}` },
    });
    server = await settle(small, server);
    await quietNote('10k-store runs');
    const smallRun = await conversionLatency(server, smallData, 'small');
    const smallPlain = await conversionLatency(server, smallData, 'small_plain', { allSignals: false });
    await server.stop();

    server = await startBenchServer(large);
    const days = (n) => new Date(Date.now() - n * DAY_MS).toISOString().slice(0, 10);
    const range = `storeId=${largeData.storeId}&startDate=${days(89)}&endDate=${days(0)}`;
    const headers = { authorization: `Bearer ${largeData.key}` };
    // The first read folds the existing rows into the rollups (the refresher may have begun).
    const first = await timed(() => fetch(`${server.url}/v1/analytics/metrics?${range}`, { headers }).then((r) => r.json()));
    row(
      'initial rollup build (first read)',
      `${(first.ms / 1000).toFixed(1)} s`,
      `${size(clicks * 1.1)} rows, once after import`,
    );
    const totals = first.value.data;
    if (!totals) throw new Error(`first metrics read failed: ${JSON.stringify(first.value)}`);
    row('90-day totals', `${totals.totalClicks} clicks, ${totals.totalConversions} conversions`);
    server = await settle(large, server);
    await quietNote(`${big}-store runs`);

    const largeRun = await conversionLatency(server, largeData, 'large');
    const ratio = largeRun.exact.p50 / smallRun.exact.p50;
    row('conversion p50, 10k clicks', `${smallRun.exact.p50} ms`, latencyNote(smallRun));
    row(`conversion p50, ${big} clicks`, `${largeRun.exact.p50} ms`, latencyNote(largeRun));
    row(`conversion p50 ratio ${big} ÷ 10k`, ratio.toFixed(2), 'target ≤ 1.5');
    row(`conversion p99 at 500/s, ${big} clicks`, `${largeRun.exact.p99} ms`, `target ≤ 20 ms (max ${largeRun.exact.max} ms)`);
    // The same while a dashboard reads the store's metrics twice a second.
    const withReads = await conversionLatency(server, largeData, 'large_dash', { readEveryMs: 500 });
    const readsP50 = withReads.reads[Math.floor(withReads.reads.length / 2)] ?? Number.NaN;
    row(
      `conversion p99 at 500/s, ${big}, metrics read 2×/s`,
      `${withReads.exact.p99} ms`,
      `${withReads.reads.length} reads, p50 ${readsP50.toFixed(1)} ms, max ${(withReads.reads.at(-1) ?? Number.NaN).toFixed(1)} ms`,
    );
    // The same with fbclid, IP and user agent only (no fingerprint, no customer data).
    const plainLarge = await conversionLatency(server, largeData, 'large_plain', { allSignals: false });
    row('fbclid+ip+ua only: conversion p50, 10k', `${smallPlain.exact.p50} ms`, latencyNote(smallPlain));
    row(`fbclid+ip+ua only: conversion p50, ${big}`, `${plainLarge.exact.p50} ms`, latencyNote(plainLarge));
    row(`fbclid+ip+ua only: p50 ratio ${big} ÷ 10k`, (plainLarge.exact.p50 / smallPlain.exact.p50).toFixed(2), 'target ≤ 1.5');

    for (const [name, query] of [
      ['metrics 90 days', `/v1/analytics/metrics?${range}`],
      ['timeseries day 90 days', `/v1/analytics/timeseries?${range}&interval=day`],
      [
        'timeseries hour 31 days',
        `/v1/analytics/timeseries?storeId=${largeData.storeId}&startDate=${days(30)}&endDate=${days(0)}&interval=hour`,
      ],
      ['breakdown campaign_id last_click', `/v1/analytics/breakdown?${range}&by=campaign_id&model=last_click`],
      ['breakdown campaign_id linear', `/v1/analytics/breakdown?${range}&by=campaign_id&model=linear`],
      ['breakdown ad_id time_decay', `/v1/analytics/breakdown?${range}&by=ad_id&model=time_decay&limit=100`],
    ]) {
      const result = await readLatency(server.url, largeData, query);
      row(
        `${name} p50`,
        `${result.exact.p50} ms`,
        `${name === 'metrics 90 days' ? 'target ≤ 20 ms; ' : ''}${latencyNote(result)} (4 conn)`,
      );
    }

    // A time zone change: the store's rollups are rebuilt by the next read.
    const patch = await fetch(`${server.url}/v1/stores/${largeData.storeId}`, {
      method: 'PATCH',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ timezone: 'Europe/Berlin' }),
    });
    if (patch.status !== 200) throw new Error(`PATCH store: ${patch.status}`);
    const rebuilt = await timed(() => slowGet(`${server.url}/v1/analytics/metrics?${range}`, headers));
    if (rebuilt.value.status === 200) {
      row('rollup rebuild after a time zone change', `${(rebuilt.ms / 1000).toFixed(1)} s`, '(first read after PATCH)');
    } else {
      row(
        'rollup rebuild after a time zone change',
        `HTTP ${rebuilt.value.status}`,
        `after ${(rebuilt.ms / 1000).toFixed(1)} s: ${rebuilt.value.body.slice(0, 160)}`,
      );
    }
    console.log(`\nWaytrack attribution and analytics bench — ${engine.label}, HTTPS`);
    for (const line of context) console.log(line);
    for (const [name, value, note] of rows) console.log(`${name.padEnd(44)} ${String(value).padStart(26)}   ${note}`);
  } finally {
    await server?.stop();
    await small.remove();
    await large.remove();
  }
}

/**
 * `node bench/attribution.js conversions DIR [RUNS]`: the conversion latency alone, RUNS times, on
 * a copy of a data set written by `generate` (embedded SQLite only; each run on a fresh copy and a fresh server whose
 * rollups were built and checkpointed first, as in the full bench). For comparing changes to the
 * write path without regenerating a million clicks each time.
 */
async function conversionRuns(dir, runs) {
  build();
  process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
  const data = JSON.parse(readFileSync(path.join(dir, 'bench.json'), 'utf8'));
  const headers = { authorization: `Bearer ${data.key}` };
  const foldAll = async (dataDir) => {
    const server = await startBenchServer({ dataDir });
    await fetch(`${server.url}/v1/analytics/metrics?storeId=${data.storeId}&startDate=2000-01-01&endDate=2000-01-01`, {
      headers,
    });
    await server.stop(); // a clean shutdown checkpoints what the fold wrote
  };
  if (!data.folded) {
    await foldAll(dir); // once per data set: the imported rows into the rollups
    writeFileSync(path.join(dir, 'bench.json'), JSON.stringify({ ...data, folded: true }));
  }
  for (let run = 1; run <= runs; run++) {
    const copy = mkdtempSync(path.join(tmpdir(), 'waytrack-attr-copy-'));
    try {
      cpSync(dir, copy, { recursive: true });
      await foldAll(copy); // nothing to fold unless the rollup code changed since
      const server = await startBenchServer({ dataDir: copy });
      try {
        const all = await conversionLatency(server, data, `run${run}`);
        const plain = await conversionLatency(server, data, `run${run}_plain`, { allSignals: false });
        console.log(
          `run ${run}: all signals p50 ${all.exact.p50} ms, ${latencyNote(all)}, max ${all.exact.max} ms; ` +
            `fbclid+ip+ua p50 ${plain.exact.p50} ms, ${latencyNote(plain)}`,
        );
      } finally {
        await server.stop();
      }
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  }
}

/** The initial rollup build alone: generate CLICKS clicks (and a tenth as many conversions), time the first read. */
async function foldRun(clicks) {
  const engine = benchEngine();
  const code = build();
  process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
  const target = await benchTarget(engine, 'fold');
  let server;
  try {
    const data = await generate(target, { clicks, conversions: clicks / 10 });
    server = await startBenchServer(target);
    const { value, cpu, wallMs } = await withCpu({ server: server.child.pid }, () =>
      slowGet(`${server.url}/v1/analytics/metrics?storeId=${data.storeId}&startDate=2000-01-01&endDate=2000-01-01`, {
        authorization: `Bearer ${data.key}`,
      }),
    );
    if (value.status !== 200) throw new Error(`first read: ${value.status} ${value.body.slice(0, 200)}`);
    const shares =
      engine.name === 'postgres' ? `instance ${cpu.server} %, PostgreSQL ${cpu.postgres} %` : `server ${cpu.server} %`;
    console.log(
      `${engine.label}, server ${code}: initial rollup build of ${size(clicks * 1.1)} rows in ${(wallMs / 1000).toFixed(1)} s ` +
        `(CPU, % of a core: ${shares})`,
    );
  } finally {
    await server?.stop();
    await target.remove();
  }
}

if (process.argv[2] === 'generate') {
  // `node bench/attribution.js generate DIR [CLICKS] [CONVERSIONS]`: only write a data set (to
  // explore it, or for `conversions DIR`).
  const [dir, clicks = '1000000', conversions = '100000'] = process.argv.slice(3);
  if (!dir) throw new Error('usage: node bench/attribution.js generate DIR [CLICKS] [CONVERSIONS]');
  const { ms, value } = await timed(() =>
    generate({ dataDir: dir }, { clicks: Number(clicks), conversions: Number(conversions) }),
  );
  writeFileSync(path.join(dir, 'bench.json'), JSON.stringify(value));
  console.log(JSON.stringify({ seconds: Math.round(ms / 100) / 10, storeId: value.storeId, key: value.key }));
} else if (process.argv[2] === 'fold') {
  // `node bench/attribution.js fold [CLICKS]`: only the initial rollup build (the first read after
  // a bulk import) on a fresh data set of the configured engine, for work on the fold path.
  await foldRun(Number(process.argv[3] ?? 200_000));
} else if (process.argv[2] === 'conversions') {
  const [dir, runs = '1'] = process.argv.slice(3);
  if (!dir) throw new Error('usage: node bench/attribution.js conversions DIR [RUNS]');
  await conversionRuns(dir, Number(runs));
} else {
  await main();
}
