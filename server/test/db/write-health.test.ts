import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import type { Database } from '../../src/db/database.js';
import { openDatabase } from '../../src/db/open.js';
import { openSqlite } from '../../src/db/sqlite/database.js';
import { withWriteHealth } from '../../src/db/write-health.js';
import { ENGINE } from '../engine.js';
import { call, clickBody, createTestContext, makeStore, type TestContext, tempDir } from '../helpers.js';

/** What a full disk looks like from here: reads work, every write fails with `error` (SQLITE_FULL by default). */
function failingWrites(
  inner: Database,
  state: { full: boolean },
  error = () => Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' }),
): Database {
  return {
    ...inner,
    write(work) {
      if (state.full) return Promise.reject(error());
      return inner.write(work);
    },
  };
}

const STORE = { name: 'Full', domain: 'full.example.com', platform: 'custom' };

describe('readiness covers writes (a full disk)', () => {
  let ctx: TestContext;
  afterEach(async () => ctx?.close());

  it('/readyz answers 503 once a write failed for want of the database, and 200 again once writes work', async () => {
    const disk = { full: false };
    ctx = await createTestContext({
      wrapDatabase: (inner) => withWriteHealth(failingWrites(inner, disk), { recoverAfterMs: 0 }),
    });
    expect((await call(ctx.app, 'GET', '/readyz')).status).toBe(200);

    disk.full = true;
    const refused = await call(ctx.app, 'POST', '/v1/stores', { key: ctx.a.live, body: STORE });
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

  it('says "disk full" and where, in the 503 and in /readyz (PostgreSQL 53100 disk_full), and stays unready a while after the last failure', async () => {
    const disk = { full: false };
    const pgFull = () =>
      Object.assign(new Error('could not extend file "base/16384/2619": No space left on device'), { code: '53100' });
    ctx = await createTestContext({
      wrapDatabase: (inner) =>
        withWriteHealth(failingWrites(inner, disk, pgFull), {
          location: 'PostgreSQL db.internal:5432/waytrack',
          recoverAfterMs: 2000,
        }),
    });
    disk.full = true;
    const refused = await call(ctx.app, 'POST', '/v1/stores', { key: ctx.a.live, body: STORE });
    const where = 'PostgreSQL db.internal:5432/waytrack (base/16384/2619)';
    expect(refused.status).toBe(503);
    expect(refused.body.error).toEqual({
      code: 'service_unavailable',
      message: `The database cannot write: disk full at ${where}; the request was not processed. Retry shortly.`,
      details: { reason: 'disk_full', path: where },
    });
    const ready = await call(ctx.app, 'GET', '/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body.error.message).toContain(`disk full at ${where}`);
    expect(ready.body.error.details).toEqual({ reason: 'disk_full', path: where });

    // The probe write succeeds at once, but a write failed moments ago: still unready, still "disk full"…
    disk.full = false;
    const soon = await call(ctx.app, 'GET', '/readyz');
    expect(soon.status).toBe(503);
    expect(soon.body.error.details.reason).toBe('disk_full');
    // …and a write that succeeds (one that needed no room) does not make it ready either.
    expect((await call(ctx.app, 'GET', '/v1/stores', { key: ctx.a.live })).status).toBe(200);
    expect((await call(ctx.app, 'GET', '/readyz')).status).toBe(503);
    await new Promise((r) => setTimeout(r, 2100));
    expect((await call(ctx.app, 'GET', '/readyz')).status).toBe(200);
  });
});

// A real SQLITE_FULL: every connection capped at the database's size (crash-point.ts's
// WAYTRACK_TEST_MAX_PAGE_COUNT), so a write that needs the file to grow fails as on a full disk.
describe.runIf(ENGINE === 'sqlite')('a full disk under SQLite', () => {
  let dataDir = '';
  let database: Database | undefined;
  afterEach(async () => {
    delete process.env.WAYTRACK_TEST_MAX_PAGE_COUNT;
    await database?.close();
    database = undefined;
  });

  it('answers the first write that does not fit 503 "disk full" with the path, and /readyz turns at once', async () => {
    dataDir = tempDir();
    const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', RATE_LIMIT_RPS: '100000', RATE_LIMIT_BURST: '100000' });
    const setup = openSqlite(dataDir);
    await setup.migrate();
    const { keys } = await createAccount(setup, { email: 'full@example.com' });
    await setup.close();

    process.env.WAYTRACK_TEST_MAX_PAGE_COUNT = '1';
    database = openDatabase({ dataDir });
    await database.migrate();
    const app = await buildApp({ config, database, logger: false });
    try {
      const storeId = await makeStore(app, keys.live);
      expect((await call(app, 'GET', '/readyz')).status).toBe(200);
      let refused: Awaited<ReturnType<typeof call>> | undefined;
      for (let i = 0; i < 2000 && !refused; i++) {
        const res = await call(app, 'POST', '/v1/track/click', {
          key: keys.live,
          body: clickBody(storeId, { fbclid: `full_${i}_${'x'.repeat(200)}` }),
        });
        if (res.status === 503) refused = res;
        else expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
      }
      const file = path.join(dataDir, 'waytrack.db');
      expect(refused?.body.error).toEqual({
        code: 'service_unavailable',
        message: `The database cannot write: disk full at ${file}; the request was not processed. Retry shortly.`,
        details: { reason: 'disk_full', path: file },
      });
      // The very next readiness check: unready, and why.
      const ready = await call(app, 'GET', '/readyz');
      expect(ready.status).toBe(503);
      expect(ready.body.error.details).toEqual({ reason: 'disk_full', path: file });
      expect(ready.body.error.message).toContain(`disk full at ${file}`);
    } finally {
      await app.close();
    }
  }, 60_000);
});
