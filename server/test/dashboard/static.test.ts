// Serving the built dashboard (server/src/dashboard/static.ts) from a small built-like folder:
// the page for every app path, hashed assets cached for a year, compressed when accepted.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dashboardStatic } from '../../src/dashboard/static.js';
import { registerErrorHandling } from '../../src/http/error-handler.js';
import { call, tempDir } from '../helpers.js';

const PAGE = '<!doctype html><html><head><script type="module" src="/dashboard/assets/app-4f2a9c.js"></script></head></html>';
const SCRIPT = `export const answer = ${'42 + '.repeat(200)}0;\n`;

async function appServing(dir: string): Promise<FastifyInstance> {
  const app = Fastify({ logger: false, routerOptions: { ignoreTrailingSlash: true } });
  registerErrorHandling(app);
  await app.register(dashboardStatic, { dir });
  await app.ready();
  return app;
}

describe('the built dashboard at /dashboard', () => {
  let dir: string;
  let app: FastifyInstance;

  beforeAll(async () => {
    dir = tempDir('waytrack-dist-');
    mkdirSync(path.join(dir, 'assets'));
    writeFileSync(path.join(dir, 'index.html'), PAGE);
    writeFileSync(path.join(dir, 'assets', 'app-4f2a9c.js'), SCRIPT);
    writeFileSync(path.join(dir, 'assets', 'app-4f2a9c.js.gz'), gzipSync(SCRIPT));
    app = await appServing(dir);
  });
  afterAll(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers /dashboard and every app path (deep links, reloads) with the page, never cached, under a strict CSP', async () => {
    for (const url of [
      '/dashboard',
      '/dashboard/',
      '/dashboard/stores/st_123',
      '/dashboard/settings/api-keys?from=x',
      '/dashboard/a/b/c',
    ]) {
      const res = await call(app, 'GET', url);
      expect(res.status, url).toBe(200);
      expect(res.raw.body).toBe(PAGE);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.headers['content-security-policy']).toContain("script-src 'self'");
      expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
      expect(res.headers['x-frame-options']).toBe('DENY');
    }
    const head = await app.inject({ method: 'HEAD', url: '/dashboard/conversions' });
    expect(head.statusCode).toBe(200);
  });

  it('serves hashed assets for a year, gzipped to a browser that accepts it', async () => {
    const plain = await call(app, 'GET', '/dashboard/assets/app-4f2a9c.js');
    expect(plain.status).toBe(200);
    expect(plain.raw.body).toBe(SCRIPT);
    expect(plain.headers['content-type']).toMatch(/javascript/);
    expect(plain.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(plain.headers['content-encoding']).toBeUndefined();

    const gzipped = await app.inject({
      method: 'GET',
      url: '/dashboard/assets/app-4f2a9c.js',
      headers: { 'accept-encoding': 'gzip' },
    });
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    expect(gzipped.headers.vary).toMatch(/accept-encoding/i);
    expect(gzipped.rawPayload.length).toBeLessThan(SCRIPT.length);
  });

  it('a missing asset is a 404 in the envelope, never the page', async () => {
    for (const url of ['/dashboard/assets/app-000000.js', '/dashboard/assets/']) {
      const res = await call(app, 'GET', url);
      expect(res.status, url).toBe(404);
      expect(res.raw.body).not.toContain('<html');
    }
  });

  it('serves nothing outside the built folder', async () => {
    const secret = path.join(path.dirname(dir), `secret-${path.basename(dir)}.txt`);
    writeFileSync(secret, 'not for the web');
    try {
      const name = path.basename(secret);
      for (const url of [
        `/dashboard/assets/..%2F..%2F${name}`,
        `/dashboard/assets/%2e%2e/%2e%2e/${name}`,
        `/dashboard/assets/..%5c..%5c${name}`,
        `/dashboard/assets/....//....//${name}`,
      ]) {
        const res = await call(app, 'GET', url);
        expect(res.raw.body, url).not.toContain('not for the web');
        expect(res.status, url).not.toBe(200);
      }
    } finally {
      rmSync(secret, { force: true });
    }
  });

  it('leaves /dashboard/api to the JSON routes: an unknown one is a JSON 404', async () => {
    const res = await call(app, 'GET', '/dashboard/api/nothing');
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
  });

  it('says how to build the dashboard when it is not built', async () => {
    const empty = tempDir('waytrack-unbuilt-');
    const unbuilt = await appServing(empty);
    try {
      const res = await call(unbuilt, 'GET', '/dashboard/stores');
      expect(res.status).toBe(404);
      expect(res.body.error).toMatchObject({ code: 'not_found', message: expect.stringContaining('npm run build') });
    } finally {
      await unbuilt.close();
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
