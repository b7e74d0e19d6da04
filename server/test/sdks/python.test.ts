import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runChild as run, type SdkServer, startSdkServer } from './harness.js';

// The Python library (sdks/python) tested with its own unittest suite — pure unit tests plus the
// test_live_* modules against a real server process and the failing proxy. Python ≥ 3.9 is
// optional on a developer's machine: without it this file says so and skips.
const PYTHON_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../sdks/python');

const python = await run('python3', ['-c', 'import sys; sys.exit(0 if sys.version_info >= (3, 9) else 1)']);
const missing = python.code !== 0;
if (missing) console.log('skipped: the Python library needs python3 ≥ 3.9 on PATH');

describe('Python client library (sdks/python) against a real server', () => {
  let sdkServer: SdkServer | undefined;

  beforeAll(async () => {
    if (!missing) sdkServer = await startSdkServer('python');
  }, 240_000); // a server start: up to 90 s on a busy machine (e2e/process.ts)

  afterAll(async () => {
    await sdkServer?.close();
  });

  it.skipIf(missing)(
    'passes its unittest suite, unit and live, with nothing skipped',
    async () => {
      const env = {
        ...process.env,
        ...sdkServer?.env,
        PYTHONPATH: path.join(PYTHON_DIR, 'src'),
        // No __pycache__ left in the work tree; unbuffered so a killed run still shows its output.
        PYTHONDONTWRITEBYTECODE: '1',
        PYTHONUNBUFFERED: '1',
      };
      const result = await run('python3', ['-m', 'unittest', 'discover', '-s', path.join(PYTHON_DIR, 'tests'), '-v'], {
        cwd: PYTHON_DIR,
        env,
        timeoutMs: 110_000,
      });
      const ran = Number(/^Ran (\d+) tests? in /m.exec(result.output)?.[1] ?? 0);
      // unittest closes with a bare "OK" only when nothing was skipped ("OK (skipped=n)" otherwise).
      const passed = /^OK$/m.test(result.output);
      if (result.code !== 0 || !passed || ran < 50) console.log(result.output);
      expect(result.code, 'python -m unittest exit code (its output is printed above)').toBe(0);
      expect(passed, 'every test ran and passed, none skipped (output above)').toBe(true);
      // The live modules skip themselves without a server: make sure they were found and ran.
      expect(result.output).toMatch(
        /test_503_is_retried_with_the_same_idempotency_key \(test_live_retries\.RetriesTest[^)]*\) \.\.\. ok/,
      );
      expect(ran).toBeGreaterThanOrEqual(50);
    },
    120_000,
  );
});
