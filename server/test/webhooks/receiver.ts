import { mkdtempSync, rmSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config.js';
import { loadTls } from '../../src/tls.js';

export interface Received {
  /** The request's path: each endpoint of a test has its own. */
  path: string;
  headers: Record<string, string>;
  body: string;
  at: number;
}

/**
 * A merchant's webhook receiver: a local https server with the self-signed localhost
 * certificate the server makes for itself (tls.ts), so a test trusts it by its `cert` (or
 * NODE_EXTRA_CA_CERTS=`certPath` for a server process). `answer` decides each response.
 */
export class Receiver {
  readonly received: Received[] = [];
  /** Status per request (default 200); may also delay. */
  answer: (request: Received, index: number) => number | Promise<number> = () => 200;

  private constructor(
    private readonly server: https.Server,
    private readonly dir: string,
    readonly cert: Buffer | string,
    readonly certPath: string,
  ) {}

  static async start(): Promise<Receiver> {
    const dir = mkdtempSync(path.join(tmpdir(), 'waytrack-receiver-'));
    const tls = await loadTls(loadConfig({ DATA_DIR: dir }));
    let receiver: Receiver | undefined;
    const server = https.createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', async () => {
        const got: Received = {
          path: req.url ?? '',
          headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])),
          body: Buffer.concat(chunks).toString('utf8'),
          at: Date.now(),
        };
        const self = receiver as Receiver;
        self.received.push(got);
        const status = await self.answer(got, self.received.length - 1);
        res.writeHead(status, { 'content-type': 'text/plain' }).end('thanks');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    receiver = new Receiver(server, dir, tls.cert, tls.selfSignedPath as string);
    return receiver;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** An endpoint URL on this receiver (localhost: the certificate's name). */
  url(pathname = '/hooks'): string {
    return `https://localhost:${this.port}${pathname}`;
  }

  ofType(type: string): Received[] {
    return this.received.filter((r) => (JSON.parse(r.body) as { type: string }).type === type);
  }

  async waitFor(predicate: () => boolean, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      if (Date.now() > deadline) throw new Error(`timed out; received ${this.received.length}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
    rmSync(this.dir, { recursive: true, force: true });
  }
}
