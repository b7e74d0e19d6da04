import { defineConfig } from 'vitest/config';
import LongestFirst from './server/test/sequencer.js';

// The whole suite runs once per database engine: the embedded SQLite always, PostgreSQL when
// DATABASE_URL is set (each test makes a database of its own there and drops it). Tests of one
// engine's own machinery, and tests that touch no database, run in the SQLite pass only.
// Load tests (server/test/load: latency bounds under attack) run after everything else, one file
// at a time, so that no other test shares the two cores while they measure.
const engineOnly = [
  'server/test/db/wal.test.ts',
  'server/test/db/prepared.test.ts',
  'server/test/e2e/cli-help.test.ts',
  'server/test/unit/**',
];
const load = ['server/test/load/**/*.test.ts'];
// One pool serves every project, sized by the root config (a project's fileParallelism does not
// shrink it): a single fork is what keeps load files from running side by side.
const alone = { forks: { singleFork: true } };
const postgres = Boolean(process.env.DATABASE_URL);
const workers = Number(process.env.WAYTRACK_TEST_WORKERS ?? 4);
if (!postgres) console.log('PostgreSQL pass skipped: set DATABASE_URL to run the whole suite on PostgreSQL too');

const sqliteEnv = { WAYTRACK_TEST_ENGINE: 'sqlite', DATABASE_URL: '' }; // a server process a test starts must not pick PostgreSQL up
const postgresEnv = { WAYTRACK_TEST_ENGINE: 'postgres' };

export default defineConfig({
  test: {
    // A bound for a hung test, not a speed check (benches measure speed). On the slowest 2-core
    // machine CI has run on (its whole suite 27 min), tests of 15-20 s elsewhere passed 30 s under
    // the suite's load (channels-property.test.ts on PostgreSQL: a timeout, not a wrong answer).
    testTimeout: 90_000,
    hookTimeout: 90_000,
    pool: 'forks',
    // Most test files wait on I/O (server processes, fsync, PostgreSQL, Chromium, timers): several
    // side by side on two cores (vitest's default, cores - 1, runs one file at a time here).
    maxWorkers: workers,
    // As many from the start: vitest 3.2 with isolate: false rejects at teardown ("Terminating
    // worker thread") when it started fewer and grew the pool (vitest-dev/vitest#8133).
    minWorkers: workers,
    // A worker keeps the modules it loaded from one test file to the next: importing the server's
    // sources costs ~1 s of CPU a file, a quarter of the suite's CPU when every file paid it. Each
    // file still builds its own apps and databases; module-level state is caches keyed by
    // database, store or credential, and a test that needs one empty clears it (forgetGoogleTokens).
    // No file replaces a module (vi.mock): it would reach the worker's later files
    // (server/test/unit/shared-modules.test.ts checks).
    isolate: false,
    // The longest files start first (server/test/sequencer.ts): each engine's files end together.
    sequence: { sequencer: LongestFirst },
    globalSetup: ['server/test/global-setup.ts'],
    setupFiles: ['server/test/setup.ts'],
    reporters: ['default', './server/test/summary-reporter.ts'],
    projects: [
      { extends: true, test: { name: 'sqlite', include: ['server/test/**/*.test.ts'], exclude: load, env: sqliteEnv } },
      {
        extends: true,
        test: { name: 'load-sqlite', include: load, env: sqliteEnv, fileParallelism: false, poolOptions: alone, sequence: { groupOrder: 1 } },
      },
      ...(postgres
        ? [
            {
              extends: true,
              test: { name: 'postgres', include: ['server/test/**/*.test.ts'], exclude: [...engineOnly, ...load], env: postgresEnv },
            },
            {
              extends: true,
              test: { name: 'load-postgres', include: load, env: postgresEnv, fileParallelism: false, poolOptions: alone, sequence: { groupOrder: 2 } },
            },
          ]
        : []),
    ],
  },
});
