import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, type TestDatabase } from '../engine.js';
import { cliAsync } from './process.js';

// `waytrack fx load` and `waytrack fx restate` as an operator runs them (the real CLI process).
// Awaited CLI runs, not spawnSync: the worker keeps answering vitest while a busy machine runs them.
describe('waytrack fx', { timeout: 120_000 }, () => {
  let dataDir: string;
  let testDb: TestDatabase;
  let env: Record<string, string>;

  const file = (name: string, text: string) => {
    const at = path.join(dataDir, name);
    writeFileSync(at, text);
    return at;
  };

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'waytrack-fx-'));
    testDb = await openTestDatabase(dataDir);
    await testDb.database.close();
    env = { ...testDb.env };
  });
  afterAll(async () => {
    await testDb?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('explains itself in --help', async () => {
    const help = await cliAsync(['fx', 'load', '--help'], env);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('date,base,currency,rate');
    const group = await cliAsync(['fx', '--help'], env);
    expect(group.stdout).toContain('fx restate');
  });

  it('refuses a bad file whole, naming each line, and loads nothing', async () => {
    const bad = file(
      'bad.csv',
      'date,base,currency,rate\n2026-11-20,EUR,USD,1.1\n2026-13-01,EUR,USD,1\n2026-11-20,EUR,GBP,abc\n',
    );
    const result = await cliAsync(['fx', 'load', bad], env);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('was not loaded (nothing was)');
    expect(result.stderr).toContain('line 3: date "2026-13-01" is not a calendar date');
    expect(result.stderr).toContain('line 4: rate "abc" must be a positive decimal');
    const missing = await cliAsync(['fx', 'load', path.join(dataDir, 'nope.csv')], env);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain('cannot read');
    expect(missing.stderr).toContain('ENOENT');
  });

  it('loads, reloads idempotently, and reports a changed rate', async () => {
    const rates = file('rates.csv', 'date,base,currency,rate\n2026-11-20,EUR,USD,1.0843\n2026-11-20,EUR,JPY,163.1\n');
    const first = await cliAsync(['fx', 'load', rates, '--json'], env);
    expect(first.status, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ base: 'EUR', rates: 2, added: 2, unchanged: 0 });
    const again = await cliAsync(['fx', 'load', rates], env);
    expect(again.stdout).toContain('Loaded 2 rates against EUR from 2026-11-20 to 2026-11-20: 0 new, 0 changed, 2 unchanged.');
    const changed = await cliAsync(
      ['fx', 'load', file('changed.csv', 'date,base,currency,rate\n2026-11-20,EUR,USD,1.09\n')],
      env,
    );
    expect(changed.stdout).toContain('USD on 2026-11-20: 1.0843 → 1.09');
    expect(changed.stdout).toContain('waytrack fx restate');
    const otherBase = await cliAsync(['fx', 'load', file('usd.csv', 'date,base,currency,rate\n2026-11-20,USD,EUR,0.9\n')], env);
    expect(otherBase.status).toBe(1);
    expect(otherBase.stderr).toContain('against EUR');
  });

  it('restate needs its range and prints what it did', async () => {
    const usage = await cliAsync(['fx', 'restate', '--from', '2026-11-01'], env);
    expect(usage.status).toBe(1);
    expect(usage.stderr).toContain('--to is required');
    const bad = await cliAsync(['fx', 'restate', '--from', '2026-11-31', '--to', '2026-12-01'], env);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('--from must be a calendar date');
    const ok = await cliAsync(['fx', 'restate', '--from', '2026-11-01', '--to', '2026-11-30', '--dry-run'], env);
    expect(ok.status, ok.stderr).toBe(0);
    expect(ok.stdout).toContain('Restated 2026-11-01..2026-11-30: 0 conversions would change.');
  });
});
