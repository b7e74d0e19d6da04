import { Writable } from 'node:stream';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { up as redactKeptAnswers } from '../../src/db/migrations/0025_idempotency_secrets.js';
import { LOG_REDACT } from '../../src/observability.js';
import { openTestDatabase, type TestDatabase } from '../engine.js';
import { call, tempDir } from '../helpers.js';

// A webhook's signing secret is shown once (api.md §9) and sealed at rest: the answer kept for
// Idempotency-Key replays (api.md §1) holds no secret — in the idempotency table (and so in the
// WAL and in backups) the secret is null with secretRedacted: true, and a replay answers so —
// the endpoint's row holds it sealed, and no log line carries it. On the test's engine.

let lines: string[];
let testDb: TestDatabase;
let app: Awaited<ReturnType<typeof buildApp>>;
let key: string;
beforeAll(async () => {
  lines = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const dataDir = tempDir();
  testDb = await openTestDatabase(dataDir);
  await testDb.database.migrate();
  const config = loadConfig({ ...testDb.env, DATA_DIR: dataDir, LOG_LEVEL: 'trace' });
  app = await buildApp({ config, database: testDb.database, logger: { level: 'trace', redact: LOG_REDACT, stream } });
  await app.ready();
  key = (await createAccount(testDb.database, { email: 'secrets@example.com' })).keys.live;
});
afterAll(async () => {
  await app?.close();
  await testDb?.drop();
});

let counter = 0;
const idempotencyKey = () => `webhook-${process.pid}-${++counter}`;

/** A name that never resolves: accepted, and no event is sent in these tests anyway. */
const create = (headers: Record<string, string>, url = `https://hooks.invalid/${++counter}`) =>
  call(app, 'POST', '/v1/webhooks', { key, headers, body: { url, events: ['refund.recorded'] } });

async function keptAnswer(idemKey: string): Promise<string> {
  const row = await testDb.database.read
    .selectFrom('idempotency_keys')
    .select(['response', 'status_code'])
    .where('key', '=', idemKey)
    .executeTakeFirstOrThrow();
  expect(row.status_code).toBe(201);
  return row.response as string;
}

describe('POST /v1/webhooks with an Idempotency-Key', () => {
  it('keeps the answer without the secret, and a replay says it is redacted', async () => {
    const idemKey = idempotencyKey();
    const url = `https://hooks.invalid/replayed-${counter}`;
    const first = await create({ 'idempotency-key': idemKey }, url);
    expect(first.status).toBe(201);
    const secret = first.body.data.secret as string;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(first.body.data.secretRedacted).toBe(false);

    // Read from the table itself: neither the secret nor any whsec_ value is kept.
    const kept = await keptAnswer(idemKey);
    expect(kept).not.toContain(secret);
    expect(kept).not.toContain(secret.slice('whsec_'.length));
    expect(kept).not.toContain('whsec_');
    expect(JSON.parse(kept).data).toMatchObject({ id: first.body.data.id, secret: null, secretRedacted: true });

    const replay = await create({ 'idempotency-key': idemKey }, url);
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body.data).toEqual({ ...first.body.data, secret: null, secretRedacted: true });
    expect(JSON.stringify(replay.body)).not.toContain('whsec_');

    // Still one endpoint, and its secret is the one first shown (sealed in its row).
    const list = await call(app, 'GET', '/v1/webhooks?limit=100', { key });
    expect(list.body.data.webhooks.filter((w: { url: string }) => w.url === url)).toHaveLength(1);
  });

  it('a replay with a different body is still refused (idempotency_key_reused)', async () => {
    const idemKey = idempotencyKey();
    expect((await create({ 'idempotency-key': idemKey }, 'https://hooks.invalid/one')).status).toBe(201);
    const other = await create({ 'idempotency-key': idemKey }, 'https://hooks.invalid/two');
    expect(other.status).toBe(400);
    expect(other.body.error.details).toEqual({ field: 'Idempotency-Key', reason: 'idempotency_key_reused' });
  });

  it('without the header, the answer shows the secret and nothing is kept', async () => {
    const res = await create({});
    expect(res.body.data).toMatchObject({ secretRedacted: false });
    expect(res.body.data.secret).toMatch(/^whsec_/);
  });
});

describe('the secret at rest', () => {
  it('is sealed in the endpoint’s row', async () => {
    const res = await create({ 'idempotency-key': idempotencyKey() });
    const secret = res.body.data.secret as string;
    const row = await testDb.database.read
      .selectFrom('webhooks')
      .select('secret')
      .where('id', '=', res.body.data.id)
      .executeTakeFirstOrThrow();
    expect(row.secret).toMatch(/^wtenc1:/);
    expect(row.secret).not.toContain(secret.slice('whsec_'.length));
  });

  it('never reaches the logs, even at trace level', async () => {
    const idemKey = idempotencyKey();
    const res = await create({ 'idempotency-key': idemKey });
    await create({ 'idempotency-key': idemKey });
    await call(app, 'PATCH', `/v1/webhooks/${res.body.data.id}`, { key, body: { enabled: true } });
    const log = lines.join('');
    expect(log).toContain(res.body.meta.requestId);
    expect(log).not.toContain(res.body.data.secret.slice('whsec_'.length));
    expect(log).not.toContain('whsec_');
  });
});

describe('migration 0025', () => {
  it('redacts the answers kept before it, as the old code kept them', async () => {
    const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    const apiKey = `wt_live_${'A1b2'.repeat(10)}`;
    const old = JSON.stringify({
      success: true,
      data: { id: 'wh_old', url: 'https://hooks.invalid/old', secret, livemode: true },
      meta: { timestamp: new Date().toISOString(), requestId: 'req_old' },
    });
    const other = JSON.stringify({ success: true, data: { note: `pasted ${apiKey} here` }, meta: {} });
    const plain = JSON.stringify({ success: true, data: { id: 'st_x', name: 'whsec_ is a prefix' }, meta: {} });
    const row = (idemKey: string, response: string) => ({
      account_id: 'acct_old',
      livemode: 1,
      key: idemKey,
      request_hash: 'h',
      status_code: 201,
      response,
      created_at: Date.now(),
    });
    await testDb.database.write((trx) =>
      trx
        .insertInto('idempotency_keys')
        .values([row('old-webhook', old), row('old-other', other), row('old-plain', plain)])
        .execute(),
    );
    await testDb.database.write((trx) => redactKeptAnswers(trx as unknown as Kysely<unknown>));
    const kept = async (idemKey: string) =>
      (
        await testDb.database.read
          .selectFrom('idempotency_keys')
          .select('response')
          .where('key', '=', idemKey)
          .executeTakeFirstOrThrow()
      ).response as string;
    const webhook = await kept('old-webhook');
    expect(webhook).not.toContain(secret.slice('whsec_'.length));
    expect(JSON.parse(webhook).data).toEqual({
      id: 'wh_old',
      url: 'https://hooks.invalid/old',
      secret: null,
      livemode: true,
      secretRedacted: true,
    });
    expect(JSON.parse(await kept('old-other')).data.note).toBe('pasted [redacted] here');
    expect(await kept('old-plain')).toBe(plain);
  });
});
