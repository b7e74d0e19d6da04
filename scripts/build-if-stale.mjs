#!/usr/bin/env node
// `npm start` runs this first (prestart): it builds what is stale, and only that, so an unchanged
// checkout starts in about a second while an edited one never serves stale code. `npm run build`
// (which `npm ci` runs through `prepare`) still builds everything, unconditionally.
//
// A target is current when it has outputs and no input changed after it was last built. "Last
// built" is the later of two moments: when this script last began building it (its stamp), and
// the oldest of its outputs — a full build rewrites every output file, so after `npm run build`
// nothing is rebuilt here.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const STAMP = '.build-stamp';

// Inputs of every target: the shared compiler settings and the installed dependencies.
const SHARED = ['tsconfig.json', 'package-lock.json'].map((f) => path.join(root, f));

/** Every file under `dir`, skipping outputs, dependencies, tests, hidden files and prose. */
function filesUnder(dir, skip = new Set(['node_modules', 'dist', 'test', 'coverage'])) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (skip.has(entry.name) || entry.name.startsWith('.') || entry.name.endsWith('.md')) return [];
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? filesUnder(full, skip) : [full];
  });
}

const targets = [
  // Each workspace with a build script (the server, the client, the tag, the dashboard): its own
  // files in, its dist/ out (their builds empty dist/ or rewrite all of it).
  ...JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'))
    .workspaces.map((dir) => ({ dir, pkg: JSON.parse(readFileSync(path.join(root, dir, 'package.json'), 'utf8')) }))
    .filter(({ pkg }) => pkg.scripts?.build)
    .map(({ dir, pkg }) => ({
      name: dir,
      dist: path.join(root, dir, 'dist'),
      inputs: () => [...filesUnder(path.join(root, dir)), ...SHARED],
      outputs: () => filesUnder(path.join(root, dir, 'dist'), new Set()),
      build: () => run(npm, ['run', 'build', '--silent', '--workspace', pkg.name]),
    })),
];

function run(command, args) {
  return spawnSync(command, args, { cwd: root, stdio: 'inherit' }).status === 0;
}

const mtime = (file) => (existsSync(file) ? statSync(file).mtimeMs : 0);

/** Why `target` must be built, or undefined when it is current. */
function staleness(target) {
  const outputs = target.outputs();
  if (outputs.length === 0) return 'not built yet';
  const builtAt = Math.max(mtime(path.join(target.dist, STAMP)), Math.min(...outputs.map(mtime)));
  const changed = target.inputs().find((f) => mtime(f) > builtAt);
  if (changed) return `${path.relative(root, changed)} changed`;
  return undefined;
}

const started = performance.now();
let built = 0;
for (const target of targets) {
  const stale = staleness(target);
  if (!stale) continue;
  console.error(`build: ${target.name} (${stale})`);
  // Inputs edited while the build runs are newer than this, so the next start builds them again.
  const begun = new Date();
  if (!target.build()) {
    console.error(`build: ${target.name} failed`);
    process.exit(1);
  }
  const stamp = path.join(target.dist, STAMP);
  writeFileSync(stamp, `${begun.toISOString()}\n`);
  utimesSync(stamp, begun, begun);
  built++;
}
if (built > 0) console.error(`build: done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
