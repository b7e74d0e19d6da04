// The test files a worker runs share the modules they import (vitest.config.ts, isolate: false).
// A file that replaced a module (vi.mock) would hand its replacement to every later file of its
// worker, or meet the real module another file loaded first. Tests pass a seam instead (the
// database's `wal.fdatasync` in server/test/db/wal.test.ts).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const TEST_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const REPLACES_A_MODULE = /\bvi\s*\.\s*(mock|doMock|unmock|doUnmock|resetModules)\s*\(/;

function sourcesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' || entry.name === 'artifacts' ? [] : sourcesUnder(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

describe('test files sharing a worker', () => {
  it('finds the test sources it checks', () => {
    const files = sourcesUnder(TEST_ROOT).map((f) => path.relative(TEST_ROOT, f));
    expect(files).toContain('db/wal.test.ts');
    expect(files.length).toBeGreaterThan(100);
  });

  it('replace no module: no vi.mock, vi.doMock, vi.unmock or vi.resetModules', () => {
    const replacing = sourcesUnder(TEST_ROOT)
      .filter((file) => file !== fileURLToPath(import.meta.url))
      .filter((file) => REPLACES_A_MODULE.test(readFileSync(file, 'utf8')))
      .map((file) => path.relative(TEST_ROOT, file));
    expect(replacing).toEqual([]);
  });

  it('the check itself sees a replacement', () => {
    expect(REPLACES_A_MODULE.test("vi.mock('node:fs', () => ({}))")).toBe(true);
    expect(REPLACES_A_MODULE.test('vi.doMock("./x.js")')).toBe(true);
    expect(REPLACES_A_MODULE.test('vi.waitFor(() => {})')).toBe(false);
  });
});
