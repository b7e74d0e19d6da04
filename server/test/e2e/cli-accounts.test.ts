import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SCOPES } from '../../src/accounts/keys.js';
import { cliAsync, databaseForProcesses } from './process.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

// The real CLI on each engine: account list, and keys create refusing an unknown scope. (Help,
// --version and usage errors touch no database: cli-help.test.ts, on SQLite only.)
describe('waytrack account list and keys create --scopes (end to end)', () => {
  const testDb = databaseForProcesses('waytrack-cli-accounts-');

  it('account list shows every account (id, email, created) so that keys create --account can be found', async () => {
    const env = testDb.env;
    const empty = await cliAsync(['account', 'list', '--json'], env);
    expect(empty.status, empty.stderr).toBe(0);
    expect(JSON.parse(empty.stdout)).toEqual([]);
    expect((await cliAsync(['account', 'list'], env)).stdout).toContain('No account yet');

    const first = JSON.parse((await cliAsync(['account', 'create', '--email', 'first@example.com', '--json'], env)).stdout);
    const second = JSON.parse(
      (await cliAsync(['account', 'create', '--email', 'second@example.com', '--password', 'long enough pw', '--json'], env))
        .stdout,
    );
    const listed = await cliAsync(['account', 'list', '--json'], env);
    expect(listed.status).toBe(0);
    const accounts = JSON.parse(listed.stdout);
    expect(accounts).toEqual([
      { accountId: first.accountId, email: 'first@example.com', createdAt: expect.any(String), hasPassword: false },
      { accountId: second.accountId, email: 'second@example.com', createdAt: expect.any(String), hasPassword: true },
    ]);
    for (const a of accounts) expect(Math.abs(Date.parse(a.createdAt) - Date.now())).toBeLessThan(120_000);

    const text = (await cliAsync(['account', 'list'], env)).stdout.split('\n');
    expect(text[0]).toMatch(/^ACCOUNT\s+EMAIL\s+CREATED/);
    expect(text[1]).toMatch(new RegExp(`^${first.accountId}\\s+first@example\\.com\\s+\\d{4}-\\d\\d-\\d\\dT`));
    expect(text[2]).toMatch(new RegExp(`^${second.accountId}\\s+second@example\\.com\\s+`));

    // The id found there is the one keys create --account takes.
    const key = await cliAsync(['keys', 'create', '--account', accounts[1].accountId, '--mode', 'test', '--json'], env);
    expect(key.status, key.stderr).toBe(0);
    expect(JSON.parse(key.stdout).key).toMatch(/^wt_test_/);
  }, 120_000);

  it('an unknown --scopes value is refused with the list of valid scopes; README lists them too', async () => {
    const account = JSON.parse(
      (await cliAsync(['account', 'create', '--email', 'scopes@example.com', '--json'], testDb.env)).stdout,
    );
    const result = await cliAsync(
      ['keys', 'create', '--account', account.accountId, '--mode', 'live', '--scopes', 'clicks:write,clicks:delete'],
      testDb.env,
    );
    expect(result.status).not.toBe(0);
    expect(result.stdout).not.toContain('wt_live_');
    expect(result.stderr).toContain('unknown scope "clicks:delete"');
    for (const scope of ['*', ...SCOPES]) expect(result.stderr).toContain(scope);

    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    for (const scope of SCOPES) expect(readme).toContain(`\`${scope}\``);
    expect(readme).toContain('waytrack --help');
  }, 120_000);
});
