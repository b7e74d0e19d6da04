#!/usr/bin/env node
// The waytrack CLI. It runs the built service (server/dist, bundled by server/scripts/build.mjs),
// which `npm ci` builds through the `prepare` script, `npm start` rebuilds when a source changed
// (scripts/build-if-stale.mjs) and the end-to-end tests rebuild, so it never runs stale code.
import { existsSync } from 'node:fs';

const main = new URL('../dist/main.js', import.meta.url);
if (!existsSync(main)) {
  console.error('waytrack: the service is not built yet; run `npm run build` in the repository root');
  process.exit(1);
}
await import(main.href);
