#!/usr/bin/env node
// `npm test`: Biome first (about a second), then the type check and the whole suite side by side.
// tsc takes ~15 s of one core, which the suite's first seconds (starting its workers, building
// what is stale) leave free; one after the other it was ~15 s more of every run. A type error
// stops the suite and fails the run. Arguments go to vitest: `npm test -- --project sqlite`.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => path.join(root, 'node_modules', '.bin', name);

/** Runs a command from the repository root; resolves with its exit code (1 when killed by a signal). */
function run(command, args, options = {}) {
  const child = spawn(bin(command), args, { cwd: root, stdio: 'inherit', ...options });
  const exited = new Promise((resolve) => {
    child.on('error', (error) => {
      console.error(`${command}: ${error.message}`);
      resolve(1);
    });
    child.on('exit', (code) => resolve(code ?? 1));
  });
  return { child, exited };
}

const lint = await run('biome', ['check', '.']).exited;
if (lint !== 0) process.exit(lint);

const started = Date.now();
const typecheck = run('tsc', ['-p', '.'], { stdio: ['ignore', 'pipe', 'pipe'] });
let typeErrors = '';
typecheck.child.stdout.on('data', (chunk) => {
  typeErrors += chunk;
});
typecheck.child.stderr.on('data', (chunk) => {
  typeErrors += chunk;
});
// A process group of its own, so that stopping it stops its workers too (SIGTERM to vitest alone
// leaves them running); Ctrl-C and a stop of this script reach it through here.
const suite = run('vitest', ['run', ...process.argv.slice(2)], { detached: true });
const stopSuite = (signal) => {
  try {
    process.kill(-suite.child.pid, signal);
  } catch {
    // already gone
  }
};
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => stopSuite(signal));

const typed = await typecheck.exited;
if (typed === 0) {
  console.log(`tsc -p .: no type errors (${((Date.now() - started) / 1000).toFixed(1)} s, beside the tests)`);
} else {
  process.stderr.write(typeErrors);
  console.error('tsc -p . found type errors (above): the tests are stopped');
  stopSuite('SIGTERM');
}
const tested = await suite.exited;
process.exit(typed !== 0 ? typed : tested);
