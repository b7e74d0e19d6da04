// node bench/store-lookup-cpu.js DIR — what one store lookup costs per conversion (the statement
// a cached store saves): 5,000 `requireActiveStore` calls, 10 at a time, on the PostgreSQL store
// kept in DIR (bench/attribution.js --store DIR), against as many cache hits; CPU µs per call of
// this process and of the database's backends, three rounds.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { benchEngine, cpuMs, postgresCpuMs, source } from './lib.js';

const dir = process.argv[2];
const meta = JSON.parse(readFileSync(path.join(dir, 'bench.json'), 'utf8'));
if (!meta.database) throw new Error('a PostgreSQL store kept by bench/attribution.js --store DIR is needed');
const url = new URL(benchEngine().adminUrl);
url.pathname = `/${meta.database}`;
const { openDatabase } = await source('db/open.ts');
const { requireActiveStore, requireActiveStoreCached } = await source('stores/lookup.ts');
const database = openDatabase({ databaseUrl: url.toString(), dataDir: dir });
const accountId = (
  await database.read.selectFrom('stores').select('account_id').where('id', '=', meta.data.storeId).executeTakeFirstOrThrow()
).account_id;
const tenant = { accountId, livemode: true };
const N = 5000;
const measure = async (label, lookup) => {
  const before = cpuMs(process.pid);
  const pgBefore = postgresCpuMs(meta.database);
  let started = 0;
  const lane = async () => {
    while (started++ < N) await lookup();
  };
  await Promise.all(Array.from({ length: 10 }, lane));
  const us = (ms) => ((ms * 1000) / N).toFixed(1);
  console.log(
    `${label}: this process ${us(cpuMs(process.pid) - before)} µs, backends ${us(postgresCpuMs(meta.database) - pgBefore)} µs per call`,
  );
};
for (let round = 1; round <= 3; round++) {
  await measure('store read', () => requireActiveStore(database.read, tenant, meta.data.storeId));
  await measure('cached   ', () => requireActiveStoreCached(database.read, tenant, meta.data.storeId));
}
await database.close();
