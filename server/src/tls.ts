import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Config } from './config.js';
import { ConfigError } from './config.js';
import { makePrivateDir } from './data-dir.js';
import { writeFileDurably } from './durable-file.js';

export interface TlsMaterial {
  key: Buffer | string;
  cert: Buffer | string;
  /** Set when a self-signed certificate is in use: where it lives. */
  selfSignedPath?: string;
}

/** TLS_CERT/TLS_KEY when configured; otherwise a self-signed localhost certificate kept in DATA_DIR. */
export async function loadTls(config: Config): Promise<TlsMaterial> {
  if (config.tlsCert && config.tlsKey) {
    try {
      return { cert: readFileSync(config.tlsCert), key: readFileSync(config.tlsKey) };
    } catch (error) {
      throw new ConfigError(`TLS_CERT/TLS_KEY cannot be read: ${(error as Error).message}`);
    }
  }
  const certPath = path.join(config.dataDir, 'tls', 'localhost-cert.pem');
  const keyPath = path.join(config.dataDir, 'tls', 'localhost-key.pem');
  // An empty file is what a power cut left of an earlier version's write: make them again.
  const present = (file: string) => (statSync(file, { throwIfNoEntry: false })?.size ?? 0) > 0;
  if (!present(certPath) || !present(keyPath)) {
    // DATA_DIR and DATA_DIR/tls are 0700, the files 0600 (data-dir.ts).
    makePrivateDir(path.dirname(certPath));
    const notAfter = new Date();
    notAfter.setFullYear(notAfter.getFullYear() + 2);
    // Loaded only when a certificate must be made: it is slow to import and rarely needed.
    const { generate } = await import('selfsigned');
    const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
      keyType: 'ec',
      algorithm: 'sha256',
      notAfterDate: notAfter,
      extensions: [
        { name: 'basicConstraints', cA: false },
        { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
        { name: 'extKeyUsage', serverAuth: true },
        {
          name: 'subjectAltName',
          altNames: [
            { type: 2, value: 'localhost' },
            { type: 7, ip: '127.0.0.1' },
            { type: 7, ip: '::1' },
          ],
        },
      ],
    });
    // The key first: a cert on disk without its key is never read as a pair.
    writeFileDurably(keyPath, pems.private, { mode: 0o600 });
    writeFileDurably(certPath, pems.cert, { mode: 0o600 });
  }
  return { cert: readFileSync(certPath), key: readFileSync(keyPath), selfSignedPath: certPath };
}
