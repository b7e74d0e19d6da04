// The client's types (packages/client/src/generated/openapi.ts) are generated from the server's
// OpenAPI document: regenerated here in memory, they must equal the committed file, so a route
// schema change that is not carried into the client fails the suite.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OpenApiDocument, render, renderTypes } from '../../../packages/client/scripts/render-types.ts';
import { createTestContext, type TestContext } from '../helpers.js';

const GENERATED = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../packages/client/src/generated/openapi.ts');

describe('@waytrack/client generated types', () => {
  let ctx: TestContext;
  let document: OpenApiDocument;
  beforeAll(async () => {
    ctx = await createTestContext();
    const res = await ctx.app.inject({ method: 'GET', url: '/v1/openapi.json' });
    expect(res.statusCode).toBe(200);
    document = res.json() as OpenApiDocument;
  });
  afterAll(async () => ctx?.close());

  it('the committed file equals what the server document generates (run `npm run generate -w packages/client`)', () => {
    expect(readFileSync(GENERATED, 'utf8')).toBe(renderTypes(document));
  });

  it('covers every /v1 operation of the document, and nothing else', () => {
    const generated = renderTypes(document);
    const keys = [...generated.matchAll(/^ {2}'([A-Z]+ \/v1\/[^']+)': \{$/gm)].map((m) => m[1]);
    const expected = Object.entries(document.paths)
      .filter(([p]) => p.startsWith('/v1/'))
      .flatMap(([p, operations]) => Object.keys(operations).map((method) => `${method.toUpperCase()} ${p}`));
    expect(keys.sort()).toEqual(expected.sort());
    expect(keys).toContain('POST /v1/track/conversion');
    expect(generated).not.toContain('/healthz');
  });
});

describe('render-types', () => {
  it('renders required and optional properties, nullable unions, enums, arrays and records', () => {
    const type = render(
      {
        type: 'object',
        required: ['id', 'tags'],
        properties: {
          id: { type: 'string', description: 'The id' },
          pixelId: { anyOf: [{ type: 'string' }, { type: 'null' }] },
          status: { enum: ['active', 'inactive'] },
          tags: { type: 'array', items: { type: 'string' } },
          rows: { type: 'array', items: { type: 'object', properties: { n: { type: 'integer' } } } },
          totals: { type: 'object', additionalProperties: { type: 'number' } },
          'x-odd': { const: true },
        },
      },
      0,
      'test',
    );
    expect(type).toBe(
      [
        '{',
        '  /** The id */',
        '  id: string;',
        '  pixelId?: string | null;',
        "  status?: 'active' | 'inactive';",
        '  tags: string[];',
        '  rows?: Array<{',
        '    n?: number;',
        '  }>;',
        '  totals?: Record<string, number>;',
        "  'x-odd'?: true;",
        '}',
      ].join('\n'),
    );
  });

  it('refuses schema it does not understand instead of guessing', () => {
    expect(() => render({ allOf: [{ type: 'string' }] }, 0, 'body.a')).toThrow(/unsupported keyword "allOf" at body.a/);
    expect(() => render({ type: 'bigint' }, 0, 'body.b')).toThrow(/unsupported type "bigint" at body.b/);
  });
});
