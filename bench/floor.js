// node bench/floor.js '<json>' — the floor a click is measured against (issue 27): a bare
// Fastify 5 server over the same TLS (the certificate and key of the server under test) that
// parses and schema-validates the same click body (the very TypeBox schema of POST
// /v1/track/click, server/src/routes/schemas/clicks.ts, bundled here by esbuild, validated by Ajv with
// the server's settings) and answers an envelope. No
// auth, no storage, no hooks, no request log: what the framework and TLS cost alone. Also
// GET /healthz (an envelope) as the floor of a health check.
//
// The JSON names `cert` and `key` (PEM file paths). Prints `listening on https://127.0.0.1:<port>`
// when ready.
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { build } from 'esbuild';
import Fastify from 'fastify';

const options = JSON.parse(process.argv[2] ?? '{}');
const root = path.resolve(import.meta.dirname, '..');

/** The click body schema of the server's sources, as its route declares it. */
async function clickSchema() {
  // Under node_modules, so that the bundle's imports of packages resolve from there.
  const cache = path.join(root, 'node_modules', '.cache');
  mkdirSync(cache, { recursive: true });
  const dir = mkdtempSync(path.join(cache, 'waytrack-floor-'));
  const outfile = path.join(dir, 'click-schema.mjs');
  try {
    await build({
      stdin: { contents: "export { ClickBody } from './server/src/routes/schemas/clicks.ts';", resolveDir: root, loader: 'ts' },
      bundle: true,
      platform: 'node',
      format: 'esm',
      packages: 'external',
      outfile,
      logLevel: 'error',
    });
    return (await import(pathToFileURL(outfile).href)).ClickBody;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
// The same settings and formats as the server's body validator (server/src/http/validation.ts): a
// floor that skipped the `uri`/`ip` format checks would be a floor below the stack's own.
const ajv = new Ajv({ coerceTypes: false, useDefaults: true, removeAdditional: false, allErrors: false, strict: false });
ajv.addKeyword({ keyword: 'x-rules', schemaType: 'array' });
addFormats.default(ajv, ['uri', 'ipv4', 'ipv6', 'hostname', 'date', 'date-time', 'email']);
const app = Fastify({
  https: { cert: readFileSync(options.cert), key: readFileSync(options.key) },
  logger: false,
  bodyLimit: 1024 * 1024,
});
app.setValidatorCompiler(({ schema }) => ajv.compile(schema));

const meta = () => ({ timestamp: new Date().toISOString(), requestId: `req_${randomUUID()}` });

app.get('/healthz', async () => ({ success: true, data: { status: 'ok' }, meta: meta() }));
app.post('/v1/track/click', { schema: { body: await clickSchema() } }, async (request) => ({
  success: true,
  data: {
    clickId: `clk_${randomUUID()}`,
    fbclid: request.body.fbclid,
    tracked: true,
    timestamp: new Date().toISOString(),
    duplicate: false,
  },
  meta: meta(),
}));

const address = await app.listen({ port: 0, host: '127.0.0.1' });
console.log(`listening on ${address}`);
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
