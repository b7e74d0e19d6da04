import { type Database, isUnavailableError } from './database.js';
import { touchReadyProbe } from './repositories/settings.js';

/**
 * Readiness that also covers writes. A database can answer reads while every write fails (a
 * full disk, a file made read-only): `ping` alone kept `/readyz` at 200 while every request that
 * writes was answered 503. Wrapped, the database remembers that a write failed for want of the
 * database; until a write succeeds again, `ping` tries a small write itself (so that an instance
 * taken out of rotation, which receives no other writes, still notices the recovery).
 */
export function withWriteHealth(database: Database): Database {
  let failing = false;
  async function watched<T>(writing: Promise<T>): Promise<T> {
    try {
      const result = await writing;
      failing = false;
      return result;
    } catch (error) {
      if (isUnavailableError(error)) failing = true;
      throw error;
    }
  }
  return {
    ...database,
    write: (work) => watched(database.write(work)),
    runWrite: (job, arg) => watched(database.runWrite(job, arg)),
    async ping() {
      await database.ping();
      if (!failing) return;
      await database.write((trx) => touchReadyProbe(trx, Date.now()));
      failing = false;
    },
  };
}
