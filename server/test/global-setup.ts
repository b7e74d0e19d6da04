import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';

/** The end-to-end tests run the compiled CLI: compile the current sources once per test run. */
export default function setup(): void {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
}
