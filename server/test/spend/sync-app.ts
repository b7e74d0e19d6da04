import { rmSync } from 'node:fs';
import net from 'node:net';
import { expect } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import type { Database } from '../../src/db/database.js';
import type { SpendSyncTuning } from '../../src/spend/sync.js';
import { openTestDatabase } from '../engine.js';
import { call, makeStore, tempDir } from '../helpers.js';
import type { FakeMetaInsights } from './fake-meta-insights.js';

/** Apps for the spend sync tests (spend-sync.test.ts): instances on one database whose log lines are kept, and what the tests read. */
interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

const SECRETS_KEY = 'ef'.repeat(32);
const TUNING: Partial<SpendSyncTuning> = { pollMs: 50, leaseMs: 10_000, requestTimeoutMs: 5000, retryBaseMs: 3_600_000 };

function configFor(meta: FakeMetaInsights, dataDir: string, env: Record<string, string>) {
  return loadConfig({
    DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
    RATE_LIMIT_RPS: '100000',
    RATE_LIMIT_BURST: '100000',
    META_GRAPH_URL: meta.url,
    WEBHOOKS_ALLOW_PRIVATE: 'true',
    SECRETS_KEY,
    ...env,
  });
}

async function instance(
  meta: FakeMetaInsights,
  database: Database,
  env: Record<string, string> = {},
  tuning: Partial<SpendSyncTuning> = {},
) {
  const dataDir = tempDir();
  const lines: LogLine[] = [];
  const app = await buildApp({
    config: configFor(meta, dataDir, env),
    database,
    logger: { level: 'info', stream: { write: (line: string) => lines.push(JSON.parse(line) as LogLine) } },
    spendSync: { ...TUNING, ...tuning },
  });
  await app.ready();
  return { app, lines, dataDir };
}

export async function spendApp(meta: FakeMetaInsights, env: Record<string, string> = {}) {
  const dataDir = tempDir();
  const store = await openTestDatabase(dataDir, { migrated: true });
  await store.database.migrate();
  const first = await instance(meta, store.database, env);
  const owner = await createAccount(store.database, { email: 'owner@example.com' });
  const others: Array<Awaited<ReturnType<typeof instance>>> = [];
  return {
    ...first,
    database: store.database,
    key: owner.keys.live,
    testKey: owner.keys.test,
    spendLines: () => first.lines.filter((l) => typeof l.msg === 'string' && l.msg.startsWith('Spend source')),
    async another(tuning: Partial<SpendSyncTuning> = {}) {
      const other = await instance(meta, store.database, env, tuning);
      others.push(other);
      return other;
    },
    async close() {
      for (const other of others) {
        await other.app.close();
        rmSync(other.dataDir, { recursive: true, force: true });
      }
      await first.app.close();
      await store.drop();
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(first.dataDir, { recursive: true, force: true });
    },
  };
}

export type SpendApp = Awaited<ReturnType<typeof spendApp>>;
export const today = new Date().toISOString().slice(0, 10);
export const day = (offset: number) =>
  new Date(Date.parse(`${today}T00:00:00Z`) + offset * 86_400_000).toISOString().slice(0, 10);
export const TOKEN = 'meta-spend-token';

export async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out; last value ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export async function source(c: SpendApp, storeId: string) {
  const res = await call(c.app, 'GET', `/v1/stores/${storeId}/spend-sources`, { key: c.key });
  expect(res.status).toBe(200);
  return res.body.data.spendSources.find((s: { kind: string }) => s.kind === 'meta');
}

/** Waits for a sync that ends after `after` (its lastSyncedAt, or a failure recorded since). */
export async function synced(c: SpendApp, storeId: string, status: 'ok' | 'failing', failures?: number) {
  return until(
    async () => c.database.read.selectFrom('spend_sources').selectAll().where('store_id', '=', storeId).executeTakeFirstOrThrow(),
    (row) =>
      row.status === status &&
      row.claimed_by === null &&
      (failures === undefined || Number(row.consecutive_failures) === failures),
  );
}

export async function spend(c: SpendApp, storeId: string) {
  const res = await call(c.app, 'GET', `/v1/stores/${storeId}/ad-spend?startDate=${day(-80)}&endDate=${today}&limit=100`, {
    key: c.key,
  });
  expect(res.status).toBe(200);
  return Object.fromEntries(
    (res.body.data.entries ?? res.body.data.adSpend ?? res.body.data.spend).map(
      (e: { date: string; campaignId: string; amount: number; source: string; currency: string }) => [
        `${e.date} ${e.campaignId}`,
        `${e.amount} ${e.currency} ${e.source}`,
      ],
    ),
  );
}

export const syncNow = async (c: SpendApp, storeId: string) =>
  expect((await call(c.app, 'POST', `/v1/stores/${storeId}/spend-sources/meta/sync`, { key: c.key })).status).toBe(202);

/** A store whose Meta destination's token the source borrows, connected and backfilled. */
export async function connected(c: SpendApp, body: Record<string, unknown> = {}) {
  const storeId = await makeStore(c.app, c.key, { pixelId: '1234567890', capiAccessToken: TOKEN, currency: 'EUR' });
  const put = await call(c.app, 'PUT', `/v1/stores/${storeId}/spend-sources/meta`, {
    key: c.key,
    body: { adAccountIds: ['act_111'], ...body },
  });
  expect(put.status).toBe(200);
  return storeId;
}

export const firstPages = (meta: FakeMetaInsights) => meta.requests.filter((r) => r.query.after === undefined);
/** A local port nothing listens on (one just closed). */
export async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export async function spendEvents(c: SpendApp) {
  const rows = await c.database.read
    .selectFrom('webhook_messages')
    .select(['event_type', 'payload'])
    .where('event_type', 'like', 'spend_source.%')
    .orderBy('created_at')
    .execute();
  return rows.map((r) => ({ type: r.event_type, data: JSON.parse(r.payload).data }));
}
