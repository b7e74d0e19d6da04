import { randomBytes } from 'node:crypto';
import {
  closeSync,
  createReadStream,
  createWriteStream,
  existsSync,
  fsyncSync,
  openSync,
  renameSync,
  statSync,
  unlinkSync,
} from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import SqliteDriver from 'better-sqlite3';
import { Kysely } from 'kysely';
import { makePrivateDir, touchPrivateFile } from '../../data-dir.js';
import { BackupError, type BackupResult, type RestoreResult } from '../database.js';
import { checkSchema, SchemaError } from '../migrations/index.js';
import { SqliteEngineDialect } from './engine.js';

/** The database file in DATA_DIR (database.ts opens the same name). */
const DB_FILE = 'waytrack.db';

/** The files SQLite keeps beside a database in WAL mode; stale ones must never meet another database. */
const SIDE_FILES = ['-wal', '-shm', '-journal'];

function fsyncPath(file: string): void {
  const fd = openSync(file, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function removeQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

function tempBeside(file: string, purpose: string): string {
  return path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString('hex')}.${purpose}`);
}

/**
 * Makes `raw` a self-contained file (rollback journal: a copied log is folded in, no -wal is left)
 * and refuses one that is not a whole, healthy SQLite database written by this or older code.
 */
async function checkRestorable(raw: SqliteDriver.Database, file: string): Promise<string[]> {
  let verdict: unknown;
  try {
    raw.pragma('journal_mode = DELETE');
    verdict = raw.pragma('quick_check', { simple: true });
  } catch (error) {
    throw new BackupError(`${file} is not a SQLite database (${(error as Error).message})`);
  }
  if (verdict !== 'ok') throw new BackupError(`${file} is damaged (SQLite's quick_check says: ${String(verdict)})`);
  const hasMigrations = raw.prepare("select 1 from sqlite_master where type = 'table' and name = 'kysely_migration'").get();
  if (!hasMigrations) throw new BackupError(`${file} is not a Waytrack database (it has no migration table)`);
  const db = new Kysely<unknown>({ dialect: new SqliteEngineDialect({ database: raw }) });
  try {
    await checkSchema(db);
  } catch (error) {
    if (error instanceof SchemaError) throw new BackupError(`${file}: ${error.message}`);
    throw error;
  }
  const rows = raw.prepare('select name from kysely_migration order by name').all() as { name: string }[];
  return rows.map((r) => r.name);
}

/**
 * `waytrack backup FILE` on the embedded database: SQLite's online backup API, run from its own
 * connection while the server keeps serving. The copy is one consistent snapshot that holds
 * every transaction committed before it started — the write-ahead log's too, which a plain copy
 * of waytrack.db misses. It is written beside FILE, turned into a self-contained file (rollback
 * journal, no -wal), checked, fsynced and only then renamed to FILE: FILE is whole or absent.
 */
export async function backupSqlite(dataDir: string, target: string): Promise<BackupResult> {
  const source = path.join(dataDir, DB_FILE);
  if (!existsSync(source)) throw new BackupError(`there is no database to back up: ${source} does not exist (check DATA_DIR)`);
  const file = path.resolve(target);
  if (!existsSync(path.dirname(file))) throw new BackupError(`the directory of ${file} does not exist`);
  if (file === source) throw new BackupError('the backup must not overwrite the database itself');
  const temp = tempBeside(file, 'partial');
  // 0600 from the start, whatever the umask: the copy holds all DATA_DIR's database holds
  // (SQLite writes into the file as it finds it, and gives its journal the file's mode).
  touchPrivateFile(temp);
  const raw = new SqliteDriver(source, { fileMustExist: true });
  try {
    raw.pragma('busy_timeout = 5000');
    // All pages in one step: one read snapshot from start to end. Small steps would restart
    // from the first page each time the server commits in between, and might never finish.
    await raw.backup(temp, { progress: () => 0x7fffffff });
  } catch (error) {
    for (const suffix of ['', ...SIDE_FILES]) removeQuietly(temp + suffix);
    throw error;
  } finally {
    raw.close();
  }
  try {
    const copy = new SqliteDriver(temp, { fileMustExist: true });
    let migrations: string[];
    try {
      migrations = await checkRestorable(copy, file);
    } finally {
      copy.close();
    }
    fsyncPath(temp);
    renameSync(temp, file);
    fsyncPath(path.dirname(file));
    return { file, bytes: statSync(file).size, migrations };
  } finally {
    for (const suffix of ['', ...SIDE_FILES]) removeQuietly(temp + suffix);
  }
}

/**
 * Fails when another process has the database open. Every connection to a database in WAL mode
 * holds a shared lock on its file for as long as it is open, so a connection in exclusive locking
 * mode gets its exclusive lock only when nobody else — no running server — is connected.
 */
function refuseWhileOpen(database: string): void {
  if (!existsSync(database)) return;
  const raw = new SqliteDriver(database, { fileMustExist: true });
  try {
    raw.pragma('busy_timeout = 0');
    raw.pragma('locking_mode = EXCLUSIVE');
    raw.exec('BEGIN EXCLUSIVE');
    raw.exec('ROLLBACK');
  } catch (error) {
    if ((error as { code?: unknown }).code === 'SQLITE_BUSY') {
      throw new BackupError(
        `${database} is in use by another process (a running waytrack server?): stop every server on this DATA_DIR, then restore`,
      );
    }
    throw error;
  } finally {
    // The last connection to close folds the log into the old file: nothing is pending anywhere.
    raw.close();
  }
}

/**
 * `waytrack restore FILE` on the embedded database: checks FILE (a healthy Waytrack database, not
 * newer than this code), refuses while a server has DATA_DIR's database open, copies FILE to a
 * temporary file in DATA_DIR, fsyncs it, removes the old database's -wal/-shm and renames the
 * copy over waytrack.db — a crash leaves the old database or the new one, never a mix.
 */
export async function restoreSqlite(dataDir: string, backup: string): Promise<RestoreResult> {
  const source = path.resolve(backup);
  if (!existsSync(source) || !statSync(source).isFile()) throw new BackupError(`${source} does not exist`);
  const target = path.join(dataDir, DB_FILE);
  if (source === target) throw new BackupError('the backup is the database itself');
  makePrivateDir(dataDir);

  // Checked through a private copy, so that a backup file in WAL mode (a copy made by hand) is
  // read with its log, and the backup itself is never written.
  const temp = tempBeside(target, 'restore');
  let migrations: string[];
  try {
    await pipeline(createReadStream(source), createWriteStream(temp, { flags: 'wx', mode: 0o600 }));
    for (const suffix of ['-wal']) {
      if (existsSync(source + suffix))
        await pipeline(createReadStream(source + suffix), createWriteStream(temp + suffix, { mode: 0o600 }));
    }
    const copy = new SqliteDriver(temp, { fileMustExist: true });
    try {
      migrations = await checkRestorable(copy, source);
    } finally {
      copy.close();
    }
    fsyncPath(temp);

    refuseWhileOpen(target);
    for (const suffix of SIDE_FILES) removeQuietly(target + suffix);
    renameSync(temp, target);
    fsyncPath(dataDir);
  } finally {
    for (const suffix of ['', ...SIDE_FILES]) removeQuietly(temp + suffix);
  }
  return { file: target, bytes: statSync(target).size, migrations };
}
