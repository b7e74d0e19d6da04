// Bundles the tag into one minified IIFE (dist/tag.js), which the server reads at start and
// serves at GET /tag.js, and fails when it outgrows its budget: api.md §6 says < 5 kB gzipped.
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outfile = path.join(root, 'dist', 'tag.js');
const BUDGET_GZIPPED = 5 * 1024;

mkdirSync(path.dirname(outfile), { recursive: true });
await build({
  entryPoints: [path.join(root, 'src', 'tag.ts')],
  outfile,
  bundle: true,
  minify: true,
  format: 'iife',
  // Every browser still in use; nothing newer is needed.
  target: ['es2017'],
  legalComments: 'none',
  banner: { js: '/* Waytrack browser tag (api.md §6) */' },
  logLevel: 'warning',
});

const bytes = readFileSync(outfile);
const gzipped = gzipSync(bytes, { level: 9 }).length;
console.log(`packages/tag: dist/tag.js ${bytes.length} bytes, ${gzipped} bytes gzipped (budget ${BUDGET_GZIPPED})`);
if (gzipped >= BUDGET_GZIPPED) {
  console.error(`packages/tag: the tag is over its ${BUDGET_GZIPPED}-byte gzipped budget`);
  process.exit(1);
}

// The Shopify checkout pixel (src/shopify-pixel.ts): pasted by the merchant into Shopify's Customer
// events, or fetched filled in from GET /shopify-pixel.js. Its two settings are plain constants at
// the top, where a merchant sees them; the server replaces the placeholders when it serves it.
const pixelFile = path.join(root, 'dist', 'shopify-pixel.js');
await build({
  entryPoints: [path.join(root, 'src', 'shopify-pixel.ts')],
  outfile: pixelFile,
  bundle: true,
  minify: true,
  format: 'iife',
  target: ['es2017'],
  legalComments: 'none',
  banner: {
    js: [
      '// Waytrack checkout pixel for Shopify: Settings → Customer events → Add custom pixel (docs/integrations.md)',
      "const WAYTRACK_ENDPOINT = 'https://WAYTRACK_HOST/v1/track/checkout';",
      "const WAYTRACK_KEY = 'wt_pk_live_REPLACE_ME';",
    ].join('\n'),
  },
  logLevel: 'warning',
});
console.log(`packages/tag: dist/shopify-pixel.js ${readFileSync(pixelFile).length} bytes`);
