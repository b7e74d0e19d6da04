// A body nested thousands deep is a 400, never a 500 (found by the schema fuzzer: the
// Idempotency-Key hash's JSON.stringify overflowed the stack on it).
import { afterEach, expect, it } from 'vitest';
import { call, createTestContext, type TestContext } from '../helpers.js';

let ctx: TestContext;
afterEach(async () => {
  await ctx?.close();
});

it('refuses a body nested past 64 levels with 400 and accepts brackets inside strings', async () => {
  ctx = await createTestContext();
  const deep = `{"events":${'['.repeat(5000)}${']'.repeat(5000)}}`;
  for (const headers of [{}, { 'idempotency-key': 'deep-1' }] as Record<string, string>[]) {
    const res = await call(ctx.app, 'POST', '/v1/track/batch', {
      key: ctx.a.test,
      rawBody: deep,
      headers: { 'content-type': 'application/json', ...headers },
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_request', details: { reason: 'too_deep' } });
  }
  const brackets = await call(ctx.app, 'POST', '/v1/track/batch', {
    key: ctx.a.test,
    rawBody: JSON.stringify({ events: [{ type: 'nothing', note: `${'['.repeat(200)}\\"` }] }),
    headers: { 'content-type': 'application/json' },
  });
  expect(brackets.status).toBe(200);
});
