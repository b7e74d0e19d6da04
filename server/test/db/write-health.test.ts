import { afterEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { withWriteHealth } from '../../src/db/write-health.js';
import { call, createTestContext, type TestContext } from '../helpers.js';

/** What a full disk looks like from here: reads work, every write fails with SQLITE_FULL. */
function failingWrites(inner: Database, state: { full: boolean }): Database {
  return {
    ...inner,
    write(work) {
      if (state.full) return Promise.reject(Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' }));
      return inner.write(work);
    },
  };
}

describe('readiness covers writes (a full disk)', () => {
  let ctx: TestContext;
  afterEach(async () => ctx?.close());

  it('/readyz answers 503 once a write failed for want of the database, and 200 again once writes work', async () => {
    const disk = { full: false };
    ctx = await createTestContext({ wrapDatabase: (inner) => withWriteHealth(failingWrites(inner, disk)) });
    expect((await call(ctx.app, 'GET', '/readyz')).status).toBe(200);

    disk.full = true;
    const refused = await call(ctx.app, 'POST', '/v1/stores', {
      key: ctx.a.live,
      body: { name: 'Full', domain: 'full.example.com', platform: 'custom' },
    });
    expect(refused.status).toBe(503);
    const ready = await call(ctx.app, 'GET', '/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body.error.code).toBe('service_unavailable');
    // Still failing: readiness tries a write itself and stays 503.
    expect((await call(ctx.app, 'GET', '/readyz')).status).toBe(503);

    // The disk has room again: the next readiness check writes, and the instance is ready (no other write needed).
    disk.full = false;
    expect((await call(ctx.app, 'GET', '/readyz')).status).toBe(200);
    expect((await call(ctx.app, 'GET', '/readyz')).status).toBe(200);
  });
});
