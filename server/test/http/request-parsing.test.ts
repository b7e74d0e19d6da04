import { rmSync } from 'node:fs';
import https from 'node:https';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { loadTls } from '../../src/tls.js';
import { openTestDatabase, type TestDatabase } from '../engine.js';
import { call, clickBody, createTestContext, makeStore, type TestContext, tempDir } from '../helpers.js';

// How a request's method and body are read (docs/api.md "Requests"): a method the path does not
// answer, bytes that are not UTF-8, keys that would reach prototypes, and a malformed body that
// must not cost the client its connection.

describe('methods, body bytes and reserved keys', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext();
  });
  afterAll(async () => ctx.close());

  const inject = (method: string, url: string, payload?: string | Buffer, headers: Record<string, string> = {}) =>
    ctx.app.inject({ method: method as 'GET', url, payload, headers: { authorization: `Bearer ${ctx.a.live}`, ...headers } });

  it('a method a known path does not answer is 405 with Allow, whatever the method; an unknown path is 404', async () => {
    for (const [method, url, allow] of [
      ['GET', '/v1/track/click', 'OPTIONS, POST'],
      ['DELETE', '/v1/stores', 'GET, HEAD, POST'],
      ['QUERY', '/v1/stores', 'GET, HEAD, POST'],
      ['PUT', '/v1/stores/st_01m40d7ga0hcj8g0c5t8qdyza9', 'GET, HEAD, PATCH'],
      ['PROPFIND', '/v1/conversions/', 'GET, HEAD'],
    ] as const) {
      const res = await inject(method, url);
      expect(res.statusCode, `${method} ${url}`).toBe(405);
      expect(res.headers.allow).toBe(allow);
      const body = res.json();
      expect(body).toMatchObject({
        success: false,
        error: { code: 'not_found', details: { field: 'method', reason: 'method_not_allowed', allow: allow.split(', ') } },
      });
      expect(body.error.message).not.toMatch(/JSON body/);
      expect(res.headers['request-id']).toBe(body.meta.requestId);
    }
    for (const [method, url] of [
      ['QUERY', '/nope'],
      ['GET', '/v1/nope'],
      ['DELETE', '/v2/stores'],
      ['GET', '/v1/stores/st_x/nope'],
    ] as const) {
      const res = await inject(method, url);
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(res.headers.allow).toBeUndefined();
      expect(res.json().error.code).toBe('not_found');
      expect(res.json().error.message).toBe(`No route ${method} ${url}`);
    }
  });

  it('raw bytes that are not UTF-8 are 400 invalid_unicode, never read as U+FFFD', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const json = Buffer.from(JSON.stringify(clickBody(storeId, { userAgent: 'UA-X' })));
    const at = json.indexOf('UA-X') + 2;
    for (const bad of [[0xff], [0xc3], [0xed, 0xa0, 0x80], [0xc0, 0xaf], [0xe2, 0x82]]) {
      const payload = Buffer.concat([json.subarray(0, at), Buffer.from(bad), json.subarray(at)]);
      const res = await inject('POST', '/v1/track/click', payload, { 'content-type': 'application/json' });
      expect(res.statusCode, `bytes ${bad}`).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'invalid_request', details: { reason: 'invalid_unicode' } });
      expect(res.json().error.message).toContain(`byte ${at}`);
    }
    // Real multi-byte characters are read as sent.
    const fine = await call(ctx.app, 'POST', '/v1/track/click', {
      key: ctx.a.live,
      body: clickBody(storeId, { userAgent: 'Café 😀 ü' }),
    });
    expect(fine.status).toBe(200);
    const click = await call(ctx.app, 'GET', `/v1/clicks/${fine.body.data.clickId}`, { key: ctx.a.live });
    expect(click.body.data.userAgent).toBe('Café 😀 ü');
  });

  it('a __proto__ key (or constructor.prototype) is refused by name, not as invalid JSON', async () => {
    for (const [payload, field] of [
      ['{"__proto__":{"polluted":1},"name":"x"}', '__proto__'],
      ['{"name":"x","customerData":{"__proto__":{}}}', 'customerData.__proto__'],
      ['{"constructor":{"prototype":{"polluted":1}}}', 'constructor.prototype'],
      ['{"\\u005f_proto__":1}', '__proto__'],
    ]) {
      const res = await inject('POST', '/v1/stores', payload, { 'content-type': 'application/json' });
      expect(res.statusCode, payload).toBe(400);
      const error = res.json().error;
      expect(error).toMatchObject({ code: 'invalid_request', details: { field, reason: 'reserved_key' } });
      expect(error.message).not.toMatch(/not valid JSON/);
    }
    // A plain `constructor` value is just an unknown field.
    const res = await inject('POST', '/v1/stores', '{"constructor":"x","name":"x","domain":"a.test","platform":"custom"}', {
      'content-type': 'application/json',
    });
    expect(res.json().error.details).toMatchObject({ field: 'constructor', reason: 'unknown_field' });
  });

  it('malformed JSON is 400 malformed_json; a leading byte order mark is skipped', async () => {
    for (const payload of ['{"name":"x"', '{"a":NaN}', '{"a":"\\u12"}', '{}x']) {
      const res = await inject('POST', '/v1/stores', payload, { 'content-type': 'application/json' });
      expect(res.statusCode, payload).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'invalid_request', details: { reason: 'malformed_json' } });
    }
    const bom = await inject('POST', '/v1/stores', '\ufeff{"name":"BOM shop","domain":"bom.acme.test","platform":"custom"}', {
      'content-type': 'application/json',
    });
    expect(bom.statusCode).toBe(201);
  });
});

describe('over a real TLS connection', () => {
  let dataDir: string;
  let testDb: TestDatabase;
  let app: FastifyInstance;
  let port: number;
  let key: string;
  let handshakes = 0;

  beforeAll(async () => {
    dataDir = tempDir('waytrack-parsing-');
    testDb = await openTestDatabase(dataDir);
    await testDb.database.migrate();
    const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', META_GRAPH_URL: 'http://127.0.0.1:9' });
    const material = await loadTls(config);
    app = await buildApp({ config, database: testDb.database, logger: false, https: { key: material.key, cert: material.cert } });
    app.server.on('secureConnection', () => {
      handshakes++;
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    port = (app.server.address() as { port: number }).port;
    key = (await createAccount(testDb.database, { email: 'parsing@example.com' })).keys.live;
  });
  afterAll(async () => {
    await app?.close();
    await testDb?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  function send(
    agent: https.Agent,
    method: string,
    path: string,
    body?: string | Buffer,
  ): Promise<{ status: number; headers: Record<string, unknown>; body: string; reused: boolean }> {
    return new Promise((resolve, reject) => {
      const req = https.request(
        {
          host: '127.0.0.1',
          port,
          method,
          path,
          agent,
          rejectUnauthorized: false,
          servername: 'localhost',
          headers: {
            authorization: `Bearer ${key}`,
            ...(body !== undefined && { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }),
          },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (d) => {
            text += d;
          });
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text, reused: req.reusedSocket }),
          );
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  it('a malformed, non-UTF-8 or reserved-key body keeps the keep-alive connection: one handshake for all', async () => {
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const before = handshakes;
      const answers = [
        await send(agent, 'GET', '/healthz'),
        await send(agent, 'POST', '/v1/stores', '{"name":"x"'),
        await send(agent, 'POST', '/v1/stores', Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d])),
        await send(agent, 'POST', '/v1/stores', '{"__proto__":{}}'),
        await send(agent, 'POST', '/v1/stores', ''),
        await send(agent, 'DELETE', '/v1/stores'),
        await send(agent, 'GET', '/healthz'),
      ];
      expect(answers.map((a) => a.status)).toEqual([200, 400, 400, 400, 400, 405, 200]);
      for (const answer of answers) expect(answer.headers.connection).not.toBe('close');
      expect(answers.slice(1).every((a) => a.reused)).toBe(true);
      expect(handshakes - before).toBe(1);
    } finally {
      agent.destroy();
    }
  });

  it('a body over the limit still closes the connection (the rest of it was never read)', async () => {
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const res = await send(agent, 'POST', '/v1/stores', `{"name":"${'x'.repeat(1024 * 1024 + 10)}"}`);
      expect(res.status).toBe(413);
      expect(res.headers.connection).toBe('close');
    } finally {
      agent.destroy();
    }
  });
});
