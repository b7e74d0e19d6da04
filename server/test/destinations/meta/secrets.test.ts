import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../../src/accounts/accounts.js';
import { buildApp } from '../../../src/app.js';
import { ConfigError, loadConfig } from '../../../src/config.js';
import { LOG_REDACT } from '../../../src/observability.js';
import { KEY_FILE, loadSecretsKey, SecretBox, SecretError } from '../../../src/secrets.js';
import { openTestDatabase } from '../../engine.js';
import { call, conversionBody, makeStore, tempDir } from '../../helpers.js';
import { FakeGraph } from './fake-graph.js';
import { FAST, forwardingContext, forwardingStore, getConversion, PIXEL, postConversion, TOKEN, waitForStatus } from './setup.js';

describe('SecretBox', () => {
  const box = new SecretBox(randomBytes(32));

  it('seals with a fresh nonce each time and opens only for the same record and key', () => {
    const a = box.seal('EAAB-token', 'st_1');
    const b = box.seal('EAAB-token', 'st_1');
    expect(a).toMatch(/^wtenc1:[A-Za-z0-9_-]+$/);
    expect(a).not.toBe(b);
    expect(a).not.toContain('EAAB');
    expect(box.open(a, 'st_1')).toBe('EAAB-token');
    expect(() => box.open(a, 'st_2')).toThrow(SecretError);
    expect(() => new SecretBox(randomBytes(32)).open(a, 'st_1')).toThrow(SecretError);
    const tampered = `${a.slice(0, -2)}${a.endsWith('AA') ? 'BB' : 'AA'}`;
    expect(() => box.open(tampered, 'st_1')).toThrow(SecretError);
    expect(() => box.open('EAAB-plain', 'st_1')).toThrow(SecretError);
  });
});

describe('the secrets key', () => {
  it('is generated into DATA_DIR with mode 0600 on first start, and reused after', () => {
    const dir = tempDir();
    try {
      const key = loadSecretsKey({ secretsKey: undefined, dataDir: dir });
      const file = path.join(dir, KEY_FILE);
      expect(key).toHaveLength(32);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(loadSecretsKey({ secretsKey: undefined, dataDir: dir }).equals(key)).toBe(true);
      expect(readFileSync(file, 'utf8').trim()).toBe(key.toString('base64'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('comes from SECRETS_KEY when set (hex or base64), and then no file is written', () => {
    const raw = randomBytes(32);
    const dir = tempDir();
    try {
      for (const written of [raw.toString('hex'), raw.toString('base64'), raw.toString('base64url')]) {
        const config = loadConfig({ DATA_DIR: dir, SECRETS_KEY: written });
        expect(config.secretsKey?.equals(raw)).toBe(true);
        expect(loadSecretsKey(config).equals(raw)).toBe(true);
      }
      expect(existsSync(path.join(dir, KEY_FILE))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.each([
    ['too short', randomBytes(16).toString('hex')],
    ['too long', randomBytes(33).toString('base64')],
    ['not hex nor base64', `${'z'.repeat(63)}!`],
  ])('refuses a malformed SECRETS_KEY (%s) naming the variable but never echoing it', (_name, value) => {
    let error: unknown;
    try {
      loadConfig({ SECRETS_KEY: value });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(/^SECRETS_KEY must be 32 bytes/);
    expect((error as Error).message).not.toContain(value);
  });
});

describe('access tokens at rest', () => {
  let fake: FakeGraph;
  beforeAll(async () => {
    fake = await FakeGraph.start();
  });
  afterAll(async () => fake.close());

  it('are stored encrypted, opened only to send, and a rotated token applies to the next request', async () => {
    const ctx = await forwardingContext(fake);
    try {
      const storeId = await forwardingStore(ctx);
      const row = await ctx.database.read.selectFrom('stores').selectAll().where('id', '=', storeId).executeTakeFirstOrThrow();
      expect(row.capi_access_token).toMatch(/^wtenc1:/);
      expect(JSON.stringify(row)).not.toContain(TOKEN);
      const outbox = async () => JSON.stringify(await ctx.database.read.selectFrom('destination_jobs').selectAll().execute());

      await postConversion(ctx, storeId, { orderId: 'o-1' });
      expect(fake.requests.at(-1)?.accessToken).toBe(TOKEN);
      expect(await outbox()).not.toContain(TOKEN);

      await call(ctx.app, 'PATCH', `/v1/stores/${storeId}`, { key: ctx.a.live, body: { capiAccessToken: 'EAAB-rotated' } });
      await postConversion(ctx, storeId, { orderId: 'o-2' });
      expect(fake.requests.at(-1)?.accessToken).toBe('EAAB-rotated');
    } finally {
      await ctx.close();
      fake.requests.length = 0;
    }
  });

  it('a changed SECRETS_KEY keeps events pending with a clear error instead of failing them', async () => {
    const first = randomBytes(32).toString('hex');
    // pollMs long: this app's dispatcher looks at the outbox only when its own requests wake it.
    const ctx = await forwardingContext(fake, { SECRETS_KEY: first }, { pollMs: 60_000 });
    try {
      const storeId = await forwardingStore(ctx);
      // The same data, served with another key.
      const config = loadConfig({
        DATA_DIR: ctx.dataDir,
        LOG_LEVEL: 'silent',
        META_GRAPH_URL: fake.url,
        SECRETS_KEY: randomBytes(32).toString('hex'),
      });
      const other = await buildApp({ config, database: ctx.database, logger: false, forwarding: FAST });
      try {
        const res = await call(other, 'POST', '/v1/track/conversion', { key: ctx.a.live, body: conversionBody(storeId) });
        expect(res.body.data.capiSent).toBe(false);
        const stored = await getConversion(ctx, res.body.data.conversionId);
        expect(stored.capi.status).toBe('pending');
        expect(stored.capi.lastError).toMatch(/SECRETS_KEY changed/);
        expect(fake.requests).toHaveLength(0);
      } finally {
        await other.close();
      }
      // Back on the right key, the app delivers it (with the next conversion, which wakes it).
      const waiting = await ctx.database.read.selectFrom('conversions').select('id').executeTakeFirstOrThrow();
      await postConversion(ctx, storeId);
      await waitForStatus(ctx, waiting.id, 'sent', 5000);
    } finally {
      await ctx.close();
      fake.requests.length = 0;
    }
  });

  it('never reach the logs, even at trace level and on failures', async () => {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const dataDir = tempDir();
    const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'trace', META_GRAPH_URL: fake.url });
    const testDb = await openTestDatabase(dataDir);
    const database = testDb.database;
    await database.migrate();
    const app = await buildApp({ config, database, logger: { level: 'trace', redact: LOG_REDACT, stream }, forwarding: FAST });
    try {
      const key = (await createAccount(database, { email: 'tokenlog@example.com' })).keys.live;
      const storeId = await makeStore(app, key, { pixelId: PIXEL, capiAccessToken: TOKEN });
      fake.faults = [{ type: 'error', code: 190, message: `Invalid OAuth access token ${TOKEN}` }];
      const res = await call(app, 'POST', '/v1/track/conversion', { key, body: conversionBody(storeId) });
      expect(res.status).toBe(200);
      const stored = await call(app, 'GET', `/v1/conversions/${res.body.data.conversionId}`, { key });
      expect(stored.body.data.capi.status).toBe('failed');
      expect(stored.body.data.capi.lastError).toContain('[access token]');
      expect(stored.raw.body).not.toContain(TOKEN);
      expect(lines.join('')).toContain('Meta refused Conversions API events');
      expect(lines.join('')).not.toContain(TOKEN);
    } finally {
      await app.close();
      await testDb.drop();
      rmSync(dataDir, { recursive: true, force: true });
      fake.requests.length = 0;
      fake.faults = [];
    }
  });
});
