import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../http/errors.js';
import { TAG_FILE } from '../paths.js';

/**
 * Five minutes: a new release reaches pages soon, while a busy shop's visitors still fetch it
 * about once per visit; the ETag makes the revalidation after that a 304.
 */
const CACHE_CONTROL = 'public, max-age=300';

interface Built {
  plain: Buffer;
  gzipped: Buffer;
  etag: string;
}

function load(file: string): Built | undefined {
  let plain: Buffer;
  try {
    plain = readFileSync(file);
  } catch {
    return undefined;
  }
  const hash = createHash('sha256').update(plain).digest('base64url').slice(0, 22);
  return { plain, gzipped: gzipSync(plain, { level: 9 }), etag: `"${hash}"` };
}

function accepts(request: FastifyRequest, encoding: string): boolean {
  const header = request.headers['accept-encoding'];
  return typeof header === 'string' && header.split(',').some((part) => part.trim().split(';')[0] === encoding);
}

function matches(request: FastifyRequest, etag: string): boolean {
  const header = request.headers['if-none-match'];
  if (typeof header !== 'string') return false;
  // A compressed copy's ETag is the plain one's with a suffix; either names the same content.
  return header.split(',').some((tag) => {
    const value = tag.trim().replace(/^W\//, '');
    return value === etag || value === `${etag.slice(0, -1)}-gz"`;
  });
}

/**
 * GET /tag.js — the browser tag (packages/tag), read once when the app starts and served to
 * any site (it is included by shops' pages), compressed when the browser accepts it. A build
 * made after the start is picked up by the next request while none was found.
 */
export const tagRoutes: FastifyPluginAsync<{ file?: string }> = async (app, options) => {
  const file = options.file ?? TAG_FILE;
  let built = load(file);

  // GET /tag.js — the browser tag for shops' pages (api.md §6)
  app.get('/tag.js', { schema: { hide: true } }, async (request: FastifyRequest, reply: FastifyReply) => {
    built ??= load(file);
    if (!built) {
      throw new ApiError('not_found', 'The browser tag is not built: run `npm run build` (`npm start` does it before serving)');
    }
    const gzip = accepts(request, 'gzip');
    reply.headers({
      'Content-Type': 'text/javascript; charset=utf-8',
      'Cache-Control': CACHE_CONTROL,
      ETag: gzip ? `${built.etag.slice(0, -1)}-gz"` : built.etag,
      Vary: 'Accept-Encoding',
      'X-Content-Type-Options': 'nosniff',
      // Loaded by other sites' pages: say so, whatever policy a proxy in front would add.
      'Cross-Origin-Resource-Policy': 'cross-origin',
    });
    if (matches(request, built.etag)) return reply.code(304).send();
    if (gzip) reply.header('Content-Encoding', 'gzip');
    return reply.send(gzip ? built.gzipped : built.plain);
  });
};
