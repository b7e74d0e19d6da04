import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SCOPES } from '../../src/accounts/keys.js';
import { cliAsync, databaseForProcesses } from './process.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** Every command api.md §4 names, plus the operator's account list, backup, restore and exchange rates. */
const COMMANDS = [
  'serve',
  'migrate',
  'account create',
  'account list',
  'account password',
  'keys create',
  'keys list',
  'keys revoke',
  'backup',
  'restore',
  'fx load',
  'fx restate',
];

// The real CLI: --help, --version and usage errors. None of them reads the database, so this file
// runs in the SQLite pass only (vitest.config.ts); account list and --scopes, which do, are in
// cli-accounts.test.ts, on each engine.
describe('waytrack --help, --version and usage errors (end to end)', () => {
  const testDb = databaseForProcesses('waytrack-cli-help-');
  // Help and usage errors never touch the database; a configuration that cannot start proves it.
  const broken = { PORT: 'eighty', DATA_DIR: '/nonexistent/waytrack' };

  it('--help (and no arguments at all) lists every command and how to get its options', async () => {
    for (const args of [['--help'], ['-h'], []]) {
      const result = await cliAsync(args, broken);
      expect(result.status, result.stderr).toBe(0);
      expect(result.stdout).toMatch(/^Usage: waytrack <command>/);
      for (const command of COMMANDS) expect(result.stdout).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
      expect(result.stdout).toContain('waytrack keys create --help');
      expect(result.stdout).toContain('--version');
    }
  }, 120_000);

  it('<command> --help shows that command: its usage and every option, without reading the configuration', async () => {
    for (const command of COMMANDS) {
      const result = await cliAsync([...command.split(' '), '--help'], broken);
      expect(result.status, `${command}: ${result.stderr}`).toBe(0);
      expect(result.stdout).toMatch(new RegExp(`^Usage: waytrack ${command}\\b`));
    }
    const keys = await cliAsync(['keys', 'create', '--help'], broken);
    const usage = keys.stdout.split('\n\n')[0] as string;
    expect(usage).toContain('waytrack keys create --account ID --mode live|test [--scopes a,b] [--name NAME] [--json]');
    expect(usage).toContain('waytrack keys create --publishable --store ST');
    for (const option of [
      '--account',
      '--mode',
      '--scopes',
      '--name',
      '--publishable',
      '--store',
      '--origins',
      '--json',
      '--help',
    ]) {
      expect(keys.stdout).toMatch(new RegExp(`^  (-h, )?${option}\\b`, 'm'));
    }
    for (const scope of SCOPES) expect(keys.stdout).toContain(scope);
    expect(keys.stdout).toContain('waytrack account list');

    const group = await cliAsync(['keys', '--help'], broken);
    expect(group.status).toBe(0);
    for (const command of ['keys create', 'keys list', 'keys revoke KEY_ID']) expect(group.stdout).toContain(command);
    const helpWord = await cliAsync(['help', 'backup'], broken);
    expect(helpWord.stdout).toMatch(/^Usage: waytrack backup FILE/);
  }, 120_000);

  it('every option the help shows is one the command accepts (help and parser share one table)', async () => {
    const checks = await Promise.all(
      COMMANDS.map(async (command) => {
        const help = (await cliAsync([...command.split(' '), '--help'], broken)).stdout;
        const options = [...help.matchAll(/^ {2}--([a-z-]+)/gm)].map((m) => m[1] as string);
        // Given the option, parsing passes: what stops the command is something else (an
        // extra argument, a missing option or the broken configuration), never "unknown option".
        return Promise.all(
          options.map(async (option) => ({
            what: `${command} --${option}`,
            stderr: (await cliAsync([...command.split(' '), `--${option}`, 'x', 'y'], broken)).stderr,
          })),
        );
      }),
    );
    const all = checks.flat();
    expect(all.length).toBeGreaterThanOrEqual(15);
    for (const { what, stderr } of all) {
      expect(stderr, what).not.toContain('unknown option');
      expect(stderr, what).not.toBe('');
    }
  }, 120_000);

  it('--version prints the server package version', async () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'server/package.json'), 'utf8'));
    for (const flag of ['--version', '-v']) {
      const result = await cliAsync([flag], broken);
      expect(result.status).toBe(0);
      expect(result.stdout).toBe(`${pkg.version}\n`);
    }
  }, 120_000);

  it.each([
    [['frobnicate'], 'unknown command "frobnicate"', 'waytrack --help'],
    [['keys', 'frob'], 'unknown command "keys frob"', 'waytrack keys --help'],
    [['keys'], '"keys" needs a command: create, list, revoke', 'waytrack keys --help'],
    [['--frob'], 'unknown option --frob', 'waytrack --help'],
    [['keys', 'list', '--frob'], 'unknown option --frob', 'waytrack keys list --help'],
    [['account', 'create', '--email'], '--email needs a value', 'waytrack account create --help'],
    [['keys', 'create', '--mode', 'live'], '--account is required', 'waytrack keys create --help'],
    [['keys', 'create', '--account', 'a', '--mode', 'prod'], '--mode must be live or test', 'waytrack keys create --help'],
    [['keys', 'revoke'], 'KEY_ID is required', 'waytrack keys revoke --help'],
    [['keys', 'revoke', 'key_1', 'key_2'], 'unexpected argument "key_2"', 'waytrack keys revoke --help'],
    [['backup'], 'FILE is required', 'waytrack backup --help'],
  ])(
    '%j: non-zero exit, one line naming the problem and pointing to --help',
    async (args, message, pointer) => {
      const result = await cliAsync(args, testDb.env);
      expect(result.status).not.toBe(0);
      expect(result.stdout).toBe('');
      const lines = result.stderr.trimEnd().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(message);
      expect(lines[0]).toContain(`\`${pointer}\``);
    },
    120_000,
  );
});

describe('a DATA_DIR that cannot be made', () => {
  it('is one line on stderr and exit 1, for serve and for a command (Node’s recursive mkdir loops there)', async () => {
    for (const args of [['serve'], ['account', 'list']]) {
      const result = await cliAsync(args, { DATA_DIR: '/proc/nope', PORT: '0' });
      expect(result.status, `${args.join(' ')}: ${result.stderr}`).toBe(1);
      expect(result.stderr).toBe(
        'waytrack: cannot create the directory /proc/nope (ENOENT: no such file or directory); set DATA_DIR to a directory Waytrack can create and write\n',
      );
    }
  }, 60_000);
});
