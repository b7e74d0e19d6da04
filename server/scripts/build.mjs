#!/usr/bin/env node
// Builds the service into server/dist: a few self-contained ES modules made by esbuild from the
// TypeScript sources, with their dependencies inside. Loading one bundle instead of hundreds of
// modules is most of why the service is ready in under a second (bench/README.md); the type
// check is `npm run typecheck`, not this.
//
// The entry points keep their place under src/ (dist mirrors src), because they find each other
// and the repository's other files by relative location (src/paths.ts):
// - main     the CLI and the service (bin/waytrack.js runs it);
// - worker   the embedded database's worker thread (db/sqlite/worker-thread.ts starts it), with
//            every job it runs inside (src/jobs.ts, the one table of them).
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const server = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const src = path.join(server, 'src');
const dist = path.join(server, 'dist');

const ENTRIES = ['main', 'worker'];

// Left as imports of node_modules: a native addon, and packages that read files of their own
// (their assets, their worker scripts) relative to where they are installed.
const EXTERNAL = ['better-sqlite3', '@fastify/swagger-ui', 'pino', 'pino-pretty', 'pg-native'];

// What CommonJS dependencies expect of their scope, inside an ES module.
const BANNER = [
  "import { createRequire as __waytrackRequire } from 'node:module';",
  "import { fileURLToPath as __waytrackPath } from 'node:url';",
  'const require = __waytrackRequire(import.meta.url);',
  'const __filename = __waytrackPath(import.meta.url);',
  "const __dirname = __waytrackPath(new URL('.', import.meta.url));",
].join('\n');

rmSync(dist, { recursive: true, force: true });
const result = await build({
  entryPoints: ENTRIES.map((entry) => ({ in: path.join(src, `${entry}.ts`), out: entry })),
  outdir: dist,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: EXTERNAL,
  banner: { js: BANNER },
  // Whitespace and syntax only: identifiers keep their names, so stack traces and profiles read
  // without esbuild's keepNames, whose __name() call on every function created (closures of the
  // request path included) cost ~10 µs per click and more at startup than parsing the longer
  // names (bench/README.md).
  minifyWhitespace: true,
  minifySyntax: true,
  sourcemap: 'linked',
  metafile: true,
  logLevel: 'warning',
});

// src/paths.ts locates files from one level below server/: only a bundle there may contain it.
for (const [file, output] of Object.entries(result.metafile.outputs)) {
  const nested = path.relative(dist, path.resolve(file)).includes(path.sep);
  const inputs = Object.keys(output.inputs).map((input) => path.resolve(input));
  if (nested && inputs.includes(path.join(src, 'paths.ts'))) {
    console.error(`build: ${file} contains src/paths.ts, which only works one level below server/`);
    process.exit(1);
  }
}

// Each bundle's text stays in its thread's heap as one string (V8 keeps a module's source): with
// every character Latin-1 it takes a byte a character, and a single other character (an em dash
// in a regular expression literal, which esbuild leaves as it is) makes all of main.js two bytes a
// character, ~4 MB more of the event loop's heap (bench/README.md, "Memory"). Write such a
// character as an escape (`\u2014`) in the source.
for (const file of Object.keys(result.metafile.outputs).filter((file) => file.endsWith('.js'))) {
  const text = readFileSync(file, 'utf8');
  const at = text.search(/[^\u0000-\u00ff]/u);
  if (at >= 0) {
    console.error(`build: ${file} has a character beyond Latin-1 near: ${JSON.stringify(text.slice(Math.max(0, at - 40), at + 10))}`);
    process.exit(1);
  }
}
