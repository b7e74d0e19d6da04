// npm run generate -w packages/client — writes src/generated/openapi.ts from the OpenAPI
// document of the server in this repository, built in-process on a throwaway database
// (run by tsx, so the server's TypeScript sources are used as they are, without a build).
// `npx tsx scripts/generate-types.ts path/to/openapi.json` renders a saved document instead.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildApp } from '../../../server/src/app.ts';
import { loadConfig } from '../../../server/src/config.ts';
import { openSqlite } from '../../../server/src/db/sqlite/database.ts';
import { type OpenApiDocument, renderTypes } from './render-types.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const GENERATED_FILE = path.resolve(here, '../src/generated/openapi.ts');

async function serverDocument(): Promise<OpenApiDocument> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'waytrack-openapi-'));
  const database = openSqlite(dataDir);
  try {
    await database.migrate();
    const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
    const app = await buildApp({ config, database, logger: false });
    await app.ready();
    const document = app.swagger() as unknown as OpenApiDocument;
    await app.close();
    return document;
  } finally {
    await database.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const source = process.argv[2];
const document = source ? (JSON.parse(readFileSync(source, 'utf8')) as OpenApiDocument) : await serverDocument();
writeFileSync(GENERATED_FILE, renderTypes(document));
console.log(`wrote ${path.relative(process.cwd(), GENERATED_FILE)}`);
