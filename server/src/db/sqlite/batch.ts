import { CompiledQuery, type Kysely } from 'kysely';
import type { Writer } from '../database.js';
import type { DB } from '../schema.js';

export type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/** The batch's statements, compiled once. */
const TX = {
  begin: CompiledQuery.raw('begin'),
  commit: CompiledQuery.raw('commit'),
  rollback: CompiledQuery.raw('rollback'),
  savepoint: CompiledQuery.raw('savepoint job'),
  release: CompiledQuery.raw('release job'),
  rollbackToSavepoint: CompiledQuery.raw('rollback to job'),
};

/**
 * Runs a batch of write jobs in one transaction on one connection and commits it (not yet
 * synced: the group committer syncs the log before answering). Each statement is atomic, but a
 * job of several statements that fails half way must roll back alone: the batch first runs
 * without savepoints (a SAVEPOINT and its RELEASE cost more than a click's insert, as SQLite
 * journals every page the savepoint changes), and only when a job fails is the transaction
 * rolled back and the batch run again with a savepoint per job. Jobs are database work, so
 * running one again gives its answer from the same state; a batch with a failing job pays
 * twice, a batch without one nothing extra. Rejects only when the transaction itself fails.
 */
export function commitBatch(db: Kysely<DB>, works: Array<(writer: Writer) => Promise<unknown>>): Promise<Outcome[]> {
  return db.connection().execute(async (connection) => {
    const run = (statement: CompiledQuery) => connection.executeQuery(statement);
    await run(TX.begin);
    try {
      const values: unknown[] = [];
      for (const work of works) {
        try {
          values.push(await work(connection));
        } catch {
          break;
        }
      }
      if (values.length === works.length) {
        await run(TX.commit);
        return values.map((value) => ({ ok: true, value }));
      }
      // A failure that ended the transaction itself (SQLITE_FULL, SQLITE_IOERR: SQLite rolls it
      // back) leaves nothing to roll back; the rerun below meets it again and says so.
      await run(TX.rollback).catch(() => {});
      await run(TX.begin);
      const outcomes: Outcome[] = [];
      for (const work of works) {
        await run(TX.savepoint);
        try {
          const value = await work(connection);
          await run(TX.release);
          outcomes.push({ ok: true, value });
        } catch (error) {
          try {
            await run(TX.rollbackToSavepoint);
            await run(TX.release);
          } catch {
            // The job's failure ended the transaction (a full disk): the batch fails with that
            // error, not with "cannot rollback - no transaction is active".
            throw error;
          }
          outcomes.push({ ok: false, error });
        }
      }
      await run(TX.commit);
      return outcomes;
    } catch (error) {
      await run(TX.rollback).catch(() => {});
      throw error;
    }
  });
}
