// After `vite build`: writes .gz and .br beside every file of dist/ (the server sends them to
// browsers that accept them), prints each asset's size, and fails the build when the
// JavaScript the first page loads is over its budget (150 kB gzipped, api.md's quality bar).
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const BUDGET_BYTES = 150 * 1000;
const dist = fileURLToPath(new URL('../dist/', import.meta.url));

function filesUnder(dir) {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? filesUnder(full) : [full];
  });
}

const kB = (bytes) => `${(bytes / 1000).toFixed(1)} kB`;
const sizes = new Map();
for (const file of filesUnder(dist).filter((f) => !/\.(gz|br)$/.test(f))) {
  const content = readFileSync(file);
  const gzip = gzipSync(content, { level: 9 });
  const brotli = brotliCompressSync(content, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } });
  writeFileSync(`${file}.gz`, gzip);
  writeFileSync(`${file}.br`, brotli);
  sizes.set(path.relative(dist, file), { raw: content.length, gzip: gzip.length, brotli: brotli.length });
}

// The first page's scripts: the entry and what index.html preloads with it.
const html = readFileSync(path.join(dist, 'index.html'), 'utf8');
const firstPage = [...html.matchAll(/<(?:script[^>]*\ssrc|link[^>]*rel="modulepreload"[^>]*\shref)="\/dashboard\/([^"]+\.js)"/g)].map((m) => m[1]);
if (firstPage.length === 0) throw new Error('report-size: no script found in dist/index.html');

console.log('\nDashboard build (dist/):');
for (const [name, size] of [...sizes].sort(([a], [b]) => a.localeCompare(b))) {
  console.log(`  ${name.padEnd(40)} ${kB(size.raw).padStart(10)}  gzip ${kB(size.gzip).padStart(9)}  brotli ${kB(size.brotli).padStart(9)}`);
}
const firstPageGzip = firstPage.reduce((sum, name) => sum + (sizes.get(name)?.gzip ?? 0), 0);
console.log(`First page JavaScript: ${kB(firstPageGzip)} gzipped (budget ${kB(BUDGET_BYTES)}): ${firstPage.join(', ')}\n`);
if (firstPageGzip > BUDGET_BYTES) {
  console.error(`report-size: the first page loads ${kB(firstPageGzip)} of gzipped JavaScript, over the ${kB(BUDGET_BYTES)} budget`);
  process.exit(1);
}
