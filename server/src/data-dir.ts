import { chmodSync, closeSync, lstatSync, mkdirSync, openSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * DATA_DIR holds the embedded database (every click, conversion and hashed key), the secrets key
 * and the TLS private key: only the user Waytrack runs as may read it. Files are created 0600
 * and directories 0700 whatever the process umask (which is left alone: it is the operator's).
 */
export const PRIVATE_FILE = 0o600;
export const PRIVATE_DIR = 0o700;

/** A directory Waytrack needs cannot be made (the CLI prints the message and exits 1). */
export class DataDirError extends Error {}

/**
 * Creates `dir` (and missing parents) 0700; an existing directory is left as it is. One parent
 * at a time: Node's own `mkdirSync(…, { recursive: true })` loops for ever where a directory
 * cannot be made in a parent that exists (`DATA_DIR=/proc/nope`); here that is a DataDirError.
 */
export function makePrivateDir(dir: string): void {
  const made = (target: string): NodeJS.ErrnoException | undefined => {
    try {
      mkdirSync(target, { mode: PRIVATE_DIR });
      return undefined;
    } catch (error) {
      const failure = error as NodeJS.ErrnoException;
      if (failure.code === 'EEXIST' && statSync(target, { throwIfNoEntry: false })?.isDirectory()) return undefined;
      return failure;
    }
  };
  let failure = made(dir);
  if (failure?.code === 'ENOENT' && path.dirname(dir) !== dir) {
    makePrivateDir(path.dirname(dir));
    failure = made(dir);
  }
  if (failure) {
    const why = failure.code === 'EEXIST' ? 'it exists and is not a directory' : failure.message.replace(/, mkdir .*$/, '');
    throw new DataDirError(
      `cannot create the directory ${dir} (${why}); set DATA_DIR to a directory Waytrack can create and write`,
    );
  }
}

/** Creates `file` empty and 0600 unless it exists (so a library opening it later keeps that mode). */
export function touchPrivateFile(file: string): void {
  closeSync(openSync(file, 'a', PRIVATE_FILE));
}

/** What Waytrack keeps in DATA_DIR, relative to it: directories end with a slash. */
const OWN_ENTRIES = [
  'waytrack.db',
  'waytrack.db-wal',
  'waytrack.db-shm',
  'waytrack.db-journal',
  'secrets.key',
  'tls/',
  'tls/localhost-key.pem',
  'tls/localhost-cert.pem',
];

export interface LooseEntry {
  path: string;
  /** The mode found, in octal (`0644`). */
  mode: string;
  /** Set when it could not be tightened (owned by another user, read-only file system). */
  error?: string;
}

const octal = (mode: number) => `0${(mode & 0o777).toString(8)}`;

/**
 * Tightens what an earlier version (or an operator) left readable by others: DATA_DIR itself
 * and Waytrack's own files in it (never anything else an operator keeps there). Group and
 * other permission bits are removed; symbolic links inside DATA_DIR are not followed. Returns
 * what was loose, for one warning at start. A missing DATA_DIR is not created here.
 */
export function tightenDataDir(dataDir: string): LooseEntry[] {
  const loose: LooseEntry[] = [];
  const tighten = (file: string, mode: number) => {
    if ((mode & 0o077) === 0) return;
    const entry: LooseEntry = { path: file, mode: octal(mode) };
    try {
      chmodSync(file, mode & 0o700);
    } catch (error) {
      entry.error = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    }
    loose.push(entry);
  };
  const root = statSync(dataDir, { throwIfNoEntry: false });
  if (!root?.isDirectory()) return loose;
  tighten(dataDir, root.mode);
  for (const name of OWN_ENTRIES) {
    const file = path.join(dataDir, name.replace(/\/$/, ''));
    const stat = lstatSync(file, { throwIfNoEntry: false });
    if (!stat) continue;
    if (name.endsWith('/') ? stat.isDirectory() : stat.isFile()) tighten(file, stat.mode);
  }
  return loose;
}
