import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Server as TlsServer } from 'node:tls';
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

/** The first byte of a TLS connection: a handshake record. */
const TLS_HANDSHAKE = 0x16;

/** `https://host/path` from a plain HTTP request's head, when its Host and target look sane. */
function httpsAddressOf(head: string): string | undefined {
  const target = /^[A-Z]+ (\/[^\s]{0,2047}) HTTP\/1\.[01]\r?\n/.exec(head)?.[1];
  const host = /\r?\nhost:[ \t]*([A-Za-z0-9.:[\]-]{1,255})[ \t]*\r?\n/i.exec(head)?.[1];
  return target && host ? `https://${host}${target}` : undefined;
}

/**
 * Plain HTTP sent to the HTTPS port (`curl http://localhost:8443/…`) used to get an empty reply:
 * the TLS handshake failed on its first byte and the connection was dropped. As nginx and Node
 * can, the port now answers it in plain HTTP — 403 `https_required`, the code api.md gives a
 * request that arrived over plain HTTP, naming the https:// address to use — and closes the
 * connection, without a second listener and without reading or keeping anything of the request.
 *
 * Node's TLS server wraps every accepted socket in its 'connection' listener; here that listener
 * waits for the connection's first bytes: a TLS handshake record (or anything not plain text)
 * goes on to TLS as before, the bytes handed back (Node's TLSSocket reads what its socket holds
 * first), and a request line in capitals is answered here. A connection that sends nothing is
 * closed after `handshakeTimeoutMs`, as a TLS handshake that never completes is.
 */
export function answerPlainHttpOnTlsPort(server: TlsServer, handshakeTimeoutMs: number): void {
  const wrapTls = server.listeners('connection').find((listener) => listener.name === 'tlsConnectionListener') as
    | ((this: TlsServer, socket: Socket) => void)
    | undefined;
  if (!wrapTls) return; // another Node: TLS as it comes
  server.removeListener('connection', wrapTls);
  server.prependListener('connection', (socket: Socket) => {
    socket.setTimeout(handshakeTimeoutMs, () => socket.destroy());
    const onReadable = () => {
      const chunk = socket.read() as Buffer | null;
      if (chunk === null) return;
      socket.removeListener('readable', onReadable);
      socket.setTimeout(0);
      if (chunk[0] === TLS_HANDSHAKE || !/^[A-Z]{3,10} /.test(chunk.subarray(0, 11).toString('latin1'))) {
        socket.unshift(chunk);
        wrapTls.call(server, socket);
        return;
      }
      answerPlainHttp(socket, chunk);
    };
    socket.on('readable', onReadable);
  });
}

function answerPlainHttp(socket: Socket, head: Buffer): void {
  const requestId = newId('request');
  const address = httpsAddressOf(head.subarray(0, 4096).toString('latin1'));
  const error = new ApiError(
    'https_required',
    `This port speaks HTTPS only; resend the request to ${address ?? 'the https:// address'}`,
  );
  const body = envelopeOf(error, requestId);
  socket.on('data', () => {}); // whatever else was sent is discarded, never read
  socket.on('error', () => {});
  socket.end(
    `HTTP/1.1 ${error.status} Forbidden\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nRequest-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
  );
  // A client that never closes its side does not hold the connection.
  setTimeout(() => socket.destroy(), 1000).unref();
}
