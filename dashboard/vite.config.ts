import { defineConfig } from 'vite';

// The server serves dist/ at /dashboard (server/src/dashboard/static.ts): index.html for every
// page of the app, assets/ with content hashes in their names and a year-long cache.
export default defineConfig({
  base: '/dashboard/',
  // Preact's JSX runtime, compiled by esbuild: no Babel, no preset.
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // scripts/report-size.mjs prints the sizes that matter (gzipped, per first page) itself.
    reportCompressedSize: false,
  },
});
