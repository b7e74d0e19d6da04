import type { Server, Socket } from 'node:net';
import { clientOf } from './rate-limit.js';

const counted = Symbol('waytrack.connectionClient');

type Counted = Socket & { [counted]?: string };

/**
 * At most `max` open connections per client (an IPv4 address or an IPv6 /64, as the per-IP
 * rate limits count), so that one client cannot take every connection the server allows
 * (`maxConnections`) and shut everyone else out. A connection over the cap is closed as soon
 * as it is accepted: before its TLS handshake, the costliest part of a connection.
 *
 * It counts the peer of the TCP connection: behind a proxy that is the proxy, which is why the
 * cap is off by default with TRUST_PROXY (the proxy should cap its own clients).
 *
 * A TLS server hands the accepted socket's handle over to a TLSSocket whose `_parent` it is,
 * and the accepted socket itself never emits `close`; the slot is given back when that
 * TLSSocket closes (after the handshake) or fails its handshake (`tlsClientError`, which a
 * close before the handshake is too). Plain sockets give it back on their own `close`.
 */
export function capConnectionsPerClient(server: Server, max: number): void {
  if (max <= 0) return;
  const open = new Map<string, number>();
  const release = (socket: Counted | undefined) => {
    const client = socket?.[counted];
    if (!socket || client === undefined) return;
    socket[counted] = undefined;
    const left = (open.get(client) ?? 1) - 1;
    if (left > 0) open.set(client, left);
    else open.delete(client);
  };
  const parentOf = (socket: Socket) => (socket as Socket & { _parent?: Counted })._parent ?? (socket as Counted);

  server.on('connection', (socket: Counted) => {
    const client = clientOf(socket.remoteAddress ?? '');
    const count = open.get(client) ?? 0;
    if (count >= max) {
      socket.destroy();
      return;
    }
    open.set(client, count + 1);
    socket[counted] = client;
    socket.once('close', () => release(socket));
  });
  server.on('secureConnection', (socket: Socket) => {
    socket.once('close', () => release(parentOf(socket)));
  });
  server.on('tlsClientError', (_error: Error, socket: Socket) => release(parentOf(socket)));
}
