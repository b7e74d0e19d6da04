// The large store of bench/attribution.js kept between runs (`--store DIR`): built once, copied per run.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { generate, settle, slowGet, startBenchServer, timed } from './attribution-store.js';
import { createBenchDatabase } from './lib.js';

/**
 * A large store kept in `dir` between runs (`--store DIR`), as building one takes minutes
 * (`clicks`, default 1M; undefined takes what `dir` holds):
 * generated and folded into its rollups once (SQLite: the data directory `dir/data`;
 * PostgreSQL: a database `waytrack_bench_kept_<hash of dir>`, never dropped by the bench), then
 * every run works on a copy of it (`copy(label)`: the data directory copied, or `create database
 * … template` of the kept one), which the run may change and removes. `dir/bench.json` says what
 * it holds, when it was built and how long building and the first fold took.
 */
export async function keptStore(engine, dir, clicks) {
  const file = path.join(dir, 'bench.json');
  let meta = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : undefined;
  if (meta && (meta.engine !== engine.name || (clicks !== undefined && meta.clicks !== clicks))) {
    throw new Error(`${dir} holds a ${meta.engine} store of ${meta.clicks} clicks: name another directory or remove it`);
  }
  if (!meta) {
    clicks ??= 1_000_000;
    mkdirSync(dir, { recursive: true });
    const hash = createHash('sha256').update(path.resolve(dir)).digest('hex').slice(0, 12);
    const database =
      engine.name === 'postgres'
        ? await createBenchDatabase(engine.adminUrl, 'kept', { name: `waytrack_bench_kept_${hash}` })
        : undefined;
    const target = {
      dataDir: database ? mkdtempSync(path.join(tmpdir(), 'waytrack-attr-kept-')) : path.join(dir, 'data'),
      database,
    };
    mkdirSync(target.dataDir, { recursive: true });
    const built = await timed(() => generate(target, { clicks, conversions: clicks / 10 }));
    const data = built.value;
    let server = await startBenchServer(target);
    const fold = await timed(() =>
      slowGet(`${server.url}/v1/analytics/metrics?storeId=${data.storeId}&startDate=2000-01-01&endDate=2000-01-01`, {
        authorization: `Bearer ${data.key}`,
      }),
    );
    if (fold.value.status !== 200) throw new Error(`first read: ${fold.value.status} ${fold.value.body.slice(0, 200)}`);
    server = await settle(target, server);
    await server.stop();
    if (database) rmSync(target.dataDir, { recursive: true, force: true });
    meta = {
      engine: engine.name,
      clicks,
      database: database?.name,
      builtAt: new Date().toISOString(),
      generateSeconds: Math.round(built.ms / 100) / 10,
      foldSeconds: Math.round(fold.ms / 100) / 10,
      data,
    };
    writeFileSync(file, JSON.stringify(meta));
  }
  return {
    meta,
    /** A copy of the kept store for one run, as `benchTarget` makes a fresh one; `copySeconds` is how long copying took. */
    copy: (label) => copyKeptStore(engine, dir, meta, `attr_${label}`),
  };
}

/**
 * A copy of a store kept in `dir` (this file's, or bench/year-kept.js's) for a run that changes it:
 * PostgreSQL `create database … template` of the kept one, SQLite its data directory copied;
 * `copySeconds` is how long copying took, `remove()` drops the copy.
 */
export async function copyKeptStore(engine, dir, meta, label) {
  const started = performance.now();
  const dataDir = mkdtempSync(path.join(tmpdir(), `waytrack-${label}-`));
  let database;
  if (meta.database) {
    database = await createBenchDatabase(engine.adminUrl, label, { template: meta.database });
  } else {
    cpSync(path.join(dir, 'data'), dataDir, { recursive: true });
    execFileSync('sync'); // the copy's dirty pages written back before any fsync is timed
  }
  return {
    dataDir,
    database,
    copySeconds: Math.round((performance.now() - started) / 100) / 10,
    async remove() {
      rmSync(dataDir, { recursive: true, force: true });
      await database?.drop();
    },
  };
}
