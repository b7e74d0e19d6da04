import { createServer, type Server } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { newId } from '../ids.js';
import { ApiError } from './errors.js';

export const HSTS = 'max-age=63072000; includeSubDomains';

const httpsRequired = () =>
  new ApiError('https_required', 'This API is served over HTTPS only; resend the request to the https:// address');

/**
 * Behind a TLS-terminating proxy (TRUST_PROXY), the proxy reports the client's scheme in
 * X-Forwarded-Proto; anything but https there means the client spoke plain HTTP.
 */
export function requireForwardedHttps(request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
  const forwarded = request.headers['x-forwarded-proto'];
  const proto = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim().toLowerCase();
  done(proto !== undefined && proto !== 'https' ? httpsRequired() : undefined);
}

/**
 * The optional plain-HTTP listener: it answers every request 403 https_required without
 * reading the body, so nothing sent over plain HTTP is ever processed or stored.
 */
export function createPlainHttpRejector(): Server {
  return createServer((req, res) => {
    const requestId = newId('request');
    const error = httpsRequired();
    const body = JSON.stringify({
      success: false,
      error: { code: error.code, message: error.message },
      meta: { timestamp: new Date().toISOString(), requestId },
    });
    res.writeHead(error.status, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(body),
      'Request-Id': requestId,
      Connection: 'close',
    });
    res.end(body);
    req.resume(); // discard whatever was sent; nothing is read or kept
  });
}
