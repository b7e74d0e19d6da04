// GET /tag.js (api.md §6): the built browser tag, cacheable (Cache-Control + ETag, 304 on a
// match), gzipped when accepted, loadable by any site; a clear envelope error while unbuilt.
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { registerErrorHandling } from '../../src/http/error-handler.js';
import { newId } from '../../src/ids.js';
import { TAG_FILE } from '../../src/paths.js';
import { tagRoutes } from '../../src/routes/tag.js';
import { tempDir } from '../helpers.js';

const SOURCE = '(()=>{window.waytrack={identifiers:()=>({fbc:null,fbp:null,fingerprint:null})}})();\n';

let app: FastifyInstance | undefined;
let dir: string | undefined;
afterEach(async () => {
  await app?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  app = undefined;
  dir = undefined;
});

async function serveTag(content: string | undefined): Promise<{ app: FastifyInstance; file: string }> {
  dir = tempDir('waytrack-tag-route-');
  const file = path.join(dir, 'tag.js');
  if (content !== undefined) writeFileSync(file, content);
  app = Fastify({ genReqId: () => newId('request') });
  registerErrorHandling(app);
  await app.register(tagRoutes, { file });
  await app.ready();
  return { app, file };
}

describe('GET /tag.js', () => {
  it('is the built file as JavaScript, cacheable for 5 minutes, with an ETag, loadable by other sites', async () => {
    const { app } = await serveTag(SOURCE);
    const res = await app.inject({ method: 'GET', url: '/tag.js' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe(SOURCE);
    expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(res.headers['cache-control']).toBe('public, max-age=300');
    expect(res.headers.etag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['cross-origin-resource-policy']).toBe('cross-origin');
    expect(res.headers['content-encoding']).toBeUndefined();
  });

  it('is gzipped for browsers that accept it, under its own ETag', async () => {
    const { app } = await serveTag(SOURCE);
    const plain = await app.inject({ method: 'GET', url: '/tag.js' });
    const res = await app.inject({ method: 'GET', url: '/tag.js', headers: { 'accept-encoding': 'gzip, deflate, br' } });
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(res.headers.vary).toContain('Accept-Encoding');
    expect(gunzipSync(res.rawPayload).toString('utf8')).toBe(SOURCE);
    expect(res.headers.etag).not.toBe(plain.headers.etag);
  });

  it('answers 304 without a body when the ETag matches (either copy)', async () => {
    const { app } = await serveTag(SOURCE);
    const plain = await app.inject({ method: 'GET', url: '/tag.js' });
    const gzipped = await app.inject({ method: 'GET', url: '/tag.js', headers: { 'accept-encoding': 'gzip' } });
    for (const etag of [plain.headers.etag, gzipped.headers.etag, `W/${plain.headers.etag}`]) {
      const res = await app.inject({ method: 'GET', url: '/tag.js', headers: { 'if-none-match': String(etag) } });
      expect(res.statusCode).toBe(304);
      expect(res.body).toBe('');
      expect(res.headers['cache-control']).toBe('public, max-age=300');
    }
    const stale = await app.inject({ method: 'GET', url: '/tag.js', headers: { 'if-none-match': '"something-else"' } });
    expect(stale.statusCode).toBe(200);
  });

  it('is read once: a rebuilt file is served after a restart, not mid-flight', async () => {
    const { app, file } = await serveTag(SOURCE);
    writeFileSync(file, '/* changed */');
    expect((await app.inject({ method: 'GET', url: '/tag.js' })).body).toBe(SOURCE);
  });

  it('unbuilt: 404 not_found in the envelope saying how to build it, then served once built', async () => {
    const { app, file } = await serveTag(undefined);
    const res = await app.inject({ method: 'GET', url: '/tag.js' });
    expect(res.statusCode).toBe(404);
    const body = res.json();
    expect(body).toMatchObject({ success: false, error: { code: 'not_found' } });
    expect(body.error.message).toContain('npm run build');
    expect(res.headers['request-id']).toBe(body.meta.requestId);
    writeFileSync(file, SOURCE);
    expect((await app.inject({ method: 'GET', url: '/tag.js' })).body).toBe(SOURCE);
  });

  it('is looked for where the tag package builds it', () => {
    expect(TAG_FILE.endsWith(path.join('packages', 'tag', 'dist', 'tag.js'))).toBe(true);
  });
});
