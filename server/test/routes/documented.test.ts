import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY_CACHE_TTL_MS } from '../../src/http/auth.js';
import { call, createTestContext, makeStore, type TestContext } from '../helpers.js';

// What README.md, docs/ and the dashboard tell a user agrees with what the server does.

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

/** Every file under `dir` (relative to the root) whose name ends with `suffix`. */
function filesUnder(dir: string, suffix: string): string[] {
  return readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith(suffix))
    .map((name) => path.join(dir, name));
}

/** The names in the first column of the table under `## heading` (backticked, comma-separated). */
function tableFields(markdown: string, heading: string): string[] {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  expect(start, `## ${heading}`).toBeGreaterThanOrEqual(0);
  const end = markdown.indexOf('\n## ', start + 1);
  const section = markdown.slice(start, end === -1 ? undefined : end);
  return section
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .flatMap((line) => [...(line.split('|')[1] ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1] as string));
}

describe("README's Metrics table names every field GET /v1/analytics/metrics answers, and only those", () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext();
  });
  afterAll(async () => ctx.close());

  it.each(['live', 'test'] as const)('with a %s key', async (mode) => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const res = await call(ctx.app, 'GET', `/v1/analytics/metrics?storeId=${storeId}`, { key: ctx.a[mode] });
    expect(res.status).toBe(200);
    expect(tableFields(read('README.md'), 'Metrics').sort()).toEqual(Object.keys(res.body.data).sort());
    expect(res.body.data.livemode).toBe(mode === 'live');
  });
});

describe('key revocation: one figure everywhere, the key cache lifetime', () => {
  const sources = ['README.md', ...filesUnder('docs', '.md'), ...filesUnder('dashboard/src', '.tsx')];
  /** Each "within N s" / "within N seconds" / "within seconds" said of a revoked key. */
  const claims = sources.flatMap((file) => {
    const text = read(file).replace(/\s+/g, ' ');
    return [...text.matchAll(/within (?:(\d+(?:\.\d+)?)[ -]?(?:s|seconds?)\b|seconds\b)/g)]
      .filter((m) => /revok/i.test(text.slice(Math.max(0, (m.index ?? 0) - 200), m.index)))
      .map((m) => ({ file, said: m[0], seconds: m[1] === undefined ? undefined : Number(m[1]) }));
  });

  it('says it where a user revokes a key: the CLI table, the API decisions, the dashboard and its dialog', () => {
    const files = new Set(claims.map((c) => c.file));
    for (const file of ['README.md', 'docs/api.md', 'docs/dashboard.md', 'dashboard/src/pages/api-keys.tsx']) {
      expect(files, file).toContain(file);
    }
  });

  it(`says ${KEY_CACHE_TTL_MS / 1000} s (KEY_CACHE_TTL_MS) every time`, () => {
    const wrong = claims.filter((c) => c.seconds !== KEY_CACHE_TTL_MS / 1000);
    expect(wrong).toEqual([]);
  });
});

describe("docs/operations.md's log table lists every background failure the server logs", () => {
  it('each "…; retrying" message of server/src is in the table', () => {
    const messages = new Set(
      filesUnder('server/src', '.ts').flatMap((file) =>
        [...read(file).matchAll(/'([^'\n]+; retrying)'/g)].map((m) => m[1] as string),
      ),
    );
    expect(messages.size).toBeGreaterThanOrEqual(3);
    const table = read('docs/operations.md')
      .split('\n')
      .filter((line) => line.trimStart().startsWith('| '));
    for (const message of messages) {
      expect(
        table.some((row) => row.includes(`\`${message}\``)),
        message,
      ).toBe(true);
    }
  });

  it('and the end of a rollup failure streak', () => {
    expect(read('docs/operations.md')).toContain('`analytics rollups are refreshed again, after N failed attempts over S s`');
  });
});
