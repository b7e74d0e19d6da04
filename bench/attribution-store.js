import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { postgresSink, sqliteSink } from './bulk-load.js';
import { AGENTS, createBenchDatabase, source, startServer } from './lib.js';

export const DAY_MS = 86_400_000;

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
const BOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
/**
 * A fresh database (`target`: `{ dataDir }` for SQLite, `{ dataDir, database }` for a PostgreSQL
 * bench database) with an account, a store and `clicks` clicks / `conversions` conversions over
 * the last 90 days. Returns the keys, the store id and recent clicks conversions can name.
 */
export async function generate(target, { clicks, conversions }) {
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
  // The ambiguity counts' rows (api.md §13) the server writes with each click: the bulk load
  // bypassed it, so they are built from the loaded clicks, as migration 0024 does.
  // (A server of a commit from before migration 0024, benched with --ref, has none.)
  const keys = await source('db/repositories/attribution-keys.ts').catch(() => undefined);
  if (keys) {
    const loaded = openDatabase({ databaseUrl: target.database?.url, dataDir: target.dataDir });
    await loaded.write((trx) => keys.rebuildAmbiguityRows(trx, now - 91 * DAY_MS));
    await loaded.close();
  }
  // Recent, non-bot clicks within the attribution window: what conversions in the benchmark
  // name ([fbclid, click time]; `recentFbclids` leaves out those a kept store has aged past).
  const recent = stored.filter((c) => !c.bot && now - c.time < 5 * DAY_MS).map((c) => [c.fbclid, c.time]);
  return { key: account.keys.live, storeId: store.id, recent };
}

/**
 * The fbclids conversions of this run may name: clicks of the last 5 days now, inside the
 * default 7-day attribution window with room to spare. A kept store ages: once fewer than half
 * of them are left (after about two and a half days) it must be built again.
 */
export function recentFbclids(data) {
  const now = Date.now();
  const recent = data.recent.filter(([, time]) => now - time < 5 * DAY_MS).map(([fbclid]) => fbclid);
  if (recent.length === 0 || recent.length < data.recent.length / 2) {
    throw new Error(
      `only ${recent.length} clicks of the store are recent enough to attribute: remove the kept store and build it again`,
    );
  }
  return recent;
}

/** The server on a bench store (`target.env`: more of its environment); `database` is the PostgreSQL database's name (for its backends' CPU). */
export async function startBenchServer(target) {
  const server = await startServer({
    DATA_DIR: target.dataDir,
    ...(target.database && { DATABASE_URL: target.database.url }),
    RATE_LIMIT_RPS: '1000000',
    RATE_LIMIT_BURST: '10000000',
    ...target.env,
  });
  return { ...server, database: target.database?.name };
}

/**
 * A bench store (SQLite data directory, or PostgreSQL bench database plus a data directory for
 * the server's certificate) and how to remove it.
 */
export async function benchTarget(engine, label) {
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
export async function settle(target, server) {
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
export const size = (n) =>
  n >= 1_000_000 && n % 1_000_000 === 0 ? `${n / 1_000_000}M` : n >= 1000 ? `${Math.round(n / 1000)}k` : `${n}`;

/**
 * GET without a time limit (fetch gives up on response headers after 300 s; a first read that
 * folds millions of rows may take longer). Resolves with the status and the parsed body.
 */
export function slowGet(url, headers) {
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

export async function timed(work) {
  const started = performance.now();
  const value = await work();
  return { value, ms: performance.now() - started };
}
