// `waytrack account password --email E` (api.md §4): the real CLI, its password typed at a
// terminal without echo (a pseudo-terminal made by util-linux `script`), or piped on stdin.
import { spawn } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyCredentials } from '../../src/accounts/accounts.js';
import type { Database } from '../../src/db/database.js';
import { openTestDatabase, type TestDatabase } from '../engine.js';
import { tempDir } from '../helpers.js';
import { BIN, cli } from './process.js';

const EMAIL = 'owner@example.com';

/** The environment of a CLI process: the test's database, not the runner's DATABASE_URL. */
function env(extra: Record<string, string>): NodeJS.ProcessEnv {
  const { DATABASE_URL: _runner, ...inherited } = process.env;
  return { ...inherited, LOG_LEVEL: 'silent', ...extra };
}

describe('waytrack account password', () => {
  let dataDir: string;
  let testDb: TestDatabase;
  let database: Database;

  /**
   * Runs the CLI with `input` as its standard input (a pipe: not a terminal). Asynchronously:
   * the test worker keeps answering its runner meanwhile.
   */
  const run = (args: string[], input: string) =>
    new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [BIN, ...args], { env: env(testDb.env) });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk) => {
        stdout += chunk;
      });
      child.stderr.on('data', (chunk) => {
        stderr += chunk;
      });
      child.on('error', reject);
      child.on('close', (status) => resolve({ status, stdout, stderr }));
      child.stdin.end(input);
    });
  const piped = (input: string, email = EMAIL) => run(['account', 'password', '--email', email], input);

  beforeAll(async () => {
    dataDir = tempDir('waytrack-password-');
    testDb = await openTestDatabase(dataDir);
    // Another connection of our own to check the result; the CLI opens the database itself.
    database = testDb.openAnother();
    const created = cli(['account', 'create', '--email', EMAIL], testDb.env);
    expect(created.status, created.stderr).toBe(0);
  }, 180_000);

  afterAll(async () => {
    await testDb?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('sets the password from the first line of standard input when it is not a terminal', async () => {
    expect(await verifyCredentials(database, EMAIL, 'first password')).toBeUndefined();
    const result = await piped('first password\nignored second line\n');
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Dashboard password set for owner@example\.com \(acct_[0-9a-z]+\)/);
    expect(result.stdout).not.toContain('first password');
    expect(await verifyCredentials(database, EMAIL, 'first password')).toMatchObject({ email: EMAIL });
    // A Windows line ending is not part of the password; the email is matched as sign-in does.
    expect((await piped('second password\r\n', ' Owner@Example.COM ')).status).toBe(0);
    expect(await verifyCredentials(database, EMAIL, 'second password')).toBeDefined();
    expect(await verifyCredentials(database, EMAIL, 'first password')).toBeUndefined();
  });

  it('refuses a short password, an empty input and an unknown email, changing nothing', async () => {
    expect((await piped('good password 3\n')).status).toBe(0);
    const short = await piped('7 chars\n');
    expect(short.status).toBe(1);
    expect(short.stderr).toContain('password must be at least 8 characters');
    const empty = await piped('');
    expect(empty.status).toBe(1);
    expect(empty.stderr).toContain('no password on standard input');
    const unknown = await piped('long enough\n', 'nobody@example.com');
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toContain('no account with email nobody@example.com');
    const noEmail = await run(['account', 'password'], 'long enough\n');
    expect(noEmail.status).toBe(1);
    expect(noEmail.stderr).toContain('--email is required');
    expect(await verifyCredentials(database, EMAIL, 'good password 3')).toBeDefined();
  });

  it.runIf(existsSync('/usr/bin/script'))('reads the password at a terminal without echoing it, twice', async () => {
    /**
     * Runs the command in a pseudo-terminal (whose echo is on, as a terminal's is) and types
     * each answer once its prompt has appeared: whatever the command does not silence, the
     * terminal echoes into the output.
     */
    const typed = (answers: string[]) =>
      new Promise<{ status: number | null; output: string }>((resolve, reject) => {
        const command = [process.execPath, BIN, 'account', 'password', '--email', EMAIL].map((a) => `'${a}'`).join(' ');
        const child = spawn('/usr/bin/script', ['-q', '-e', '-f', '-c', command, '/dev/null'], {
          env: env(testDb.env),
          stdio: ['pipe', 'pipe', 'pipe'],
        });
        let output = '';
        let prompts = 0;
        child.stdout.on('data', (chunk) => {
          output += chunk;
          const seen = (output.match(/password: /gi) ?? []).length;
          while (prompts < seen && prompts < answers.length) child.stdin.write(`${answers[prompts++]}\r`);
        });
        const timer = setTimeout(() => {
          child.kill();
          reject(new Error(`no answer in time:\n${output}`));
        }, 20_000);
        child.on('exit', (status) => {
          clearTimeout(timer);
          resolve({ status, output });
        });
      });

    const ok = await typed(['typed at a tty', 'typed at a tty']);
    expect(ok.status, ok.output).toBe(0);
    expect(ok.output).toContain('New dashboard password: ');
    expect(ok.output).toContain('Repeat the password: ');
    expect(ok.output).toContain('Dashboard password set for owner@example.com');
    expect(ok.output).not.toContain('typed at a tty');
    expect(await verifyCredentials(database, EMAIL, 'typed at a tty')).toBeDefined();

    // A password too short is refused after its first entry, not after typing it twice.
    const short = await typed(['7 chars']);
    expect(short.status, short.output).toBe(1);
    expect(short.output).toContain('password must be at least 8 characters');
    expect(short.output).not.toContain('Repeat the password');

    const differ = await typed(['one password', 'another password']);
    expect(differ.status).toBe(1);
    expect(differ.output).toContain('the two passwords differ; nothing was changed');
    expect(differ.output).not.toMatch(/one password|another password/);
    expect(await verifyCredentials(database, EMAIL, 'typed at a tty')).toBeDefined();
  });
});
