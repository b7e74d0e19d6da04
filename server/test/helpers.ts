import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { createAccount, createKey } from '../src/accounts/accounts.js';
import { buildApp } from '../src/app.js';
import { type Config, loadConfig } from '../src/config.js';
import type { Database } from '../src/db/database.js';
import type { ClicksTable } from '../src/db/schema.js';
import type { DispatcherTuning } from '../src/destinations/dispatcher.js';
import { MemoryRateLimiter, type RateLimitDecision, type RateLimiter, type RateLimitPolicy } from '../src/http/rate-limit.js';
import { newId } from '../src/ids.js';
import type { SpendSyncTuning } from '../src/spend/sync.js';
import type { WebhookTuning } from '../src/webhooks/dispatcher.js';
import { openTestDatabase, type TestDatabase, type TestDatabaseOptions } from './engine.js';

export interface TestAccount {
  accountId: string;
  live: string;
  test: string;
}

export interface TestContext {
  app: FastifyInstance;
  database: Database;
  config: Config;
  dataDir: string;
  /** The test's database, with the environment a server process on it needs. */
  store: TestDatabase;
  /** Two independent accounts, for tenancy tests. */
  a: TestAccount;
  b: TestAccount;
  keyWithScopes(scopes: string[], mode?: 'live' | 'test'): Promise<string>;
  /**
   * The same app and database seen through two new accounts: what one account wrote, the other
   * accounts' requests never meet (tenancy), so test groups that each need accounts of their own
   * can share one app instead of building one each. Its close() leaves the app to its owner.
   */
  withNewAccounts(): Promise<TestContext>;
  close(): Promise<void>;
}

/**
 * The in-memory rate limiter with its clock stopped: no token comes back while a test spends its
 * burst, however long a busy machine takes over the requests.
 */
export class FrozenLimiter implements RateLimiter {
  private readonly inner = new MemoryRateLimiter();
  consume(bucket: string, policy: RateLimitPolicy): Promise<RateLimitDecision> {
    return this.inner.consume(bucket, policy, 1_700_000_000_000);
  }
}

export function tempDir(prefix = 'waytrack-test-'): string {
  return mkdtempSync(path.join(tmpdir(), prefix));
}

export async function createTestContext(
  options: {
    env?: Record<string, string>;
    limiter?: RateLimiter;
    forwarding?: Partial<DispatcherTuning>;
    /** Webhooks-out dispatcher timings and the CA of a test receiver. */
    webhooks?: Partial<WebhookTuning>;
    /** Spend sync timings (spend/sync.ts). */
    spendSync?: Partial<SpendSyncTuning>;
    /** Puts something between the app and the database (a fault, a wrapper under test). */
    wrapDatabase?: (database: Database) => Database;
  } & TestDatabaseOptions = {},
): Promise<TestContext> {
  const dataDir = tempDir();
  // Generous limits by default so only rate-limit tests meet them.
  const config = loadConfig({
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    RATE_LIMIT_RPS: '100000',
    RATE_LIMIT_BURST: '100000',
    IP_RATE_LIMIT_RPS: '100000',
    SHOP_WEBHOOK_RATE_LIMIT_RPS: '100000',
    SHOP_WEBHOOK_RATE_LIMIT_BURST: '100000',
    // No test reaches the real Graph API: without a fake, forwarding meets a port fetch refuses to dial.
    META_GRAPH_URL: 'http://127.0.0.1:9',
    ...options.env,
  });
  const store = await openTestDatabase(dataDir, { threadEntry: options.threadEntry, migrated: true });
  const database = options.wrapDatabase ? options.wrapDatabase(store.database) : store.database;
  await database.migrate();
  const app = await buildApp({
    config,
    database,
    logger: false,
    limiter: options.limiter,
    forwarding: options.forwarding,
    webhooks: options.webhooks,
    spendSync: options.spendSync,
  });
  await app.ready();
  let accounts = 0;
  const make = async (email: string): Promise<TestAccount> => {
    const created = await createAccount(database, { email });
    return { accountId: created.accountId, live: created.keys.live, test: created.keys.test };
  };
  const seenBy = (a: TestAccount, b: TestAccount, close: () => Promise<void>): TestContext => ({
    app,
    database,
    config,
    dataDir,
    store,
    a,
    b,
    async keyWithScopes(scopes, mode = 'live') {
      return (await createKey(database, { accountId: a.accountId, mode, scopes })).key;
    },
    async withNewAccounts() {
      const n = ++accounts;
      return seenBy(await make(`owner-a-${n}@example.com`), await make(`owner-b-${n}@example.com`), async () => {});
    },
    close,
  });
  return seenBy(await make('owner-a@example.com'), await make('owner-b@example.com'), async () => {
    await app.close();
    await store.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });
}

/**
 * For tests that need accounts of their own rather than an app of their own: one app and database
 * for the describe block that calls this, and two new accounts (`a`, `b`) for each of its tests.
 * Tenancy keeps one test's data from the next as it keeps one customer's from another's, and no
 * test pays for a database and an app (~0.3 s of CPU on SQLite, a PostgreSQL database copied and
 * dropped). The value stands for the current test's context: read it inside hooks and tests.
 */
export function newAccountsEachTest(options: Parameters<typeof createTestContext>[0] = {}): TestContext {
  let shared: TestContext | undefined;
  let current: TestContext | undefined;
  beforeAll(async () => {
    shared = await createTestContext(options);
  });
  afterAll(async () => shared?.close());
  beforeEach(async () => {
    current = await (shared as TestContext).withNewAccounts();
  });
  return new Proxy({} as TestContext, {
    get(_target, field) {
      if (!current) throw new Error('newAccountsEachTest: read inside a hook or a test');
      return Reflect.get(current, field);
    },
  });
}

export interface ApiResponse {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary response shapes
  body: any;
  headers: LightMyRequestResponse['headers'];
  raw: LightMyRequestResponse;
}

export async function call(
  app: FastifyInstance,
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE',
  url: string,
  options: { key?: string; body?: unknown; headers?: Record<string, string>; rawBody?: string } = {},
): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  let payload: string | undefined;
  if (options.rawBody !== undefined) payload = options.rawBody;
  else if (options.body !== undefined) {
    payload = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const raw = await app.inject({ method, url, headers, payload });
  let body: unknown;
  try {
    body = raw.json();
  } catch {
    body = raw.body;
  }
  return { status: raw.statusCode, body, headers: raw.headers, raw };
}

export const storeBody = (overrides: Record<string, unknown> = {}) => ({
  name: 'Acme Outdoor',
  domain: 'shop.acme.test',
  platform: 'shopify',
  ...overrides,
});

/** Creates a store through the API and returns its id. */
export async function makeStore(app: FastifyInstance, key: string, overrides: Record<string, unknown> = {}): Promise<string> {
  const res = await call(app, 'POST', '/v1/stores', { key, body: storeBody(overrides) });
  if (res.status !== 201) throw new Error(`store creation failed: ${JSON.stringify(res.body)}`);
  return res.body.data.id as string;
}

export const clickBody = (storeId: string, overrides: Record<string, unknown> = {}) => ({
  fbclid: `fbclid_${Math.random().toString(36).slice(2)}`,
  storeId,
  landingPage:
    'https://shop.acme.test/products/tent?utm_source=facebook&utm_medium=cpc&utm_campaign=bf2026&campaign_id=123&adset_id=456&ad_id=789',
  ipAddress: '203.0.113.7',
  userAgent:
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1',
  ...overrides,
});

export const conversionBody = (storeId: string, overrides: Record<string, unknown> = {}) => ({
  storeId,
  eventType: 'Purchase',
  orderId: `order_${Math.random().toString(36).slice(2)}`,
  eventValue: 49.99,
  currency: 'USD',
  ...overrides,
});

/** Asserts the error envelope and returns its error object. */
export function expectError(res: ApiResponse, status: number, code: string) {
  if (res.status !== status || res.body?.error?.code !== code) {
    throw new Error(`expected ${status} ${code}, got ${res.status} ${JSON.stringify(res.body)}`);
  }
  if (res.body.success !== false || res.headers['request-id'] !== res.body.meta?.requestId) {
    throw new Error(`bad error envelope: ${JSON.stringify(res.body)}`);
  }
  return res.body.error as { code: string; message: string; details?: Record<string, unknown> };
}

/**
 * A click row as the tracking endpoint stores it, for tests that write rows directly (times the
 * endpoint refuses, a chosen id, a batch): account a, live mode, no optional signals; `fields`
 * override any of it.
 */
export function clickRow(
  ctx: TestContext,
  storeId: string,
  fields: Partial<ClicksTable> & Pick<ClicksTable, 'fbclid'>,
): ClicksTable {
  const time = fields.click_time ?? Date.now();
  return {
    id: newId('click', time),
    account_id: ctx.a.accountId,
    store_id: storeId,
    livemode: 1,
    click_time: time,
    created_at: time,
    landing_page: 'https://shop.acme.test/',
    referrer: null,
    ip_address: null,
    user_agent: null,
    fingerprint: null,
    derived_fingerprint: null,
    fbp: null,
    fbc: `fb.1.${time}.${fields.fbclid}`,
    utm_source: null,
    utm_medium: null,
    utm_campaign: null,
    utm_content: null,
    utm_term: null,
    campaign_id: null,
    adset_id: null,
    ad_id: null,
    is_bot: 0,
    ...fields,
  };
}
