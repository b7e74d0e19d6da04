import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { HEAP_POLICY, leakVerdict } from './memory.js';

const here = path.dirname(fileURLToPath(import.meta.url));

// The fuzzer's leak check must be able to fail: shown here on an app that keeps every request.

describe('the fuzzer memory check', () => {
  it('passes steady memory and fails steady growth', () => {
    const mb = 1024 * 1024;
    const steady = Array.from({ length: 12 }, (_, i) => ({ requests: i * 200, bytes: 80 * mb + (i % 3) * 2 * mb }));
    expect(leakVerdict(steady, HEAP_POLICY)).toBeUndefined();
    const leaking = Array.from({ length: 12 }, (_, i) => ({ requests: i * 200, bytes: 80 * mb + i * 8 * mb }));
    expect(leakVerdict(leaking, HEAP_POLICY)).toMatch(/memory grew/);
  });

  it('catches a server that keeps something of every request', async () => {
    // In a process of its own (leaking-server.ts): the check's full GCs there walk that server's
    // heap, not the test worker's (30 s for ten of them once, beside other test files).
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', createRequire(import.meta.url).resolve('tsx'), path.join(here, 'leaking-server.ts')],
      { timeout: 120_000 },
    );
    const result = JSON.parse(stdout.trim().split('\n').at(-1) as string) as {
      measure: string;
      verdict: string | null;
      kept: number;
    };
    expect(result.kept).toBe(500);
    expect(result.measure).toBe('heapUsed+external after GC');
    expect(result.verdict, `${result.measure}: the leak went unnoticed`).toMatch(/memory grew/);
  }, 150_000);
});
