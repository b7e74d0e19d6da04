// A year's bench store (bench/year-store.js) kept on disk between runs (`--store DIR`), or built
// for one run: what bench/year.js reads and bench/retention.js expires.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { settle, slowGet, startBenchServer, timed } from './attribution-store.js';
import { copyKeptStore } from './kept-store.js';
import { createBenchDatabase, source } from './lib.js';
import { DAY_MS } from './year-shape.js';
import { generateYear } from './year-store.js';

/** The store: kept in `dir` (built when missing) or a fresh one removed at the end. */
export async function yearStore(engine, dir, clicks) {
  const file = dir && path.join(dir, 'year.json');
  if (file && existsSync(file)) {
    const meta = JSON.parse(readFileSync(file, 'utf8'));
    if (meta.engine !== engine.name) throw new Error(`${dir} holds a ${meta.engine} store: name another directory`);
    const url = meta.database && new URL(engine.adminUrl);
    if (url) url.pathname = `/${meta.database}`;
    const target = {
      dataDir: meta.database ? mkdtempSync(path.join(tmpdir(), 'waytrack-year-')) : path.join(dir, 'data'),
      database: meta.database && { name: meta.database, url: url.toString(), connect: connectTo(url.toString()) },
    };
    return {
      meta,
      target,
      remove: async () => meta.database && rmSync(target.dataDir, { recursive: true, force: true }),
      // A copy for a run that changes it (bench/retention.js).
      copy: (label) => copyKeptStore(engine, dir, meta, `year_${label}`),
    };
  }
  if (dir) mkdirSync(dir, { recursive: true });
  const hash = dir && createHash('sha256').update(path.resolve(dir)).digest('hex').slice(0, 12);
  const database =
    engine.name === 'postgres'
      ? await createBenchDatabase(engine.adminUrl, 'year', dir ? { name: `waytrack_bench_year_${hash}` } : {})
      : undefined;
  const dataDir = dir && !database ? path.join(dir, 'data') : mkdtempSync(path.join(tmpdir(), 'waytrack-year-'));
  mkdirSync(dataDir, { recursive: true });
  const target = { dataDir, database };
  console.log(`building a year's store of ${clicks.toLocaleString('en')} clicks (${engine.label}) …`);
  const built = await timed(() => generateYear(target, { clicks }));
  let server = await startBenchServer(target);
  const data = built.value;
  // The first reads fold everything queued: the rollups (any analytics read), then the cohorts'
  // customers (a cohorts read), so that no fold runs in the background while the reads are timed.
  const fold = await timed(async () => {
    const auth = { authorization: `Bearer ${data.key}` };
    const empty = `storeId=${data.storeId}&startDate=2000-01-01&endDate=2000-01-01`;
    const rollups = await slowGet(`${server.url}/v1/analytics/metrics?${empty}`, auth);
    return rollups.status === 200 ? slowGet(`${server.url}/v1/analytics/cohorts?${empty}`, auth) : rollups;
  });
  if (fold.value.status !== 200) {
    // Stopped first: left running, its refresher would go on folding the store beside the next run.
    await server.stop();
    throw new Error(`first read: ${fold.value.status} ${fold.value.body.slice(0, 200)}`);
  }
  server = await settle(target, server);
  await server.stop();
  const meta = {
    engine: engine.name,
    clicks,
    database: database?.name,
    builtAt: new Date(data.builtAt).toISOString(),
    generateSeconds: Math.round(built.ms / 100) / 10,
    foldSeconds: Math.round(fold.ms / 100) / 10,
    data,
  };
  if (file) writeFileSync(file, JSON.stringify(meta));
  return {
    meta,
    target,
    async remove() {
      if (!dir) await database?.drop();
      if (!dir || database) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The store's clicks with an fbclid from its last 5 days, as [fbclid, time] (what conversion-load.js names). */
export async function recentClicks(target, data) {
  const { openDatabase } = await source('db/open.ts');
  const database = openDatabase({ databaseUrl: target.database?.url, dataDir: target.dataDir });
  try {
    const rows = await database.read
      .selectFrom('clicks')
      .select(['fbclid', 'click_time'])
      .where('store_id', '=', data.storeId)
      .where('livemode', '=', 1)
      .where('click_time', '>=', Date.now() - 4 * DAY_MS)
      .where('is_bot', '=', 0)
      .where('fbclid', 'is not', null)
      .where('fbclid', 'not like', '%:%') // the key of a click without an fbclid is `<kind>:<its id>`
      .limit(20_000)
      .execute();
    return rows.map((r) => [r.fbclid, Number(r.click_time)]);
  } finally {
    await database.close();
  }
}

function connectTo(url) {
  return async () => {
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    return client;
  };
}
