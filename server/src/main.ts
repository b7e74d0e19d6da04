import { parseArgs } from 'node:util';
import { AccountError, createAccount, createKey, listKeys, revokeKey, setPassword } from './accounts/accounts.js';
import { createPublishableKeyForStore } from './accounts/publishable.js';
import { type Config, ConfigError, loadConfig } from './config.js';
import { PasswordInputError, readPassword } from './password-input.js';
import { openDatabase, startServer } from './server.js';

const USAGE = `Usage: waytrack <command>

  serve                                   migrate, then serve the API over HTTPS
  migrate                                 apply database migrations and exit
  account create --email E [--password P] [--json]
  account password --email E              set an owner's dashboard password (typed without echo, or
                                          the first line of standard input when it is not a terminal)
  keys create --account ID --mode live|test [--scopes a,b] [--name N] [--json]
  keys create --publishable --store ST [--mode live|test] [--origins https://a.example,...] [--name N] [--json]
  keys list --account ID [--json]
  keys revoke KEY_ID

Configuration comes from the environment (PORT, HOST, HTTP_PORT, DATA_DIR, TLS_CERT, TLS_KEY, ...).`;

class UsageError extends Error {}

function options(args: string[], spec: Record<string, { type: 'string' | 'boolean' }>) {
  try {
    return parseArgs({ args, options: spec, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

function required(value: string | boolean | undefined, flag: string): string {
  if (typeof value !== 'string' || value === '') throw new UsageError(`${flag} is required`);
  return value;
}

async function withDatabase<T>(config: Config, work: (db: ReturnType<typeof openDatabase>) => Promise<T>): Promise<T> {
  const database = openDatabase(config);
  try {
    await database.migrate();
    return await work(database);
  } finally {
    await database.close();
  }
}

async function serve(config: Config): Promise<void> {
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

export async function run(argv: string[]): Promise<void> {
  const [command, sub, ...rest] = argv;
  if (!command || command === 'help' || command === '--help' || command === '-h') {
    console.log(USAGE);
    return;
  }
  const config = loadConfig();
  switch (command) {
    case 'serve':
      return serve(config);
    case 'migrate': {
      const database = openDatabase(config);
      const applied = await database.migrate().finally(() => database.close());
      console.log(applied.length === 0 ? 'Database is up to date' : `Applied ${applied.length} migrations`);
      return;
    }
    case 'account': {
      if (sub === 'password') return accountPassword(config, rest);
      if (sub !== 'create') throw new UsageError(`unknown command: account ${sub ?? ''}`);
      const { values } = options(rest, { email: { type: 'string' }, password: { type: 'string' }, json: { type: 'boolean' } });
      const email = required(values.email, '--email');
      const password = typeof values.password === 'string' ? values.password : undefined;
      const account = await withDatabase(config, (db) => createAccount(db, { email, password }));
      if (values.json) {
        console.log(JSON.stringify(account));
      } else {
        console.log(`Account ${account.accountId} created for ${account.email}`);
        console.log(`Live key: ${account.keys.live}`);
        console.log(`Test key: ${account.keys.test}`);
        console.log('These keys are shown once; store them now.');
      }
      return;
    }
    case 'keys':
      return keys(config, sub, rest);
    default:
      throw new UsageError(`unknown command: ${command}`);
  }
}

/** `account password --email E`: sets the password an owner signs in to the dashboard with. */
async function accountPassword(config: Config, rest: string[]): Promise<void> {
  const { values } = options(rest, { email: { type: 'string' } });
  const email = required(values.email, '--email');
  const password = await readPassword();
  const { accountId } = await withDatabase(config, (db) => setPassword(db, email, password));
  console.log(`Dashboard password set for ${email.trim().toLowerCase()} (${accountId}); its dashboard sessions were signed out.`);
}

async function keys(config: Config, sub: string | undefined, rest: string[]): Promise<void> {
  switch (sub) {
    case 'create': {
      const { values } = options(rest, {
        account: { type: 'string' },
        mode: { type: 'string' },
        scopes: { type: 'string' },
        name: { type: 'string' },
        json: { type: 'boolean' },
        publishable: { type: 'boolean' },
        store: { type: 'string' },
        origins: { type: 'string' },
      });
      if (values.publishable) return createPublishable(config, values);
      if (values.store !== undefined || values.origins !== undefined)
        throw new UsageError('--store and --origins need --publishable');
      const accountId = required(values.account, '--account');
      const mode = required(values.mode, '--mode');
      if (mode !== 'live' && mode !== 'test') throw new UsageError('--mode must be live or test');
      const scopes =
        typeof values.scopes === 'string'
          ? values.scopes
              .split(',')
              .map((s) => s.trim())
              .filter(Boolean)
          : undefined;
      const name = typeof values.name === 'string' ? values.name : undefined;
      const key = await withDatabase(config, (db) => createKey(db, { accountId, mode, scopes, name }));
      if (values.json) console.log(JSON.stringify(key));
      else console.log(`Key ${key.keyId} (${key.mode}, scopes ${key.scopes.join(',')}): ${key.key}\nShown once; store it now.`);
      return;
    }
    case 'list': {
      const { values } = options(rest, { account: { type: 'string' }, json: { type: 'boolean' } });
      const accountId = required(values.account, '--account');
      const list = await withDatabase(config, (db) => listKeys(db, accountId));
      if (values.json) {
        console.log(JSON.stringify(list));
      } else {
        for (const k of list) {
          console.log(
            `${k.keyId}  ${k.mode}  ${k.hint}  ${k.scopes.join(',')}  ${k.revokedAt ? `revoked ${k.revokedAt}` : 'active'}  ${k.name}`,
          );
        }
      }
      return;
    }
    case 'revoke': {
      const { positionals } = options(rest, {});
      const keyId = required(positionals[0], 'KEY_ID');
      await withDatabase(config, (db) => revokeKey(db, keyId));
      console.log(`Key ${keyId} revoked`);
      return;
    }
    default:
      throw new UsageError(`unknown command: keys ${sub ?? ''}`);
  }
}

/** `keys create --publishable`: a browser tag's key for one store (api.md §6); live unless --mode test. */
async function createPublishable(config: Config, values: Record<string, string | boolean | undefined>): Promise<void> {
  if (values.scopes !== undefined) throw new UsageError('a publishable key has the clicks:write scope only; leave --scopes out');
  const storeId = required(values.store, '--store');
  const mode = values.mode ?? 'live';
  if (mode !== 'live' && mode !== 'test') throw new UsageError('--mode must be live or test');
  const origins =
    typeof values.origins === 'string'
      ? values.origins
          .split(',')
          .map((o) => o.trim())
          .filter(Boolean)
      : [];
  const name = typeof values.name === 'string' ? values.name : undefined;
  const accountId = typeof values.account === 'string' ? values.account : undefined;
  const key = await withDatabase(config, (db) => createPublishableKeyForStore(db, { storeId, mode, origins, name, accountId }));
  if (values.json) {
    console.log(JSON.stringify(key));
  } else {
    const extra = key.origins.length > 0 ? `, also from ${key.origins.join(', ')}` : '';
    console.log(`Publishable key ${key.keyId} (${key.mode}, store ${key.storeId}${extra}): ${key.key}`);
    console.log(`Put it in the store's pages: <script async src="https://WAYTRACK_HOST/tag.js" data-key="${key.key}"></script>`);
  }
}

run(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError) {
    console.error(`waytrack: ${error.message}\n\n${USAGE}`);
  } else if (error instanceof ConfigError || error instanceof AccountError || error instanceof PasswordInputError) {
    console.error(`waytrack: ${error.message}`);
  } else {
    console.error(`waytrack: ${(error as Error).message ?? error}`);
  }
  process.exit(1);
});
