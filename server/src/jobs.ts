import { FOLD_COHORTS } from './analytics/cohort-rollups.js';
import { FOLD_QUEUED } from './analytics/rollups.js';
import { PACK_TRACES } from './analytics/trace-compaction.js';
import { jobTable } from './db/database.js';
import { INSERT_CLICK } from './db/repositories/clicks.js';
import { RECORD_CONVERSION } from './db/repositories/conversions.js';
import { QUEUE_SIZE } from './db/repositories/rollup-queue.js';
import { RECORD_OUTCOME } from './destinations/record-outcome.js';
import { DELETE_AMBIGUITY_DAY, DELETE_EXPIRED_EVENTS, DELETE_IDENTITY_LINKS } from './retention.js';

/**
 * Every job a database worker thread runs (`WriteJob`s and `BackgroundJob`s), by name: the one
 * table the threads (worker.ts; SQLite's writer and background threads, PostgreSQL's background
 * thread) look a job up in. A job that is not listed here fails with "no job named …".
 */
export const JOBS = jobTable(
  INSERT_CLICK,
  RECORD_CONVERSION,
  FOLD_QUEUED,
  FOLD_COHORTS,
  QUEUE_SIZE,
  RECORD_OUTCOME,
  PACK_TRACES,
  DELETE_EXPIRED_EVENTS,
  DELETE_IDENTITY_LINKS,
  DELETE_AMBIGUITY_DAY,
);
