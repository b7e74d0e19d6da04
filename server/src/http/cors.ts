import type { FastifyReply, FastifyRequest } from 'fastify';
import { normalizeOrigin } from '../accounts/publishable.js';
import { ok } from './envelope.js';

/**
 * CORS for the browser tag's one endpoint, POST /v1/track/click with a publishable key
 * (api.md §6). The allowed origin is always echoed, never `*`, and credentials (cookies) are
 * never allowed: the tag authenticates with its key in the Authorization header.
 */

export const CORS_ALLOWED_METHODS = 'POST';
export const CORS_ALLOWED_HEADERS = 'authorization, content-type, idempotency-key';
/** Ten minutes: browsers cache the preflight per origin and URL (Chromium caps it at two hours). */
export const CORS_MAX_AGE_SECONDS = 600;
/** What the page's script may read of an answer besides the simple headers. */
const EXPOSED_HEADERS = 'Request-Id, RateLimit, RateLimit-Policy, Retry-After';

/** The answer depends on the Origin: caches must keep one per origin. */
export function varyOnOrigin(reply: FastifyReply): void {
  reply.header('Vary', 'Origin');
}

/** Lets the page at `origin` read this answer (an origin the key's rule allowed). */
export function allowOrigin(reply: FastifyReply, origin: string): void {
  varyOnOrigin(reply);
  reply.header('Access-Control-Allow-Origin', origin);
  reply.header('Access-Control-Expose-Headers', EXPOSED_HEADERS);
}

/**
 * OPTIONS /v1/track/click. A preflight carries no Authorization header, so it cannot tell
 * which key, hence which origins, the real request will use. Any well-formed origin's
 * preflight is therefore allowed for POST with the tag's headers; the origin is enforced on
 * the real request, which a refused origin can neither complete (403, nothing recorded) nor
 * read (its answer has no Access-Control-Allow-Origin). Answered with the envelope (200) like
 * every other response; browsers accept any 2xx.
 */
export async function answerPreflight(request: FastifyRequest, reply: FastifyReply) {
  varyOnOrigin(reply);
  const header = request.headers.origin;
  const origin = typeof header === 'string' ? normalizeOrigin(header) : undefined;
  if (origin) {
    reply.header('Access-Control-Allow-Origin', origin);
    reply.header('Access-Control-Allow-Methods', CORS_ALLOWED_METHODS);
    reply.header('Access-Control-Allow-Headers', CORS_ALLOWED_HEADERS);
    reply.header('Access-Control-Max-Age', String(CORS_MAX_AGE_SECONDS));
  }
  return ok(request, {
    allowedMethods: CORS_ALLOWED_METHODS.split(', '),
    allowedHeaders: CORS_ALLOWED_HEADERS.split(', '),
  });
}
