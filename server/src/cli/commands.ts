import { SCOPES } from '../accounts/keys.js';
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import { attributionCommands } from './attribution.js';
import { type Command, json, mode, type Values } from './command.js';
import { fxCommands } from './fx.js';

// The commands' modules load when a command runs, not before: `--help`, `--version` and usage
// errors answer at once instead of loading the whole server first.
const accounts = () => import('../accounts/accounts.js');

/** Every command of `waytrack`, in the order the help lists them. */
export const COMMANDS: Command[] = [
  {
    name: 'serve',
    summary: 'migrate, then serve the API, the dashboard and Meta forwarding over HTTPS',
    details: ['On an empty database it prints how to create the first account. Stops cleanly on SIGTERM or SIGINT.'],
    options: {},
    run: ({ config }) => serve(config),
  },
  {
    name: 'migrate',
    summary: 'apply pending database migrations and exit',
    details: [
      'Refuses a database migrated by a newer version. With several instances, run it once per release',
      'before starting them (docs/operations.md).',
    ],
    options: {},
    async run({ config }) {
      const database = await openDatabase(config);
      const applied = await database.migrate().finally(() => database.close());
      console.log(
        applied.length === 0 ? 'Database is up to date' : `Applied ${applied.length} migrations: ${applied.join(', ')}`,
      );
    },
  },
  {
    name: 'account create',
    summary: 'create an owner account with one live and one test key (scope *)',
    details: ['The keys are printed once. With --json: {"accountId","email","keys":{"live","test"}}.'],
    options: {
      email: { type: 'string', value: 'EMAIL', required: true, help: "the owner's email address (their dashboard sign-in)" },
      password: { type: 'string', value: 'PASSWORD', help: 'dashboard password (or set it later with `account password`)' },
      json,
    },
    async run({ config, values }) {
      const email = values.email as string;
      const password = typeof values.password === 'string' ? values.password : undefined;
      const { createAccount } = await accounts();
      const account = await withDatabase(config, (db) => createAccount(db, { email, password }));
      if (values.json) {
        console.log(JSON.stringify(account));
      } else {
        console.log(`Account ${account.accountId} created for ${account.email}`);
        console.log(`Live key: ${account.keys.live}`);
        console.log(`Test key: ${account.keys.test}`);
        console.log('These keys are shown once; store them now.');
      }
    },
  },
  {
    name: 'account list',
    summary: 'list the accounts: id, email, created, whether a dashboard password is set',
    details: ['With --json: [{"accountId","email","createdAt","hasPassword"}], oldest first.'],
    options: { json },
    async run({ config, values }) {
      const { listAccounts } = await accounts();
      const list = await withDatabase(config, (db) => listAccounts(db));
      if (values.json) {
        console.log(JSON.stringify(list));
      } else if (list.length === 0) {
        console.log('No account yet. Create one: waytrack account create --email you@example.com');
      } else {
        const width = Math.max(...list.map((a) => a.email.length), 'EMAIL'.length);
        console.log(`${'ACCOUNT'.padEnd(31)}  ${'EMAIL'.padEnd(width)}  ${'CREATED'.padEnd(24)}  DASHBOARD PASSWORD`);
        for (const a of list) {
          console.log(
            `${a.accountId.padEnd(31)}  ${a.email.padEnd(width)}  ${a.createdAt.padEnd(24)}  ${a.hasPassword ? 'set' : 'not set'}`,
          );
        }
      }
    },
  },
  {
    name: 'account password',
    summary: "set an owner's dashboard password and sign out their sessions",
    details: ['The password is typed without echo, or read from the first line of standard input when it is not a terminal.'],
    options: { email: { type: 'string', value: 'EMAIL', required: true, help: "the account's email address" } },
    async run({ config, values }) {
      const email = values.email as string;
      const { readPassword } = await import('../password-input.js');
      const { setPassword, checkPassword } = await accounts();
      const password = await readPassword(checkPassword);
      const { accountId } = await withDatabase(config, (db) => setPassword(db, email, password));
      console.log(
        `Dashboard password set for ${email.trim().toLowerCase()} (${accountId}); its dashboard sessions were signed out.`,
      );
    },
  },
  {
    name: 'keys create',
    summary: 'create an API key (printed once), or with --publishable a browser tag key for one store',
    details: [
      'With --json: {"keyId","key","mode","scopes"} (publishable: also "storeId" and "origins").',
      'Find the account id with `waytrack account list`.',
    ],
    options: {
      account: { type: 'string', value: 'ID', help: 'the account (acct_…) the key belongs to; see `waytrack account list`' },
      mode,
      scopes: {
        type: 'string',
        value: 'a,b',
        help: `comma-separated scopes (default *): ${SCOPES.join(', ')}`,
      },
      name: { type: 'string', value: 'NAME', help: 'a label shown in key lists' },
      publishable: {
        type: 'boolean',
        help: "a publishable key (wt_pk_…) for the browser tag: clicks:write on one store's pages",
      },
      store: { type: 'string', value: 'ST', help: 'the store (st_…) a publishable key records clicks for' },
      origins: {
        type: 'string',
        value: 'https://a.example,…',
        help: "origins allowed besides the store's domain (publishable keys)",
      },
      json,
    },
    forms: [
      {
        required: ['account', 'mode'],
        optional: ['scopes', 'name', 'json'],
        refuse: { store: '--store and --origins need --publishable', origins: '--store and --origins need --publishable' },
      },
      {
        required: ['publishable', 'store'],
        optional: ['mode', 'origins', 'name', 'account', 'json'],
        refuse: { scopes: 'a publishable key has the clicks:write scope only; leave --scopes out' },
      },
    ],
    run: ({ config, values }) => (values.publishable ? createPublishable(config, values) : createSecretKey(config, values)),
  },
  {
    name: 'keys list',
    summary: "list an account's keys with their display hint (never the key itself)",
    details: ['With --json: an array of {"keyId","name","mode","scopes","hint","createdAt","revokedAt",…}.'],
    options: { account: { type: 'string', value: 'ID', required: true, help: 'the account (acct_…)' }, json },
    async run({ config, values }) {
      const { listKeys } = await accounts();
      const list = await withDatabase(config, (db) => listKeys(db, values.account as string));
      if (values.json) {
        console.log(JSON.stringify(list));
        return;
      }
      for (const k of list) {
        console.log(
          `${k.keyId}  ${k.mode}  ${k.hint}  ${k.scopes.join(',')}  ${k.revokedAt ? `revoked ${k.revokedAt}` : 'active'}  ${k.name}`,
        );
      }
    },
  },
  {
    name: 'keys revoke',
    args: ['KEY_ID'],
    summary: 'revoke a key; every running instance refuses it within seconds',
    options: {},
    async run({ config, args }) {
      const keyId = args[0] as string;
      const { revokeKey } = await accounts();
      await withDatabase(config, (db) => revokeKey(db, keyId));
      console.log(`Key ${keyId} revoked`);
    },
  },
  {
    name: 'backup',
    args: ['FILE'],
    summary: 'copy the embedded database to FILE while the server keeps running',
    details: [
      'A consistent snapshot holding every write committed before it began, written beside FILE and',
      'renamed into place when complete (an existing FILE is replaced). The secrets key is not in it:',
      'keep DATA_DIR/secrets.key (or SECRETS_KEY) safe separately. On PostgreSQL it writes nothing,',
      'prints the pg_dump command for DATABASE_URL and exits 1. See docs/operations.md.',
    ],
    options: {},
    async run({ config, args }) {
      const { backupDatabase } = await import('../db/open.js');
      const result = await backupDatabase(config, args[0] as string);
      const schema = result.migrations.at(-1) ?? 'none';
      console.log(`Backed up the database to ${result.file} (${result.bytes} bytes, schema ${schema}).`);
      console.log(secretsKeyReminder(config));
    },
  },
  {
    name: 'restore',
    args: ['FILE'],
    summary: 'replace the embedded database with a backup (stop the server first)',
    details: [
      'Checks FILE (a healthy Waytrack database, not newer than this version), refuses while a server has',
      "DATA_DIR's database open, and swaps it in atomically. Start the server afterwards: it applies any",
      'newer migrations. On PostgreSQL it changes nothing, prints the pg_restore command and exits 1.',
    ],
    options: {},
    async run({ config, args }) {
      const { restoreDatabase } = await import('../db/open.js');
      const result = await restoreDatabase(config, args[0] as string);
      console.log(
        `Restored ${args[0]} into ${result.file} (${result.bytes} bytes, schema ${result.migrations.at(-1) ?? 'none'}).`,
      );
      console.log(
        config.secretsKey
          ? "SECRETS_KEY must be the key of the installation the backup came from (it opens the stores' Meta access tokens)."
          : `${config.dataDir}/secrets.key must be the key of the installation the backup came from: copy it there before starting, or the stores' Meta access tokens cannot be opened.`,
      );
      console.log('Start the server (waytrack serve): it migrates the database to this version first.');
    },
  },
  ...fxCommands(withDatabase),
  ...attributionCommands(withDatabase),
];

/** Whose secrets key to keep with the backups: SECRETS_KEY's, or the generated file's. */
function secretsKeyReminder(config: Config): string {
  return config.secretsKey
    ? 'The secrets key is not in the backup: SECRETS_KEY is set, so keep its value safe with your backups.'
    : `The secrets key is not in the backup: keep a copy of ${config.dataDir}/secrets.key safe with your backups.`;
}

/** The database the configuration names (the one `serve` opens). */
async function openDatabase(config: Config): Promise<Database> {
  const { openDatabase: open } = await import('../db/open.js');
  const { databaseUrl, preparedStatements, dataDir } = config;
  return open({ databaseUrl, preparedStatements, dataDir });
}

async function withDatabase<T>(config: Config, work: (db: Database) => Promise<T>): Promise<T> {
  const database = await openDatabase(config);
  try {
    await database.migrate();
    return await work(database);
  } finally {
    await database.close();
  }
}

async function serve(config: Config): Promise<void> {
  // A reader of standard output that goes away (`serve | head -1`) must not stop the server.
  const { guardStandardStreams } = await import('../stdio.js');
  guardStandardStreams();
  const { startServer } = await import('../server.js');
  const server = await startServer(config);
  const stop = (signal: string) => {
    console.log(`${signal} received, shutting down`);
    server.close().then(
      () => process.exit(0),
      (error) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

function list(value: string | boolean | undefined): string[] | undefined {
  if (typeof value !== 'string') return undefined;
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

async function createSecretKey(config: Config, values: Values): Promise<void> {
  const accountId = values.account as string;
  const keyMode = values.mode as 'live' | 'test';
  const name = typeof values.name === 'string' ? values.name : undefined;
  const { createKey } = await accounts();
  const key = await withDatabase(config, (db) => createKey(db, { accountId, mode: keyMode, scopes: list(values.scopes), name }));
  if (values.json) console.log(JSON.stringify(key));
  else console.log(`Key ${key.keyId} (${key.mode}, scopes ${key.scopes.join(',')}): ${key.key}\nShown once; store it now.`);
}

/** `keys create --publishable`: a browser tag's key for one store (api.md §6); live unless --mode test. */
async function createPublishable(config: Config, values: Values): Promise<void> {
  const storeId = values.store as string;
  const keyMode = (values.mode ?? 'live') as 'live' | 'test';
  const origins = list(values.origins) ?? [];
  const name = typeof values.name === 'string' ? values.name : undefined;
  const accountId = typeof values.account === 'string' ? values.account : undefined;
  const { createPublishableKeyForStore } = await import('../accounts/publishable.js');
  const key = await withDatabase(config, (db) =>
    createPublishableKeyForStore(db, { storeId, mode: keyMode, origins, name, accountId }),
  );
  if (values.json) {
    console.log(JSON.stringify(key));
  } else {
    const extra = key.origins.length > 0 ? `, also from ${key.origins.join(', ')}` : '';
    console.log(`Publishable key ${key.keyId} (${key.mode}, store ${key.storeId}${extra}): ${key.key}`);
    console.log(`Put it in the store's pages: <script async src="https://WAYTRACK_HOST/tag.js" data-key="${key.key}"></script>`);
  }
}
