import { createServer, type Server } from 'node:http';
import type { Server as NetServer, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
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
 * Bodies are read as sent: a compressed one (`Content-Encoding: gzip`) would be parsed as if it
 * were JSON text, so it is refused by name instead.
 */
export function refuseEncodedBodies(request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
  const encoding = request.headers['content-encoding']?.trim().toLowerCase();
  const plain = encoding === undefined || encoding === '' || encoding === 'identity';
  done(
    plain
      ? undefined
      : new ApiError('invalid_request', `Content-Encoding ${encoding} is not accepted; send the JSON body uncompressed`, {
          field: 'Content-Encoding',
          reason: 'unsupported_media_type',
        }),
  );
}

/**
 * The optional plain-HTTP listener: it answers every request 403 https_required without
 * reading the body, so nothing sent over plain HTTP is ever processed or stored.
 */
export function createPlainHttpRejector(): Server {
  return createServer((req, res) => {
    const requestId = newId('request');
    const error = httpsRequired();
    const body = envelopeOf(error, requestId);
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

/** The error envelope, for answers written outside Fastify (no request object there). */
function envelopeOf(error: ApiError, requestId: string): string {
  return JSON.stringify({
    success: false,
    error: { code: error.code, message: error.message, ...(error.details && { details: error.details }) },
    meta: { timestamp: new Date().toISOString(), requestId },
  });
}

/** What Node's HTTP parser refused, in the envelope's words. */
function fromParserError(error: NodeJS.ErrnoException): ApiError {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return new ApiError('invalid_request', 'The request was not received in time; send it again without pausing', {
      reason: 'request_timeout',
    });
  }
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    return new ApiError('invalid_request', 'The request headers are larger than 16 KiB', { reason: 'malformed_request' });
  }
  return new ApiError('invalid_request', 'The request is not valid HTTP/1.1 (bad framing, header or chunk)', {
    reason: 'malformed_request',
  });
}

/**
 * Fastify's clientErrorHandler: a request Node's HTTP parser refused (bad chunk size, both
 * Content-Length and Transfer-Encoding, a NUL in a header, headers over 16 KiB, a request not
 * received within the request timeout) gets the envelope with a request id, then the
 * connection is closed (its framing can no longer be trusted). A connection the client reset
 * has nobody to answer.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  if (socket.writable) {
    const requestId = newId('request');
    const apiError = fromParserError(error);
    const body = envelopeOf(apiError, requestId);
    socket.write(
      `HTTP/1.1 ${apiError.status} Bad Request\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nRequest-Id: ${requestId}\r\nStrict-Transport-Security: ${HSTS}\r\n` +
        `Connection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

/**
 * Plain HTTP sent to the HTTPS port (`curl http://localhost:8443/…`): OpenSSL recognizes it while
 * waiting for a handshake (ERR_SSL_HTTP_REQUEST). Instead of a connection closed without a word,
 * the client gets a plain-HTTP answer on the same socket, as nginx's "plain HTTP request was
 * sent to HTTPS port": 403 `https_required` (the contract's code for a request over plain HTTP)
 * saying to use https://. Nothing of the request is read or processed; no second listener.
 * The TLS socket's `_parent` is the accepted TCP socket (http/connection-limits.ts).
 */
export function answerPlainHttpOnTlsPort(server: NetServer): void {
  server.on('tlsClientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    if (error.code !== 'ERR_SSL_HTTP_REQUEST') return;
    const raw = (socket as Socket & { _parent?: Socket })._parent;
    if (!raw || raw.destroyed || !raw.writable) return;
    const requestId = newId('request');
    const apiError = new ApiError(
      'https_required',
      'This port speaks HTTPS only: plain HTTP was sent to it. Resend the request to the https:// address',
    );
    const body = envelopeOf(apiError, requestId);
    raw.end(
      `HTTP/1.1 ${apiError.status} Forbidden\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nRequest-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
