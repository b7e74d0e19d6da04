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
// Prints one table; figures are recorded in bench/README.md. Run: `npm run build && node bench/attribution.js`.

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import SqliteDriver from 'better-sqlite3';
import { build, cannon, root, startServer } from './lib.js';

const dist = (p) => path.join(root, 'server/dist', p);
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

/**
 * A fresh database with an account, a store and `clicks` clicks / `conversions` conversions over
 * the last 90 days. Returns the keys, the store id and recent clicks conversions can name.
 */
async function generate(dataDir, { clicks, conversions }) {
  const { openSqlite } = await import(dist('db/database.js'));
  const { createAccount } = await import(dist('accounts/accounts.js'));
  const { createStore } = await import(dist('stores/stores.js'));
  const database = openSqlite(dataDir);
  await database.migrate();
  const account = await createAccount(database, { email: 'bench@example.com' });
  const tenant = { accountId: account.accountId, livemode: true };
  const store = await createStore(database, tenant, {
    name: 'Bench',
    domain: 'bench.example.com',
    platform: 'custom',
    timezone: 'America/New_York',
  });
  await database.close();

  const raw = new SqliteDriver(path.join(dataDir, 'waytrack.db'));
  // Bulk load only (the server runs with WAL and synchronous=FULL): no journal, no fsync.
  raw.pragma('journal_mode = OFF');
  raw.pragma('synchronous = OFF');
  raw.pragma('cache_size = -1000000');
  // Load without the secondary indexes, then build each once: far faster than random inserts.
  const indexes = raw
    .prepare(
      "select name, sql from sqlite_master where type = 'index' and sql is not null and tbl_name in ('clicks', 'conversions')",
    )
    .all();
  for (const index of indexes) raw.exec(`drop index ${index.name}`);
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
  const insertClick = raw.prepare(`insert into clicks (id, account_id, store_id, livemode, fbclid, click_time, created_at,
    landing_page, referrer, ip_address, user_agent, fingerprint, derived_fingerprint, fbp, fbc, utm_source, utm_medium,
    utm_campaign, utm_content, utm_term, campaign_id, adset_id, ad_id, is_bot)
    values (?, ?, ?, 1, ?, ?, ?, ?, null, ?, ?, ?, ?, null, ?, ?, ?, ?, ?, null, ?, ?, ?, ?)`);
  // Click times in order, so the rowid order is roughly time order, as in production.
  const times = Array.from({ length: clicks }, () => start + Math.floor(random() * (now - start - 60_000))).sort((a, b) => a - b);
  const stored = new Array(clicks);
  raw.transaction(() => {
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
      insertClick.run(
        id,
        tenant.accountId,
        store.id,
        fbclid,
        time,
        time,
        `${page}?${params}`,
        ip,
        ua,
        hex(16),
        createHash('sha256').update(`${ip}|${ua}`).digest('hex'),
        `fb.1.${time}.${fbclid}`,
        tagged ? source : null,
        tagged ? medium : null,
        tagged ? campaign.name : null,
        tagged ? `ad_${adset}_${ad}` : null,
        tagged ? campaign.id : null,
        tagged ? `${campaign.id}${adset}` : null,
        tagged ? `${campaign.id}${adset}${ad}` : null,
        bot ? 1 : 0,
      );
      stored[i] = { id, fbclid, time, bot };
    }
  })();

  const insertConversion = raw.prepare(`insert into conversions (id, account_id, store_id, livemode, event_type, order_id,
    event_id, event_time, created_at, value_minor, currency, products, user_data, email_hash, phone_hash, ip_address,
    user_agent, fingerprint, ref_click_id, ref_fbclid, ref_fbc, fbp, event_source_url, attributed, attributed_click_id,
    attributed_fbclid, confidence, attribution_signal, capi_status, capi_attempts, capi_last_error, capi_sent_at)
    values (?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?, '[]', '{}', ?, null, null, null, null, null, ?, null, null, null, ?, ?, ?, ?, ?,
    'skipped', 0, null, null)`);
  const insertTouchpoint = raw.prepare(
    'insert into touchpoints (conversion_id, click_id, signal, score, click_time) values (?, ?, ?, ?, ?)',
  );
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
  raw.transaction(() => {
    events.forEach((e, n) => {
      const eventType = pick(random, ['Purchase', 'Lead', 'AddToCart'], [80, 15, 5]);
      const currency = random() < 0.02 ? 'EUR' : 'USD';
      const value = eventType === 'Purchase' ? 500 + Math.floor(random() * 30_000) : 0;
      const id = idOf('conv', e.time);
      const orderId = `order_${n}`;
      const winner = stored[e.index];
      insertConversion.run(
        id,
        tenant.accountId,
        store.id,
        eventType,
        orderId,
        orderId,
        e.time,
        e.time,
        value,
        currency,
        createHash('sha256')
          .update(`buyer${Math.floor(random() * conversions)}@example.com`)
          .digest('hex'),
        e.attributed ? winner.fbclid : null,
        e.attributed ? 1 : 0,
        e.attributed ? winner.id : null,
        e.attributed ? winner.fbclid : null,
        e.attributed ? 100 : null,
        e.attributed ? 'explicit' : null,
      );
      if (!e.attributed) return;
      insertTouchpoint.run(id, winner.id, 'explicit', 100, winner.time);
      // up to two earlier clicks of the last week as further touchpoints
      const extra = Math.floor(random() * 3);
      for (let k = 1; k <= extra; k++) {
        const other = stored[e.index - k * 97];
        if (!other || other.bot || e.time - other.time > 7 * DAY_MS) continue;
        insertTouchpoint.run(id, other.id, 'ip', 60, other.time);
      }
    });
    const insertSpend = raw.prepare(`insert into ad_spend (id, account_id, store_id, livemode, date, platform, campaign_id,
      campaign_name, amount_minor, currency, created_at, updated_at) values (?, ?, ?, 1, ?, 'meta', ?, ?, ?, 'USD', ?, ?)`);
    for (let d = 0; d <= 91; d++) {
      const date = new Date(now - d * DAY_MS).toISOString().slice(0, 10);
      for (const c of CAMPAIGNS) {
        insertSpend.run(idOf('spend', now), tenant.accountId, store.id, date, c.id, c.name, 5_000 + c.weight * 2_000, now, now);
      }
    }
  })();
  for (const index of indexes) raw.exec(index.sql);
  raw.pragma('journal_mode = WAL');
  raw.close();
  // Recent, non-bot clicks within the attribution window: what conversions in the benchmark name.
  const recent = stored.filter((c) => !c.bot && now - c.time < 5 * DAY_MS).map((c) => c.fbclid);
  return { key: account.keys.live, storeId: store.id, recent };
}

function startBenchServer(dataDir) {
  return startServer({ DATA_DIR: dataDir, RATE_LIMIT_RPS: '1000000', RATE_LIMIT_BURST: '10000000' });
}

/**
 * POST /v1/track/conversion at a fixed rate; each names a recent click (fbclid) and carries the
 * buyer's IP and user agent, and with `allSignals` also a fingerprint and an email (the email of
 * earlier attributed conversions: the identity signal finds them).
 */
async function conversionLatency(url, data, label, { allSignals = true, readEveryMs = 0 } = {}) {
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
  const result = await cannon({
    url: `${url}/v1/track/conversion`,
    connections: 10,
    duration: WRITE_SECONDS,
    overallRate: 500,
    requests: [request],
  });
  measuring = false;
  await dashboard;
  if (result.non2xx > 0) throw new Error(`${label}: ${result.non2xx} non-2xx responses`);
  reads.sort((a, b) => a - b);
  return { ...result, reads };
}

const latencyNote = (r) =>
  `p99 ${r.exact.p99} ms, ${r.requests.average.toFixed(0)} req/s${r.errors ? `, ${r.errors} errors/timeouts` : ''}`;

async function readLatency(url, data, pathAndQuery) {
  const headers = { authorization: `Bearer ${data.key}` };
  const target = `${url}${pathAndQuery}`;
  const check = await fetch(target, { headers });
  if (check.status !== 200) throw new Error(`${pathAndQuery}: ${check.status} ${await check.text()}`);
  await cannon({ url: target, headers, connections: 4, duration: 1 });
  const result = await cannon({ url: target, headers, connections: 4, duration: READ_SECONDS });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${pathAndQuery}: ${result.non2xx} non-2xx`);
  return result;
}

async function timed(work) {
  const started = performance.now();
  const value = await work();
  return { value, ms: performance.now() - started };
}

async function main() {
  build();
  process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0'; // the bench talks to its own self-signed servers on 127.0.0.1
  const small = mkdtempSync(path.join(tmpdir(), 'waytrack-attr-small-'));
  const large = mkdtempSync(path.join(tmpdir(), 'waytrack-attr-large-'));
  const rows = [];
  const row = (name, value, note = '') => {
    rows.push([name, value, note]);
    console.log(`  ${name}: ${value} ${note}`);
  };
  try {
    console.log('generating 10,000 clicks / 1,000 conversions …');
    const smallData = await generate(small, { clicks: 10_000, conversions: 1_000 });
    console.log('generating 1,000,000 clicks / 100,000 conversions …');
    const gen = await timed(() => generate(large, { clicks: 1_000_000, conversions: 100_000 }));
    const largeData = gen.value;
    row('data generation (1M clicks)', `${(gen.ms / 1000).toFixed(1)} s`);
    // The generator leaves ~1.3 GB of dirty pages for the kernel to write back; measured while
    // that ran, every fsync of the servers below waited behind it (a 10k-store p99 of 324 ms).
    execFileSync('sync');

    let server = await startBenchServer(small);
    // As for the large store below: the first read folds the imported rows into the rollups, and
    // a restart checkpoints what that wrote, so the conversion runs pay for neither.
    await fetch(`${server.url}/v1/analytics/metrics?storeId=${smallData.storeId}&startDate=2000-01-01&endDate=2000-01-01`, {
      headers: { authorization: `Bearer ${smallData.key}` },
    });
    await server.stop();
    server = await startBenchServer(small);
    const smallRun = await conversionLatency(server.url, smallData, 'small');
    const smallPlain = await conversionLatency(server.url, smallData, 'small_plain', { allSignals: false });
    await server.stop();

    server = await startBenchServer(large);
    try {
      const days = (n) => new Date(Date.now() - n * DAY_MS).toISOString().slice(0, 10);
      const range = `storeId=${largeData.storeId}&startDate=${days(89)}&endDate=${days(0)}`;
      const headers = { authorization: `Bearer ${largeData.key}` };
      // The first read folds the 1.1M existing rows into the rollups (the refresher may have begun).
      const first = await timed(() => fetch(`${server.url}/v1/analytics/metrics?${range}`, { headers }).then((r) => r.json()));
      row('initial rollup build (first read)', `${(first.ms / 1000).toFixed(1)} s`, '1.1M rows, once after import');
      const totals = first.value.data;
      row('90-day totals', `${totals.totalClicks} clicks, ${totals.totalConversions} conversions`);
      // That one-off fold wrote tens of megabytes of rollups into the write-ahead log; a restart
      // (a clean shutdown checkpoints the log) measures the conversions in the steady state
      // instead of behind the checkpoint of that import.
      await server.stop();
      server = await startBenchServer(large);

      const largeRun = await conversionLatency(server.url, largeData, 'large');
      const ratio = largeRun.exact.p50 / smallRun.exact.p50;
      row('conversion p50, 10k clicks', `${smallRun.exact.p50} ms`, latencyNote(smallRun));
      row('conversion p50, 1M clicks', `${largeRun.exact.p50} ms`, latencyNote(largeRun));
      row('conversion p50 ratio 1M ÷ 10k', ratio.toFixed(2), 'target ≤ 1.5');
      row('conversion p99 at 500/s, 1M clicks', `${largeRun.exact.p99} ms`, `target ≤ 20 ms (max ${largeRun.exact.max} ms)`);
      // The same while a dashboard reads the store's metrics twice a second.
      const withReads = await conversionLatency(server.url, largeData, 'large_dash', { readEveryMs: 500 });
      const readsP50 = withReads.reads[Math.floor(withReads.reads.length / 2)] ?? Number.NaN;
      row(
        'conversion p99 at 500/s, 1M, metrics read 2×/s',
        `${withReads.exact.p99} ms`,
        `${withReads.reads.length} reads, p50 ${readsP50.toFixed(1)} ms, max ${(withReads.reads.at(-1) ?? Number.NaN).toFixed(1)} ms`,
      );
      // The same with fbclid, IP and user agent only (no fingerprint, no customer data).
      const plainLarge = await conversionLatency(server.url, largeData, 'large_plain', { allSignals: false });
      row('fbclid+ip+ua only: conversion p50, 10k', `${smallPlain.exact.p50} ms`, latencyNote(smallPlain));
      row('fbclid+ip+ua only: conversion p50, 1M', `${plainLarge.exact.p50} ms`, latencyNote(plainLarge));
      row('fbclid+ip+ua only: p50 ratio 1M ÷ 10k', (plainLarge.exact.p50 / smallPlain.exact.p50).toFixed(2), 'target ≤ 1.5');

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
          `p99 ${result.exact.p99} ms, ${result.requests.average.toFixed(0)} req/s (4 conn)`,
        );
      }

      // A time zone change: the store's rollups are rebuilt by the next read.
      const patch = await fetch(`${server.url}/v1/stores/${largeData.storeId}`, {
        method: 'PATCH',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ timezone: 'Europe/Berlin' }),
      });
      if (patch.status !== 200) throw new Error(`PATCH store: ${patch.status}`);
      const rebuilt = await timed(() => fetch(`${server.url}/v1/analytics/metrics?${range}`, { headers }).then((r) => r.json()));
      row('rollup rebuild after a time zone change', `${(rebuilt.ms / 1000).toFixed(1)} s`, '(first read after PATCH)');
    } finally {
      await server.stop();
    }
    console.log('\nWaytrack attribution and analytics bench — 2 cores, embedded database, HTTPS');
    for (const [name, value, note] of rows) console.log(`${name.padEnd(40)} ${String(value).padStart(26)}   ${note}`);
  } finally {
    rmSync(small, { recursive: true, force: true });
    rmSync(large, { recursive: true, force: true });
  }
}

/**
 * `node bench/attribution.js conversions DIR [RUNS]`: the conversion latency alone, RUNS times, on
 * a copy of a data set written by `generate` (each run on a fresh copy and a fresh server whose
 * rollups were built and checkpointed first, as in the full bench). For comparing changes to the
 * write path without regenerating a million clicks each time.
 */
async function conversionRuns(dir, runs) {
  build();
  process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
  const data = JSON.parse(readFileSync(path.join(dir, 'bench.json'), 'utf8'));
  const headers = { authorization: `Bearer ${data.key}` };
  const foldAll = async (dataDir) => {
    const server = await startBenchServer(dataDir);
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
      const server = await startBenchServer(copy);
      try {
        const all = await conversionLatency(server.url, data, `run${run}`);
        const plain = await conversionLatency(server.url, data, `run${run}_plain`, { allSignals: false });
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

if (process.argv[2] === 'generate') {
  // `node bench/attribution.js generate DIR [CLICKS] [CONVERSIONS]`: only write a data set (to
  // explore it, or for `conversions DIR`).
  const [dir, clicks = '1000000', conversions = '100000'] = process.argv.slice(3);
  if (!dir) throw new Error('usage: node bench/attribution.js generate DIR [CLICKS] [CONVERSIONS]');
  const { ms, value } = await timed(() => generate(dir, { clicks: Number(clicks), conversions: Number(conversions) }));
  writeFileSync(path.join(dir, 'bench.json'), JSON.stringify(value));
  console.log(JSON.stringify({ seconds: Math.round(ms / 100) / 10, storeId: value.storeId, key: value.key }));
} else if (process.argv[2] === 'conversions') {
  const [dir, runs = '1'] = process.argv.slice(3);
  if (!dir) throw new Error('usage: node bench/attribution.js conversions DIR [RUNS]');
  await conversionRuns(dir, Number(runs));
} else {
  await main();
}
