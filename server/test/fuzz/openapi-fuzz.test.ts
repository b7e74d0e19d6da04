import { Validator } from '@seriousme/openapi-schema-validator';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { createKey, revokeKey } from '../../src/accounts/accounts.js';
import { ENGINE } from '../engine.js';
import { call, clickBody, conversionBody, createTestContext, makeStore } from '../helpers.js';
import { KNOWN_GAPS, UNDECLARED_STATUSES } from './known-gaps.js';
import { MemoryWatch } from './memory.js';
import { operationsOf } from './operations.js';
import { judge } from './oracle.js';
import { describeCase, requestsFor, type World } from './requests.js';
import { asWebhook, isWebhook, WEBHOOK_SECRET, webhookPlan } from './webhooks.js';

// Schema fuzzing (architecture.md: "every endpoint is fuzzed from its schema"). The OpenAPI
// document the app serves drives generation: for each operation, requests valid by its schemas,
// then broken one part at a time (see requests.ts), each judged against the contract and the
// document (oracle.ts). A failure prints the request and the command that replays it.
//
// Environment: FUZZ_RUNS runs per operation (default below, sized for `npm test`); FUZZ_SEED a
// number or `random` (default fixed); FUZZ_OP one operation, e.g. 'POST /v1/track/click';
// FUZZ_COLLECT=1 lists refusals of schema-valid requests instead of failing on them (to review
// known-gaps.ts). `npm run fuzz` = FUZZ_RUNS=20000 FUZZ_SEED=random over this folder.

const RUNS = Number(process.env.FUZZ_RUNS ?? 100);
const SEED =
  process.env.FUZZ_SEED === 'random' ? Math.floor(Math.random() * 2 ** 31) : Number(process.env.FUZZ_SEED ?? 20_261_122);
const ONLY = process.env.FUZZ_OP;
const replay = (op?: string) =>
  `FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS}${op ? ` FUZZ_OP='${op}'` : ''} npx vitest run --project ${ENGINE} server/test/fuzz`;
console.log(`schema fuzzing on ${ENGINE}: ${RUNS} runs per operation, seed ${SEED} (replay: ${replay()})`);

// CAPI_SYNC_WAIT_MS=0: forwarding goes to an address nobody answers; requests must not wait on it.
// The generated requests make hundreds of webhook endpoints in one account: the cap per account
// (WEBHOOK_MAX_ENDPOINTS, a refusal of the resource, not of the body: endpoint-cap.test.ts) is lifted.
const ctx = await createTestContext({ env: { CAPI_SYNC_WAIT_MS: '0', WEBHOOK_MAX_ENDPOINTS: '10000' } });
afterAll(() => ctx.close());
const { app } = ctx;

async function world(): Promise<World> {
  const storeId = await makeStore(app, ctx.a.live, {
    name: 'Fuzz main',
    shopifyWebhookSecret: WEBHOOK_SECRET,
    woocommerceWebhookSecret: WEBHOOK_SECRET,
  });
  // Google Ads has four secrets (x-rules required-once): a generated first body rarely has them
  // all, so the store starts configured; its PUT then keeps them, and its DELETE has one to remove.
  const google = await app.inject({
    method: 'PUT',
    url: `/v1/stores/${storeId}/destinations/google_ads`,
    headers: { authorization: `Bearer ${ctx.a.live}`, 'content-type': 'application/json' },
    payload: {
      customerId: '1234567890',
      conversionAction: 'customers/1234567890/conversionActions/1',
      api: 'google_ads_api',
      developerToken: 'dev-token',
      oauth: { clientId: 'client', clientSecret: 'secret', refreshToken: 'refresh' },
    },
  });
  if (google.statusCode !== 200) throw new Error(`configuring Google Ads: ${google.body}`);
  const patchStoreIds = [
    await makeStore(app, ctx.a.live, { name: 'Fuzz patch 1' }),
    await makeStore(app, ctx.a.live, { name: 'Fuzz patch 2' }),
  ];
  const inactiveStoreId = await makeStore(app, ctx.a.live, { name: 'Fuzz inactive' });
  await call(app, 'PATCH', `/v1/stores/${inactiveStoreId}`, { key: ctx.a.live, body: { status: 'inactive' } });
  const otherAccountStoreId = await makeStore(app, ctx.b.live, { name: 'Other account' });
  // Conversions are recorded in a forwarding store, so resend has something to do.
  const forwardingStoreId = await makeStore(app, ctx.a.live, {
    name: 'Fuzz forwarding',
    pixelId: '123456789012345',
    capiAccessToken: 'fuzz-token',
  });
  // Spend sources (api.md §11) borrow their destinations' secrets: a store with all three, whose
  // Meta source is connected for the sync (other operations' DELETEs do not reach it).
  const spendStoreId = await makeStore(app, ctx.a.live, {
    name: 'Fuzz spend',
    pixelId: '123456789012',
    capiAccessToken: 'fuzz-token',
  });
  const spendSyncStoreId = await makeStore(app, ctx.a.live, { name: 'Fuzz spend sync', capiAccessToken: 'fuzz-token' });
  for (const [url, payload] of [
    [
      `/v1/stores/${spendStoreId}/destinations/google_ads`,
      {
        customerId: '1234567890',
        conversionAction: 'customers/1234567890/conversionActions/1',
        api: 'google_ads_api',
        developerToken: 'dev-token',
        oauth: { clientId: 'client', clientSecret: 'secret', refreshToken: 'refresh' },
      },
    ],
    [`/v1/stores/${spendStoreId}/destinations/tiktok`, { pixelCode: 'C4FUZZ0123456789', accessToken: 'tt-token' }],
    [`/v1/stores/${spendSyncStoreId}/spend-sources/meta`, { adAccountIds: ['act_1'] }],
  ] as const) {
    const res = await app.inject({
      method: 'PUT',
      url,
      headers: { authorization: `Bearer ${ctx.a.live}`, 'content-type': 'application/json' },
      payload,
    });
    if (res.statusCode !== 200) throw new Error(`configuring ${url}: ${res.body}`);
  }
  const click = await call(app, 'POST', '/v1/track/click', { key: ctx.a.live, body: clickBody(storeId) });
  const otherClick = await call(app, 'POST', '/v1/track/click', { key: ctx.b.live, body: clickBody(otherAccountStoreId) });
  const conversion = await call(app, 'POST', '/v1/track/conversion', {
    key: ctx.a.live,
    body: conversionBody(forwardingStoreId, { fbclid: click.body.data.fbclid }),
  });
  // The order the refund's examples name (orderId 1001, EUR), with plenty left to refund: without
  // it a generated refund is accepted only when the conversion fuzzing happened to record one.
  const refundable = await call(app, 'POST', '/v1/track/conversion', {
    key: ctx.a.live,
    body: conversionBody(storeId, { orderId: '1001', currency: 'EUR', eventValue: 1_000_000 }),
  });
  if (refundable.status !== 200) throw new Error(`recording the refundable order: ${JSON.stringify(refundable.body)}`);
  const otherConversion = await call(app, 'POST', '/v1/track/conversion', {
    key: ctx.b.live,
    body: conversionBody(otherAccountStoreId),
  });
  const revoked = await createKey(ctx.database, { accountId: ctx.a.accountId, mode: 'live' });
  await revokeKey(ctx.database, revoked.keyId);
  return {
    keys: {
      live: ctx.a.live,
      test: ctx.a.test,
      otherAccount: ctx.b.live,
      revoked: revoked.key,
      narrow: await ctx.keyWithScopes(['stores:read']),
    },
    storeId,
    patchStoreIds,
    inactiveStoreId,
    otherAccountStoreId,
    forwardingStoreId,
    spendStoreId,
    spendSyncStoreId,
    clickId: click.body.data.clickId,
    otherAccountClickId: otherClick.body.data.clickId,
    conversionId: conversion.body.data.conversionId,
    otherAccountConversionId: otherConversion.body.data.conversionId,
    fbclid: click.body.data.fbclid,
    orderId: '1001',
    cursors: [],
  };
}

// Read at test time, not hard-coded: the document is what is being tested.
const doc = (await app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
const operations = operationsOf(doc).filter((op) => !ONLY || op.name === ONLY);
const fixture = await world();
const memory = new MemoryWatch();
let sent = 0;
const gapsHit = new Map<string, number>();
const summary: string[] = [];

describe(`the OpenAPI document (${ENGINE})`, () => {
  it('validates as OpenAPI 3.1 (@seriousme/openapi-schema-validator)', async () => {
    const result = await new Validator().validate(structuredClone(doc));
    expect(result.errors, JSON.stringify(result.errors, null, 1)).toBeUndefined();
    expect(result.valid).toBe(true);
  });

  it('declares the error responses of every operation, with the closed code list', () => {
    const missing = operations
      .filter((op) => op.name !== 'GET /metrics')
      .filter((op) => ![...op.responses.keys()].some((k) => k.startsWith('4') || k === 'DEFAULT') || op.errorCodes.size === 0)
      .map((op) => op.name);
    expect(missing).toEqual([]);
  });
});

/**
 * The fuzz world (requests.ts) has no webhook endpoint nor attempt to name yet, so it would send a
 * store id where a webhook id goes: these four are covered by server/test/webhooks/ and the
 * security suite.
 */
const WITHOUT_FIXTURE = new Set([
  'PATCH /v1/webhooks/{id}',
  'DELETE /v1/webhooks/{id}',
  'GET /v1/webhooks/{id}/deliveries',
  'POST /v1/webhooks/{id}/deliveries/{deliveryId}/resend',
]);

/**
 * Heap samples (two forced full GCs each: ~0.1–0.2 s with the worker's heap in a whole run) after
 * every SAMPLE_EVERY-th operation and the last: a dozen samples in a run, whatever FUZZ_RUNS.
 */
const SAMPLE_EVERY = 5;

describe(`schema fuzzing (${ENGINE}, seed ${SEED})`, () => {
  memory.sample(0);
  const fuzzed = operations.filter((o) => !WITHOUT_FIXTURE.has(o.name));
  for (const [index, op] of fuzzed.entries()) {
    // Per operation, from its name: replaying one operation (FUZZ_OP) generates the same requests.
    const seed = (SEED + [...op.name].reduce((h, ch) => (h * 31 + (ch.codePointAt(0) as number)) | 0, 0)) | 0;
    it(
      op.name,
      async () => {
        const statuses = new Map<number, number>();
        let accepted = 0;
        const requests = isWebhook(op.path)
          ? fc.tuple(requestsFor(op, fixture), webhookPlan).map(([c, plan]) => asWebhook(c, plan))
          : requestsFor(op, fixture);
        const property = fc.asyncProperty(requests, async (c) => {
          const res = await app.inject({ method: c.method as 'GET', url: c.url, headers: c.headers, payload: c.payload });
          sent++;
          statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
          const verdict = judge(op, c, res, KNOWN_GAPS, UNDECLARED_STATUSES);
          if (verdict.gap) {
            const { operation, field, code, reason, why } = verdict.gap;
            const key = `${why}: ${operation} ${field} ${code}/${reason}`;
            gapsHit.set(key, (gapsHit.get(key) ?? 0) + 1);
          }
          if (res.statusCode < 300) accepted++;
          const cursor = verdict.body?.data?.nextCursor;
          if (typeof cursor === 'string' && fixture.cursors.length < 64) fixture.cursors.push(cursor);
          if (verdict.failure) {
            throw new Error(`${verdict.failure}\n${describeCase(c)}\n  response: ${res.body.slice(0, 1_000)}`);
          }
        });
        try {
          await fc.assert(property, { numRuns: RUNS, seed, includeErrorInReport: true });
        } catch (error) {
          const cause = (error as Error).cause as Error | undefined;
          throw new Error(
            `schema fuzzing failed for ${op.name}; replay with: ${replay(op.name)}\n${(error as Error).message}${(error as Error).message.includes('\n  headers:') ? '' : `\n${cause?.stack ?? (error as Error).stack}`}`,
          );
        }
        // The server is still up, and kept nothing it should not have.
        const health = await app.inject({ method: 'GET', url: '/healthz' });
        expect(health.statusCode, 'the server must still answer /healthz').toBe(200);
        if (index % SAMPLE_EVERY === SAMPLE_EVERY - 1 || index === fuzzed.length - 1) memory.sample(sent);
        const counts = [...statuses.entries()].sort(([a], [b]) => a - b).map(([s, n]) => `${s}×${n}`);
        summary.push(`${op.name.padEnd(38)} ${counts.join(' ')}`);
        // A fuzzer that never gets past validation tests nothing behind it.
        if (op.secured) expect(accepted, `no request to ${op.name} was accepted: generation is broken`).toBeGreaterThan(0);
      },
      Math.max(30_000, RUNS * 60),
    );
  }

  it('memory stays bounded across batches', () => {
    console.log(
      `schema fuzzing on ${ENGINE}: ${sent} requests; ${memory.measure}: ${memory.samples.map((s) => `${(s.bytes / 2 ** 20).toFixed(0)}`).join(' ')} MB\n  ${summary.join('\n  ')}` +
        (gapsHit.size ? `\n  known gaps met:\n    ${[...gapsHit].map(([why, n]) => `${n}× ${why}`).join('\n    ')}` : ''),
    );
    expect(memory.verdict()).toBeUndefined();
  });
});
