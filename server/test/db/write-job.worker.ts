// The worker thread entry for test/db/wal.test.ts's databases: the service's jobs and the fixture's.
import { jobTable } from '../../src/db/database.js';
import { serveDatabaseThread } from '../../src/db/sqlite/worker.js';
import { JOBS } from '../../src/jobs.js';
import { BACKGROUND_NOTE, NOTE, TRACE_SYNCS } from './write-job.fixture.js';

serveDatabaseThread({ ...JOBS, ...jobTable(NOTE, BACKGROUND_NOTE, TRACE_SYNCS) });
