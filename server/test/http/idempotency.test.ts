// api.md §1 "Idempotency": an Idempotency-Key header (≤ 255 chars) on a POST makes a retry with
// the same body replay the stored response for 24 h; a different body under the same key is
// refused. Keys belong to one account and mode.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerToKeep, REDACTED } from '../../src/http/idempotency.js';
import {
  type ApiResponse,
  call,
  clickBody,
  conversionBody,
  createTestContext,
  expectError,
  makeStore,
  storeBody,
  type TestContext,
} from '../helpers.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => ctx.close());

let counter = 0;
/** A key no other test uses. */
const freshKey = (label: string) => `${label}-${process.pid}-${++counter}`;

function post(url: string, key: string, body: unknown, idempotencyKey?: string): Promise<ApiResponse> {
  return call(ctx.app, 'POST', url, { key, body, headers: idempotencyKey ? { 'idempotency-key': idempotencyKey } : {} });
}

async function storeIds(key: string): Promise<string[]> {
  const res = await call(ctx.app, 'GET', '/v1/stores?limit=100', { key });
  expect(res.status).toBe(200);
  return res.body.data.stores.map((s: { id: string }) => s.id);
}

/** The replay equals the original but for the request id, which is the replay's own. */
function expectReplayOf(replay: ApiResponse, original: ApiResponse) {
  expect(original.headers['idempotent-replayed']).toBeUndefined();
  expect(replay.headers['idempotent-replayed']).toBe('true');
  expect(replay.status).toBe(original.status);
  expect(replay.body.data).toEqual(original.body.data);
  expect(replay.body.success).toBe(true);
  expect(replay.body.meta.requestId).toBe(replay.headers['request-id']);
  expect(replay.body.meta.requestId).not.toBe(original.body.meta.requestId);
}

describe('same key, same body', () => {
  it('POST /v1/stores replays the 201 and its store id, creating one store', async () => {
    const key = freshKey('store');
    const before = await storeIds(ctx.a.live);
    const first = await post('/v1/stores', ctx.a.live, storeBody({ name: 'Idempotent Store' }), key);
    const second = await post('/v1/stores', ctx.a.live, storeBody({ name: 'Idempotent Store' }), key);
    expect(first.status).toBe(201);
    expectReplayOf(second, first);
    expect(second.body.data.id).toBe(first.body.data.id);
    const after = await storeIds(ctx.a.live);
    expect(after.filter((id) => !before.includes(id))).toEqual([first.body.data.id]);
  });

  it('without the header, the same POST /v1/stores creates two stores (control)', async () => {
    const before = await storeIds(ctx.a.live);
    await post('/v1/stores', ctx.a.live, storeBody());
    await post('/v1/stores', ctx.a.live, storeBody());
    expect((await storeIds(ctx.a.live)).length).toBe(before.length + 2);
  });

  it('POST /v1/track/conversion replays the original result, same conversionId, not marked duplicate', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const body = conversionBody(storeId);
    const key = freshKey('conversion');
    const first = await post('/v1/track/conversion', ctx.a.live, body, key);
    const second = await post('/v1/track/conversion', ctx.a.live, body, key);
    expect(first.status).toBe(200);
    expect(first.body.data.duplicate).toBe(false);
    expectReplayOf(second, first);
    expect(second.body.data.conversionId).toBe(first.body.data.conversionId);
  });

  it('POST /v1/track/click replays the original clickId', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const body = clickBody(storeId);
    const key = freshKey('click');
    const first = await post('/v1/track/click', ctx.a.live, body, key);
    const second = await post('/v1/track/click', ctx.a.live, body, key);
    expect(first.status).toBe(200);
    expectReplayOf(second, first);
    expect(second.body.data.clickId).toBe(first.body.data.clickId);
  });

  it('POST /v1/stores/:id/ad-spend replays the stored entries', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const body = { entries: [{ date: '2026-01-15', amount: 12.5, currency: 'USD' }] };
    const key = freshKey('spend');
    const first = await post(`/v1/stores/${storeId}/ad-spend`, ctx.a.live, body, key);
    const second = await post(`/v1/stores/${storeId}/ad-spend`, ctx.a.live, body, key);
    expect(first.status).toBe(200);
    expectReplayOf(second, first);
  });

  it('concurrent identical requests with one key create one store', async () => {
    const key = freshKey('concurrent');
    const before = await storeIds(ctx.a.live);
    const responses = await Promise.all(
      Array.from({ length: 8 }, () => post('/v1/stores', ctx.a.live, storeBody({ name: 'Raced Store' }), key)),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(8).fill(201));
    const ids = new Set(responses.map((r) => r.body.data.id));
    expect(ids.size).toBe(1);
    expect(responses.filter((r) => r.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
    const after = await storeIds(ctx.a.live);
    expect(after.filter((id) => !before.includes(id))).toEqual([...ids]);
  });
});

describe('same key, different request', () => {
  it('a different body → 400 invalid_request, reason idempotency_key_reused, nothing created', async () => {
    const key = freshKey('reuse');
    const first = await post('/v1/stores', ctx.a.live, storeBody({ name: 'First' }), key);
    expect(first.status).toBe(201);
    const before = await storeIds(ctx.a.live);
    const second = await post('/v1/stores', ctx.a.live, storeBody({ name: 'Second' }), key);
    const error = expectError(second, 400, 'invalid_request');
    expect(error.details).toEqual({ field: 'Idempotency-Key', reason: 'idempotency_key_reused' });
    expect(await storeIds(ctx.a.live)).toEqual(before);
  });

  it('the key stays bound to its first body after a refused reuse', async () => {
    const key = freshKey('rebind');
    const first = await post('/v1/stores', ctx.a.live, storeBody({ name: 'Original' }), key);
    expectError(await post('/v1/stores', ctx.a.live, storeBody({ name: 'Other' }), key), 400, 'invalid_request');
    expectReplayOf(await post('/v1/stores', ctx.a.live, storeBody({ name: 'Original' }), key), first);
  });
});

describe('the Idempotency-Key header', () => {
  it('of 255 characters is accepted', async () => {
    const key = freshKey('k').padEnd(255, 'k');
    const first = await post('/v1/stores', ctx.a.live, storeBody(), key);
    expect(first.status).toBe(201);
    expectReplayOf(await post('/v1/stores', ctx.a.live, storeBody(), key), first);
  });

  it('of 256 characters → 400 invalid_request, nothing created', async () => {
    const before = await storeIds(ctx.a.live);
    const res = await post('/v1/stores', ctx.a.live, storeBody(), 'k'.repeat(256));
    const error = expectError(res, 400, 'invalid_request');
    expect(error.details?.field).toBe('Idempotency-Key');
    expect(await storeIds(ctx.a.live)).toEqual(before);
  });

  it('is per account: the same key string from account b is independent', async () => {
    const key = freshKey('shared');
    const mine = await post('/v1/stores', ctx.a.live, storeBody({ name: 'Account A store' }), key);
    const theirs = await post('/v1/stores', ctx.b.live, storeBody({ name: 'Account B store' }), key);
    expect(mine.status).toBe(201);
    expect(theirs.status).toBe(201);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(theirs.body.data.id).not.toBe(mine.body.data.id);
    expect(theirs.body.data.name).toBe('Account B store');
    // Even an identical body from b is not a replay of a's response.
    const identical = await post('/v1/stores', ctx.b.live, storeBody({ name: 'Account A store' }), freshKey('x'));
    expect(identical.status).toBe(201);
    const bReplay = await post('/v1/stores', ctx.b.live, storeBody({ name: 'Account B store' }), key);
    expectReplayOf(bReplay, theirs);
    expect(await storeIds(ctx.b.live)).not.toContain(mine.body.data.id);
  });

  it('is per mode: the same key string with the test key is independent', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const body = conversionBody(storeId);
    const key = freshKey('mode');
    const live = await post('/v1/track/conversion', ctx.a.live, body, key);
    const test = await post('/v1/track/conversion', ctx.a.test, body, key);
    expect(live.status).toBe(200);
    expect(test.status).toBe(200);
    expect(test.headers['idempotent-replayed']).toBeUndefined();
    expect(test.body.data.conversionId).not.toBe(live.body.data.conversionId);
    const lookup = await call(ctx.app, 'GET', `/v1/conversions/${test.body.data.conversionId}`, { key: ctx.a.test });
    expect(lookup.body.data.livemode).toBe(false);
  });

  it('does not let a key lacking the scope read a stored response', async () => {
    const key = freshKey('scope');
    const body = storeBody({ name: 'Scoped' });
    expect((await post('/v1/stores', ctx.a.live, body, key)).status).toBe(201);
    const readOnly = await ctx.keyWithScopes(['stores:read']);
    expectError(await post('/v1/stores', readOnly, body, key), 403, 'forbidden');
  });

  it('expires after 24 hours: the same key then starts a new request', async () => {
    const key = freshKey('expiry');
    const first = await post('/v1/stores', ctx.a.live, storeBody(), key);
    expect(first.status).toBe(201);
    // Age the stored record rather than wait a day.
    const dayAndAMinute = 24 * 60 * 60 * 1000 + 60_000;
    await ctx.database.write((trx) =>
      trx
        .updateTable('idempotency_keys')
        .set((eb) => ({ created_at: eb('created_at', '-', dayAndAMinute) }))
        .where('key', '=', key)
        .execute(),
    );
    const again = await post('/v1/stores', ctx.a.live, storeBody(), key);
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(again.body.data.id).not.toBe(first.body.data.id);
  });
});

describe('the answer kept for replays', () => {
  // Routes that answer with a secret declare it (`shownOnce`, e.g. POST /v1/webhooks: see
  // test/webhooks/secret-shown-once.test.ts); anything shaped like a secret is replaced in any
  // kept answer too, so a route that forgets still keeps none.
  const key = `wt_live_${'Zx9'.repeat(12)}`;
  const secret = `whsec_${Buffer.alloc(32, 1).toString('base64')}`;

  it('has each shownOnce field null, with <field>Redacted: true', () => {
    const answer = JSON.stringify({ success: true, data: { id: 'wh_1', secret, secretRedacted: false }, meta: {} });
    expect(JSON.parse(answerToKeep(answer, ['secret'])).data).toEqual({ id: 'wh_1', secret: null, secretRedacted: true });
  });

  it('has API keys and webhook secrets replaced wherever they are, in any answer', () => {
    const answer = JSON.stringify({ success: true, data: { note: `key ${key}`, nested: { s: secret } }, meta: {} });
    const kept = answerToKeep(answer);
    expect(kept).not.toContain(key);
    expect(kept).not.toContain(secret);
    expect(JSON.parse(kept).data).toEqual({ note: `key ${REDACTED}`, nested: { s: REDACTED } });
  });

  it('leaves other answers as they are', () => {
    const answer = JSON.stringify({ success: true, data: { id: 'st_1', name: 'wt_live_ and whsec_ are prefixes' }, meta: {} });
    expect(answerToKeep(answer, ['secret'])).toBe(answer);
  });
});
