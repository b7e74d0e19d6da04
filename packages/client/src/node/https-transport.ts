// Node only, and loaded only when `ca` is given (a dynamic import, and `false` in package.json
// "browser"), so browser bundles never see node:https. Node's global fetch cannot be told which
// CA to trust without undici's dispatcher, which Node bundles but does not export.
import { readFile } from 'node:fs/promises';
import https from 'node:https';
import type { Transport } from '../transport/types.js';

/** The CA as PEM text: given inline (string or bytes), or read from the file a string names. */
export async function readCa(ca: string | Uint8Array): Promise<string | Buffer> {
  if (typeof ca !== 'string') return Buffer.from(ca);
  if (ca.includes('-----BEGIN')) return ca;
  try {
    return await readFile(ca);
  } catch (error) {
    throw new Error(`could not read the CA certificate file ${ca}: ${(error as Error).message}`, { cause: error });
  }
}

/** HTTPS over node:https, trusting `ca`, on one keep-alive agent (idle sockets do not hold the process open). */
export async function nodeHttpsTransport(ca: string | Uint8Array): Promise<Transport> {
  const agent = new https.Agent({ keepAlive: true, ca: await readCa(ca) });
  return {
    send(request) {
      const headers: Record<string, string | number> = { ...request.headers };
      if (request.body !== undefined) headers['content-length'] = Buffer.byteLength(request.body);
      return new Promise((resolve, reject) => {
        const req = https.request(request.url, { method: request.method, headers, agent, signal: request.signal }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            const header = (name: string) => {
              const value = res.headers[name.toLowerCase()];
              return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
            };
            resolve({ status: res.statusCode ?? 0, header, body: Buffer.concat(chunks).toString('utf8') });
          });
          // A connection dropped (or aborted) mid-body never emits 'end'.
          res.on('close', () => {
            if (!res.complete) reject(new Error('the connection closed before the response was complete'));
          });
          res.on('error', reject);
        });
        req.on('error', reject);
        req.end(request.body);
      });
    },
  };
}
