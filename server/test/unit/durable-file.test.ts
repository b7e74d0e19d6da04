import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { writeFileDurably } from '../../src/durable-file.js';

const STRACE = '/usr/bin/strace';
const here = path.dirname(fileURLToPath(import.meta.url));
if (!existsSync(STRACE)) console.log('skipped: install strace (the system-call order of durable writes is read with it)');

/**
 * The system calls a child process makes while it generates the secrets key and the TLS
 * certificate into an empty DATA_DIR, one list per thread, in order (strace -ff: a file per
 * thread, so a call is never split across lines by another thread's call). A power cut can only
 * keep what the calls made durable, so the order is the evidence.
 */
async function traceGeneration(dataDir: string): Promise<string[][]> {
  const tsx = createRequire(import.meta.url).resolve('tsx');
  const script = `
    const { loadSecretsKey } = await import(${JSON.stringify(path.join(here, '../../src/secrets.ts'))});
    const { loadTls } = await import(${JSON.stringify(path.join(here, '../../src/tls.ts'))});
    loadSecretsKey({ secretsKey: undefined, dataDir: ${JSON.stringify(dataDir)} });
    await loadTls({ dataDir: ${JSON.stringify(dataDir)} });`;
  const traceDir = mkdtempSync(path.join(tmpdir(), 'waytrack-trace-'));
  try {
    await promisify(execFile)(
      STRACE,
      [
        '-ff',
        '-qq',
        '-o',
        path.join(traceDir, 'trace'),
        '-e',
        'trace=openat,write,fsync,fdatasync,rename,renameat,renameat2,link,linkat,close',
        process.execPath,
        '--import',
        tsx,
        '--input-type=module',
        '-e',
        script,
      ],
      { timeout: 60_000 },
    );
    return readdirSync(traceDir).map((f) => readFileSync(path.join(traceDir, f), 'utf8').split('\n'));
  } finally {
    rmSync(traceDir, { recursive: true, force: true });
  }
}

/** Checks, for one file, the order: temp written and fsynced, moved into place, directory fsynced. */
function expectDurable(threads: string[][], file: string) {
  const dir = path.dirname(file);
  const base = path.basename(file);
  const opensTemp = (l: string) => l.startsWith('openat(') && l.includes(`${dir}/.${base}.`) && l.includes('O_EXCL');
  const lines = threads.find((t) => t.some(opensTemp));
  expect(lines, `no temporary file opened for ${base}`).toBeDefined();
  if (!lines) return;
  const fdOf = (line: string) => /= (\d+)$/.exec(line)?.[1];
  const openTemp = lines.findIndex(opensTemp);
  const fd = fdOf(lines[openTemp] as string);
  const after = (from: number, test: (l: string) => boolean) => (from < 0 ? -1 : lines.findIndex((l, i) => i > from && test(l)));
  const write = after(openTemp, (l) => l.startsWith(`write(${fd},`));
  const sync = after(write, (l) => new RegExp(`^f(data)?sync\\(${fd}\\)`).test(l));
  const move = after(sync, (l) => /^(rename|link)(at2?)?\(/.test(l) && l.includes(`${dir}/${base}"`));
  const openDir = after(move, (l) => l.startsWith('openat(') && l.includes(`"${dir}"`) && l.includes('O_RDONLY'));
  const dirFd = openDir >= 0 ? fdOf(lines[openDir] as string) : undefined;
  const dirSync = after(openDir, (l) => new RegExp(`^f(data)?sync\\(${dirFd}\\)`).test(l));
  const steps = { write, sync, move, openDir, dirSync };
  for (const [name, at] of Object.entries(steps)) {
    expect(at, `${base}: no ${name} in order\n${lines.join('\n')}`).toBeGreaterThan(openTemp);
  }
  // The final name is never opened for writing, by any thread: it only ever appears complete.
  const writesFinal = (l: string) => l.includes(`"${dir}/${base}"`) && /O_WRONLY|O_RDWR/.test(l);
  expect(threads.some((t) => t.some(writesFinal))).toBe(false);
}

describe('files written durably (secrets key, TLS certificate and key)', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it.skipIf(!existsSync(STRACE))(
    'reach the disk before their name does: temp file fsynced, renamed, directory fsynced',
    async () => {
      const dataDir = mkdtempSync(path.join(tmpdir(), 'waytrack-durable-'));
      dirs.push(dataDir);
      const threads = await traceGeneration(dataDir);
      expectDurable(threads, path.join(dataDir, 'secrets.key'));
      expectDurable(threads, path.join(dataDir, 'tls', 'localhost-key.pem'));
      expectDurable(threads, path.join(dataDir, 'tls', 'localhost-cert.pem'));
    },
    90_000,
  );

  it('never replaces an existing file when exclusive, and leaves no temporary file behind', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'waytrack-durable-'));
    dirs.push(dir);
    const file = path.join(dir, 'key');
    writeFileDurably(file, 'first', { exclusive: true });
    expect(() => writeFileDurably(file, 'second', { exclusive: true })).toThrow(/EEXIST/);
    writeFileDurably(path.join(dir, 'other'), 'a');
    writeFileDurably(path.join(dir, 'other'), 'b');
    expect(readFileSync(file, 'utf8')).toBe('first');
    expect(readFileSync(path.join(dir, 'other'), 'utf8')).toBe('b');
    expect(readdirSync(dir).sort()).toEqual(['key', 'other']);
  });
});
