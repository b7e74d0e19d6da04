import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import type { Database } from '../../src/db/database.js';
import { LOG_REDACT } from '../../src/observability.js';
import { openTestDatabase, type TestDatabase } from '../engine.js';
import { call, clickBody, conversionBody, makeStore, tempDir } from '../helpers.js';

// Keys and customer PII never reach the logs, even at the most verbose level and on errors.
describe('logs', () => {
  let lines: string[];
  let database: Database;
  let app: Awaited<ReturnType<typeof buildApp>>;
  let key: string;
  let testDb: TestDatabase;

  beforeAll(async () => {
    lines = [];
    const stream = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const dataDir = tempDir();
    const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'trace' });
    testDb = await openTestDatabase(dataDir);
    database = testDb.database;
    await database.migrate();
    app = await buildApp({ config, database, logger: { level: 'trace', redact: LOG_REDACT, stream } });
    key = (await createAccount(database, { email: 'logs@example.com' })).keys.live;
  });
  afterAll(async () => {
    await app.close();
    await testDb.drop();
  });

  it('carry request ids but never the API key, the Idempotency-Key or customer data', async () => {
    const storeId = await makeStore(app, key);
    await call(app, 'POST', '/v1/track/click', { key, body: clickBody(storeId, { fbclid: 'log-click' }) });
    const conversion = await call(app, 'POST', '/v1/track/conversion', {
      key,
      headers: { 'idempotency-key': 'idem-secret-123' },
      body: conversionBody(storeId, {
        customerData: { email: 'Jane.Doe@Example.com', phone: '+1 650 555 1212', firstName: 'Jane', lastName: 'Doerrington' },
      }),
    });
    expect(conversion.status).toBe(200);
    await call(app, 'POST', '/v1/track/conversion', { key, body: { storeId, customerData: { email: 'Jane.Doe@Example.com' } } });
    await call(app, 'GET', '/v1/stores', { headers: { authorization: `Bearer ${key}x` } });

    const log = lines.join('');
    expect(log).toContain(conversion.body.meta.requestId);
    for (const secret of [
      key,
      key.slice(8),
      'idem-secret-123',
      'Jane.Doe@Example.com',
      'jane.doe@example.com',
      '650 555 1212',
      'Doerrington',
    ]) {
      expect(log).not.toContain(secret);
    }
  });
});
