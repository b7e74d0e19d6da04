import { defineConfig } from 'vitest/config';

// The whole suite runs once per database engine: the embedded SQLite always, PostgreSQL when
// DATABASE_URL is set (each test makes a schema of its own there and drops it). Tests of one
// engine's own machinery, and tests that touch no database, run in the SQLite pass only.
const engineOnly = ['server/test/db/wal.test.ts', 'server/test/db/prepared.test.ts', 'server/test/unit/**'];
const postgres = Boolean(process.env.DATABASE_URL);
if (!postgres) console.log('PostgreSQL pass skipped: set DATABASE_URL to run the whole suite on PostgreSQL too');

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    reporters: ['default', './server/test/summary-reporter.ts'],
    projects: [
      {
        extends: true,
        // A server process started by a test must not pick PostgreSQL up from the environment.
        test: { name: 'sqlite', include: ['server/test/**/*.test.ts'], env: { WAYTRACK_TEST_ENGINE: 'sqlite', DATABASE_URL: '' } },
      },
      ...(postgres
        ? [
            {
              extends: true,
              test: {
                name: 'postgres',
                include: ['server/test/**/*.test.ts'],
                exclude: engineOnly,
                env: { WAYTRACK_TEST_ENGINE: 'postgres' },
              },
            },
          ]
        : []),
    ],
  },
});
