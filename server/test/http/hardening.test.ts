import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { loadTls } from '../../src/tls.js';
import { openTestDatabase, type TestDatabase } from '../engine.js';
import { call, clickBody, expectError, makeStore, newAccountsEachTest } from '../helpers.js';

// What an outside probe (schema fuzzing, hand-made bad input, slow clients) found answered with a
// 500, Fastify's own body or not at all: each now gets the envelope with the right code.

describe('bad input gets the envelope, never a 500', () => {
  const ctx = newAccountsEachTest();

  const inject = (method: string, url: string, payload?: string, headers: Record<string, string> = {}) =>
    ctx.app.inject({ method: method as 'GET', url, payload, headers: { authorization: `Bearer ${ctx.a.live}`, ...headers } });

  it('a path with bad percent-encoding is 400 invalid_request naming the path', async () => {
    const res = await inject('GET', '/v1/stores/%FF');
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ code: 'invalid_request', details: { field: 'path', reason: 'invalid_format' } });
    expect(res.headers['request-id']).toBe(res.json().meta.requestId);
  });

  it('an id longer than any id is 404 not_found', async () => {
    const res = await inject('GET', `/v1/stores/${'a'.repeat(150)}`);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ success: false, error: { code: 'not_found' } });
  });

  it('a body-taking method the path does not answer is 405 with Allow, not 500 (nor "needs a JSON body")', async () => {
    const res = await inject('QUERY', '/v1/stores');
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD, POST');
    expect(res.json().error).toMatchObject({ code: 'not_found', details: { reason: 'method_not_allowed' } });
  });

  it('JSON nested thousands deep is 400 too_deep (no stack overflow)', async () => {
    for (const depth of [40, 5000, 10_000]) {
      const res = await inject('POST', '/v1/track/click', `{"a":${'['.repeat(depth)}${']'.repeat(depth)}}`, {
        'content-type': 'application/json',
      });
      expect(res.statusCode, `depth ${depth}`).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'invalid_request', details: { reason: 'too_deep' } });
    }
    // A product list at the depth a real body has is fine.
    const storeId = await makeStore(ctx.app, ctx.a.live);
    expect((await call(ctx.app, 'POST', '/v1/track/click', { key: ctx.a.live, body: clickBody(storeId) })).status).toBe(200);
  });

  it('a lone UTF-16 surrogate in a string or a key is 400 invalid_unicode naming the field; a real pair is kept', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const lone = `{"fbclid":"fb_ok","storeId":"${storeId}","landingPage":"https://shop.acme.test/?a=\\ud800"}`;
    const res = await inject('POST', '/v1/track/click', lone, { 'content-type': 'application/json' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({
      code: 'invalid_request',
      details: { field: 'landingPage', reason: 'invalid_unicode' },
    });

    const inKey = await inject('POST', '/v1/stores', '{"name":"x","\\udc00":1}', { 'content-type': 'application/json' });
    expect(inKey.json().error.details).toMatchObject({ reason: 'invalid_unicode' });

    const store = await call(ctx.app, 'POST', '/v1/stores', {
      key: ctx.a.live,
      body: { name: 'Café 😀 shop', domain: 'emoji.acme.test', platform: 'custom' },
    });
    expect(store.status).toBe(201);
    expect(store.body.data.name).toBe('Café 😀 shop');
  });

  it('a limit not written in digits is refused (Number() would read 0x10 and 1e1)', async () => {
    for (const limit of ['0x10', '1e1', '+5', '5.0']) {
      const res = await call(ctx.app, 'GET', `/v1/stores?limit=${encodeURIComponent(limit)}`, { key: ctx.a.live });
      expectError(res, 400, 'invalid_request');
      expect(res.body.error.details).toMatchObject({ field: 'limit' });
    }
    expect((await call(ctx.app, 'GET', '/v1/stores?limit=10', { key: ctx.a.live })).status).toBe(200);
  });

  it('a date with no such month or day is refused by the schema the document shows', async () => {
    for (const date of ['9119-39-65', '2026-13-01', '2026-00-10', '2026-01-32']) {
      const res = await call(ctx.app, 'GET', `/v1/conversions?startDate=${date}`, { key: ctx.a.live });
      expectError(res, 400, 'invalid_request');
      expect(res.body.error.details).toMatchObject({ field: 'startDate' });
    }
  });

  it('a compressed body is refused by name, not parsed as JSON', async () => {
    const res = await inject('POST', '/v1/stores', '{"name":"x"}', {
      'content-type': 'application/json',
      'content-encoding': 'gzip',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ code: 'invalid_request', details: { field: 'Content-Encoding' } });
  });

  it('the OpenAPI document lists the closed set of error codes', async () => {
    const doc = (await ctx.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    const envelope = JSON.stringify(doc);
    for (const code of ['invalid_request', 'rate_limit_exceeded', 'service_unavailable']) expect(envelope).toContain(`"${code}"`);
    // Every error response of every operation declares the code as that enum.
    const codes = [...envelope.matchAll(/"code":\{"type":"string","enum":\[([^\]]*)\]/g)].map((m) => m[1]);
    expect(codes.length).toBeGreaterThan(20);
    expect(new Set(codes).size).toBe(1);
    expect(codes[0]).toContain('"store_not_found"');
  });

  it('a cursor with anything appended is refused, however base64 decoding would read it', async () => {
    for (let i = 0; i < 3; i++) await makeStore(ctx.app, ctx.a.live, { name: `S${i}` });
    const first = await call(ctx.app, 'GET', '/v1/stores?limit=1', { key: ctx.a.live });
    const cursor = first.body.data.nextCursor as string;
    expect((await call(ctx.app, 'GET', `/v1/stores?limit=1&cursor=${cursor}`, { key: ctx.a.live })).status).toBe(200);
    for (const junk of ['==', '!', '%00', 'A']) {
      const res = await call(ctx.app, 'GET', `/v1/stores?limit=1&cursor=${cursor}${junk}`, { key: ctx.a.live });
      expectError(res, 400, 'invalid_request');
      expect(res.body.error.details).toMatchObject({ field: 'cursor' });
    }
  });
});

describe('over a real connection', () => {
  let dataDir: string;
  let testDb: TestDatabase;
  let app: FastifyInstance;
  let port: number;
  let key: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'waytrack-hardening-'));
    testDb = await openTestDatabase(dataDir);
    await testDb.database.migrate();
    const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', META_GRAPH_URL: 'http://127.0.0.1:9' });
    const material = await loadTls(config);
    app = await buildApp({
      config,
      database: testDb.database,
      logger: false,
      https: { key: material.key, cert: material.cert },
      limits: { requestMs: 1500, headersMs: 1000, keepAliveMs: 1000 },
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    port = (app.server.address() as { port: number }).port;
    key = (await createAccount(testDb.database, { email: 'hardening@example.com' })).keys.live;
  });
  afterAll(async () => {
    await app?.close();
    await testDb?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** Sends raw bytes over TLS; resolves with everything the server sent until it closed (or 10 s). */
  function raw(
    chunks: Array<string | Buffer>,
    options: { gapMs?: number } = {},
  ): Promise<{ text: string; closedAfterMs: number }> {
    return new Promise((resolve, reject) => {
      const started = Date.now();
      const socket = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false, servername: 'localhost' });
      let text = '';
      const timer = setTimeout(() => socket.destroy(), 10_000);
      socket.setEncoding('utf8');
      socket.on('data', (d) => {
        text += d;
      });
      socket.on('error', () => {});
      socket.on('close', () => {
        clearTimeout(timer);
        resolve({ text, closedAfterMs: Date.now() - started });
      });
      socket.once('secureConnect', async () => {
        try {
          for (const chunk of chunks) {
            if (socket.destroyed) break;
            socket.write(chunk);
            if (options.gapMs) await new Promise((r) => setTimeout(r, options.gapMs));
          }
        } catch (error) {
          reject(error);
        }
      });
    });
  }

  const envelopeOf = (text: string) => JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));

  it.each([
    ['a bad chunk size', 'POST /v1/track/click HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n'],
    [
      'both Content-Length and Transfer-Encoding',
      'POST /v1/track/click HTTP/1.1\r\nHost: localhost\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    ],
    [
      'two Content-Lengths',
      'POST /v1/track/click HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}',
    ],
    ['a NUL in a header', 'GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Bad: a\u0000b\r\n\r\n'],
    ['headers over 16 KiB', `GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`],
  ])('%s: 400 with the envelope and a request id, then the connection closes', async (_name, request) => {
    const { text } = await raw([request]);
    expect(text).toMatch(/^HTTP\/1\.1 400 /);
    const body = envelopeOf(text);
    expect(body).toMatchObject({ success: false, error: { code: 'invalid_request', details: { reason: 'malformed_request' } } });
    expect(text).toContain(`Request-Id: ${body.meta.requestId}`);
  });

  it('a body trickled a byte at a time is cut off at the request timeout with the envelope', async () => {
    const head = `POST /v1/track/click HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n`;
    const { text, closedAfterMs } = await raw([head, ...'{"fbclid":"fb_slow"'.split('')], { gapMs: 300 });
    expect(closedAfterMs).toBeLessThan(5000);
    expect(text).toMatch(/^HTTP\/1\.1 400 /);
    expect(envelopeOf(text).error.details).toMatchObject({ reason: 'request_timeout' });
  });

  it('headers never finished are cut off at the headers timeout', async () => {
    const { closedAfterMs } = await raw(['GET /healthz HTTP/1.1\r\nHost: localhost\r\n', 'X-A: 1\r\n', 'X-B: 2\r\n'], {
      gapMs: 700,
    });
    expect(closedAfterMs).toBeLessThan(5000);
  });

  it('an idle keep-alive connection is closed after the keep-alive timeout', async () => {
    const { text, closedAfterMs } = await raw(['GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n']);
    expect(text).toMatch(/^HTTP\/1\.1 200 /);
    expect(closedAfterMs).toBeLessThan(4000);
  });
});
