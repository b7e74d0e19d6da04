import { type Database, DiskFullError, isDiskFullError, isUnavailableError } from './database.js';
import { touchReadyProbe } from './repositories/settings.js';

export interface WriteHealthOptions {
  /** Where the database writes, for a full disk's message: its file, or the PostgreSQL server. */
  location?: string;
  /** How long after the last failed write the database stays unready, whatever a probe says. */
  recoverAfterMs?: number;
}

/**
 * Readiness that also covers writes. A database can answer reads while every write fails (a
 * full disk, a file made read-only): `ping` alone kept `/readyz` at 200 while every request that
 * writes was answered 503. Wrapped, the database is unready from the first write that fails for
 * want of the database. `ping` then tries a small write itself (so that an instance taken out of
 * rotation, which receives no other writes, still notices the recovery), and the database is
 * ready again once that write succeeds and no write has failed for `recoverAfterMs` (5 s).
 * The wait is there because a small write is no proof: on a full disk, a write that fits in the
 * space SQLite's log file already has still succeeds (and one that changes nothing commits),
 * and `/readyz` flipped back to 200 between failing requests. Other writes' success does not
 * count, for the same reason.
 *
 * A write that failed for a full disk is thrown as a DiskFullError naming `location` (the
 * database file, or the PostgreSQL server), so that the 503 and `/readyz` say what is wrong.
 */
export function withWriteHealth(database: Database, options: WriteHealthOptions = {}): Database {
  const { location = 'the database', recoverAfterMs = 5000 } = options;
  /** The last write that failed for want of the database, while unready. */
  let failure: { error: unknown; at: number } | undefined;
  const named = (error: unknown) => {
    if (error instanceof DiskFullError || !isDiskFullError(error)) return error;
    // PostgreSQL names the file it could not extend (relative to its data directory).
    const file = /file "([^"]+)"/.exec(String((error as { message?: unknown }).message ?? ''))?.[1];
    return new DiskFullError(file ? `${location} (${file})` : location, error);
  };
  const failed = (error: unknown) => {
    const thrown = named(error);
    if (isUnavailableError(error)) failure = { error: thrown, at: Date.now() };
    return thrown;
  };
  async function watched<T>(writing: Promise<T>): Promise<T> {
    try {
      return await writing;
    } catch (error) {
      throw failed(error);
    }
  }
  return {
    ...database,
    write: (work) => watched(database.write(work)),
    runWrite: (job, arg) => watched(database.runWrite(job, arg)),
    async ping() {
      await database.ping();
      if (!failure) return;
      try {
        await database.write((trx) => touchReadyProbe(trx, Date.now()));
      } catch (error) {
        throw failed(error);
      }
      if (Date.now() - failure.at < recoverAfterMs) throw failure.error;
      failure = undefined;
    },
  };
}
