import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openTestDatabase, type TestDatabase } from '../engine.js';
import { tempDir } from '../helpers.js';
import { BIN, freePort } from './process.js';

/** GET over HTTPS, trusting only the server's own certificate; the status, or the error's code. */
function get(port: number, ca: Buffer, urlPath: string): Promise<number | string> {
  return new Promise((resolve) => {
    const req = https.get({ host: '127.0.0.1', port, path: urlPath, ca, servername: 'localhost', timeout: 2000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
    req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

// `waytrack serve | head -1`: the reader of standard output goes away while the server starts.
describe('serve: standard output closed by its reader', () => {
  let dataDir = '';
  let testDb: TestDatabase | undefined;
  afterEach(async () => {
    await testDb?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps serving, says so once on stderr, and stops on SIGTERM', async () => {
    dataDir = tempDir();
    testDb = await openTestDatabase(dataDir);
    await testDb.database.close();
    const port = await freePort();
    const { DATABASE_URL: _runner, ...inherited } = process.env;
    const child = spawn(process.execPath, [BIN, 'serve'], {
      env: { ...inherited, ...testDb.env, PORT: String(port), LOG_LEVEL: 'debug' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    try {
      // Like `head -1`: read the first line, then close the pipe while the server is still starting.
      const first = await new Promise<string>((resolve, reject) => {
        let out = '';
        const onData = (d: Buffer) => {
          out += d;
          const end = out.indexOf('\n');
          if (end < 0) return;
          child.stdout.off('data', onData);
          child.stdout.destroy();
          resolve(out.slice(0, end));
        };
        child.stdout.on('data', onData);
        child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${stderr}`)));
      });
      expect(first.length).toBeGreaterThan(0);

      // The certificate is made at start; then /healthz must answer (polled: the server is starting).
      const certPath = path.join(dataDir, 'tls', 'localhost-cert.pem');
      let status: number | string = 'not started';
      const deadline = Date.now() + 20_000;
      while (status !== 200 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
        let ca: Buffer;
        try {
          ca = readFileSync(certPath);
        } catch {
          continue;
        }
        status = await get(port, ca, '/healthz');
        // Requests make log lines: each one meets the closed pipe too.
        if (status === 200) status = await get(port, ca, '/healthz');
      }
      expect(status, stderr).toBe(200);
      expect(stderr.match(/standard output is closed/g), stderr).toHaveLength(1);

      child.kill('SIGTERM');
      const stopped = await Promise.race([exited, new Promise((r) => setTimeout(() => r('still running'), 10_000))]);
      expect(stopped).toEqual({ code: 0, signal: null });
    } finally {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
    }
  }, 40_000);
});
