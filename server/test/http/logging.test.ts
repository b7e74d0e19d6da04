import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import type { Database } from '../../src/db/database.js';
import { LOG_REDACT, serverLogger } from '../../src/observability.js';
import { LogOutput } from '../../src/stdio.js';
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

  it('write one line per request, at response time: method, route pattern, status, time, request id, error code', async () => {
    const storeId = await makeStore(app, key);
    lines.length = 0;
    const responses = [
      await call(app, 'GET', `/v1/stores/${storeId}?expand=secret-query-value`, { key }),
      await call(app, 'POST', '/v1/track/click', { key, body: { storeId } }),
      await call(app, 'GET', '/v1/stores', { headers: { authorization: `Bearer ${key}x` } }),
      await call(app, 'GET', '/v1/no-such-thing/st_123'),
      await call(app, 'GET', '/v1/stores/%zz'), // refused before routing
      await call(app, 'POST', '/v1/track/conversion', {
        key,
        headers: { 'idempotency-key': 'idem-secret-456' },
        body: conversionBody(storeId, { customerData: { email: 'Jane.Doe@Example.com' } }),
      }),
    ];
    const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records.map((r) => r.msg)).not.toContain('incoming request');
    expect(records.map((r) => r.msg)).not.toContain('request completed');
    const requestLines = records.filter((r) => typeof r.route === 'string');
    expect(requestLines).toHaveLength(responses.length);
    for (const [i, res] of responses.entries()) {
      const line = requestLines.find((r) => r.reqId === res.headers['request-id']);
      expect(line, `a line for response ${i}`).toBeDefined();
      expect(line?.level).toBe(30); // info, whatever the status
      expect(line?.status).toBe(res.status);
      expect(typeof line?.responseTimeMs).toBe('number');
      expect(line?.code).toBe(res.status >= 400 ? res.body.error.code : undefined);
    }
    expect(requestLines.map((r) => [r.method, r.route, r.status, r.code ?? null])).toEqual([
      ['GET', '/v1/stores/:id', 200, null],
      ['POST', '/v1/track/click', 400, 'missing_required_field'],
      ['GET', '/v1/stores', 401, 'unauthorized'],
      ['GET', 'unmatched', 404, 'not_found'],
      ['GET', 'unmatched', 400, 'invalid_request'],
      ['POST', '/v1/track/conversion', 200, null],
    ]);
    // The pattern, never the URL: no ids, query values, keys or customer data.
    const text = lines.join('');
    for (const secret of [storeId, 'secret-query-value', 'st_123', key, 'idem-secret-456', 'Jane.Doe@Example.com']) {
      expect(text).not.toContain(secret);
    }
  });

  it('log probes that succeed at debug level only', async () => {
    lines.length = 0;
    await call(app, 'GET', '/healthz');
    await call(app, 'GET', '/metrics');
    const probes = lines.map((line) => JSON.parse(line)).filter((r) => typeof r.route === 'string');
    expect(probes.map((r) => [r.route, r.level])).toEqual([
      ['/healthz', 20],
      ['/metrics', 20],
    ]);
  });
});

describe('the log format', () => {
  it('is JSON when standard output is not a terminal, one readable line per entry when it is', async () => {
    // JSON lines go to standard output through a LogOutput (stdio.ts: never blocks, never stops the server).
    expect(await serverLogger({ logLevel: 'info' }, Object.assign(new Writable(), { isTTY: false }))).toEqual({
      level: 'info',
      redact: LOG_REDACT,
      stream: expect.any(LogOutput),
    });

    const written: string[] = [];
    const terminal = Object.assign(
      new Writable({
        write(chunk, _enc, done) {
          written.push(String(chunk));
          done();
        },
      }),
      { isTTY: true },
    );
    const dataDir = tempDir();
    const testDb = await openTestDatabase(dataDir);
    try {
      await testDb.database.migrate();
      const config = loadConfig({ DATA_DIR: dataDir });
      const pretty = await buildApp({ config, database: testDb.database, logger: await serverLogger(config, terminal) });
      try {
        const res = await call(pretty, 'GET', '/v1/stores', { headers: { authorization: 'Bearer wt_live_not-a-key' } });
        expect(res.status).toBe(401);
      } finally {
        await pretty.close();
      }
    } finally {
      await testDb.drop();
    }
    // biome-ignore lint/suspicious/noControlCharactersInRegex: strips the terminal's colours
    const text = written.join('').replace(/\x1b\[[0-9;]*m/g, '');
    const line = text.split('\n').find((l) => l.includes('GET /v1/stores 401'));
    expect(line, text).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO/);
    expect(line).toContain('"code":"unauthorized"');
    expect(text).not.toContain('wt_live_not-a-key');
    expect(() => JSON.parse(line as string)).toThrow();
  });
});
