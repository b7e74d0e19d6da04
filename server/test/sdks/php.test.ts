import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runChild as run, type SdkServer, startSdkServer } from './harness.js';

// The PHP library (sdks/php) tested with its own PHPUnit suite against a real server process and
// the failing proxy. PHP is optional on a developer's machine: without it this file says so and skips.
const PHP_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../sdks/php');

const php = await run('php', [
  '-r',
  'exit(PHP_VERSION_ID >= 80100 && extension_loaded("curl") && extension_loaded("json") ? 0 : 1);',
]);
const phpunit = await run('phpunit', ['--version']);
const missing = php.code !== 0 || phpunit.code !== 0;
if (missing) console.log('skipped: install php-cli php-curl phpunit');

describe('PHP client library (sdks/php) against a real server', () => {
  let sdkServer: SdkServer | undefined;

  beforeAll(async () => {
    if (!missing) sdkServer = await startSdkServer('php');
  }, 240_000); // a server start: up to 90 s on a busy machine (e2e/process.ts)

  afterAll(async () => {
    await sdkServer?.close();
  });

  it.skipIf(missing)(
    'passes its PHPUnit suite, unit and integration, with nothing skipped',
    async () => {
      const env = { ...process.env, ...sdkServer?.env };
      const result = await run('phpunit', ['--configuration', 'phpunit.xml.dist', '--colors=never'], {
        cwd: PHP_DIR,
        env,
        timeoutMs: 110_000,
      });
      const passed = /^OK \(\d+ tests?, \d+ assertions?\)$/m.test(result.output);
      if (result.code !== 0 || !passed) console.log(result.output);
      expect(result.code, 'phpunit exit code (its output is printed above)').toBe(0);
      // "OK (n tests, …)" only when every test ran and passed; skipped tests print "OK, but …".
      expect(passed, 'every PHPUnit test ran and passed, none skipped (output above)').toBe(true);
    },
    120_000,
  );
});
