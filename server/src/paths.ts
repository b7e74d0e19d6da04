import { fileURLToPath } from 'node:url';

/**
 * Where the service's own files are. Relative to this module, which runs in one of two places,
 * both one level below server/: as server/src/paths.ts under the test runner, or bundled into
 * server/dist/main.js or dist/worker.js by the build (server/scripts/build.mjs). Modules bundled deeper in dist/
 * must not import it; the build checks that.
 */

/** server/src/ or server/dist/: the code, laid out the same way in both. */
export const CODE_ROOT = new URL('./', import.meta.url);

/** The extension of the code's modules where it runs: TypeScript sources or built JavaScript. */
export const CODE_EXTENSION = import.meta.url.endsWith('.ts') ? '.ts' : '.js';

/** server/ */
const SERVER_ROOT = new URL('../', import.meta.url);

/**
 * server/dist/: the code as `npm run build` lays it out (the same layout as src/). Under the test
 * runner the vitest global setup builds it from the current sources before any test runs.
 */
export const BUILT_CODE_ROOT = new URL('dist/', SERVER_ROOT);

/** server/package.json */
export const SERVER_PACKAGE = new URL('package.json', SERVER_ROOT);

/** Where `npm run build` puts the dashboard (dashboard/dist at the repository root). */
export const DASHBOARD_DIST = fileURLToPath(new URL('../dashboard/dist/', SERVER_ROOT));

/** Where `npm run build` puts the browser tag (packages/tag/dist at the repository root). */
export const TAG_FILE = fileURLToPath(new URL('../packages/tag/dist/tag.js', SERVER_ROOT));

/** Where `npm run build` puts the Shopify checkout pixel (served filled in at GET /shopify-pixel.js). */
export const PIXEL_FILE = fileURLToPath(new URL('../packages/tag/dist/shopify-pixel.js', SERVER_ROOT));
