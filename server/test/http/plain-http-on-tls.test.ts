import { mkdtempSync, rmSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { loadTls } from '../../src/tls.js';
import { openTestDatabase, type TestDatabase } from '../engine.js';

// `curl http://localhost:8443/…`: plain HTTP on the HTTPS port, which used to get an empty reply.
describe('plain HTTP sent to the HTTPS port', () => {
  let dataDir: string;
  let testDb: TestDatabase;
  let app: FastifyInstance;
  let port: number;
  let ca: Buffer;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'waytrack-plain-'));
    testDb = await openTestDatabase(dataDir);
    await testDb.database.migrate();
    const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', META_GRAPH_URL: 'http://127.0.0.1:9' });
    const material = await loadTls(config);
    ca = Buffer.from(material.cert);
    app = await buildApp({
      config,
      database: testDb.database,
      logger: false,
      https: { key: material.key, cert: material.cert },
      limits: { headersMs: 1000, maxConnectionsPerIp: 3 },
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    port = (app.server.address() as { port: number }).port;
  });
  afterAll(async () => {
    await app?.close();
    await testDb?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** Sends raw bytes over plain TCP; everything the server sent until it closed, and when. */
  function plain(text: string): Promise<{ text: string; closedAfterMs: number }> {
    return new Promise((resolve) => {
      const started = Date.now();
      const socket = net.connect({ host: '127.0.0.1', port });
      let received = '';
      const timer = setTimeout(() => socket.destroy(), 10_000);
      socket.setEncoding('utf8');
      socket.on('data', (d) => {
        received += d;
      });
      socket.on('error', () => {});
      socket.on('close', () => {
        clearTimeout(timer);
        resolve({ text: received, closedAfterMs: Date.now() - started });
      });
      if (text) socket.write(text);
    });
  }

  function getOverTls(urlPath: string, agent: https.Agent): Promise<number> {
    return new Promise((resolve, reject) => {
      https
        .get({ host: '127.0.0.1', port, path: urlPath, ca, servername: 'localhost', agent }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        })
        .on('error', reject);
    });
  }

  it('is answered 403 https_required in plain HTTP, saying to use https://, and the connection closes', async () => {
    const { text, closedAfterMs } = await plain(
      `GET /v1/stores?limit=2 HTTP/1.1\r\nHost: localhost:${port}\r\nUser-Agent: curl/8\r\nAccept: */*\r\n\r\n`,
    );
    expect(text).toMatch(/^HTTP\/1\.1 403 /);
    expect(text).toContain('Connection: close');
    const body = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));
    expect(body).toMatchObject({
      success: false,
      error: {
        code: 'https_required',
        message: 'This port speaks HTTPS only: plain HTTP was sent to it. Resend the request to the https:// address',
      },
    });
    expect(text).toContain(`Request-Id: ${body.meta.requestId}`);
    expect(closedAfterMs).toBeLessThan(2000);

    // A POST with a body: answered the same, and nothing of it is processed.
    const post = await plain('POST /v1/track/click HTTP/1.0\r\nContent-Length: 2\r\n\r\n{}');
    expect(post.text).toMatch(/^HTTP\/1\.1 403 /);
    expect(JSON.parse(post.text.slice(post.text.indexOf('\r\n\r\n') + 4)).error.code).toBe('https_required');
  });

  it('leaves HTTPS as it was: requests over TLS, kept-alive connections, the per-client cap', async () => {
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (let i = 0; i < 3; i++) expect(await getOverTls('/healthz', agent)).toBe(200);
    } finally {
      agent.destroy();
    }
    // Plain-HTTP connections give their slot back: more of them than the cap (3) are all answered.
    for (let i = 0; i < 5; i++) expect((await plain('GET / HTTP/1.1\r\nHost: x\r\n\r\n')).text).toMatch(/^HTTP\/1\.1 403 /);
    const fresh = new https.Agent({ keepAlive: false });
    expect(await getOverTls('/healthz', fresh)).toBe(200);
    fresh.destroy();
  });

  it('closes a connection that sends nothing after the handshake timeout', async () => {
    const { text, closedAfterMs } = await plain('');
    expect(text).toBe('');
    expect(closedAfterMs).toBeGreaterThanOrEqual(900);
    expect(closedAfterMs).toBeLessThan(5000);
  });
});
