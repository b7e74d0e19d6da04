import { afterAll, afterEach } from 'vitest';
import { settleDrops } from './drops.js';

// Runs in every test file (vitest.config.ts setupFiles): the file ends once the PostgreSQL test
// databases its tests dropped are gone (engine.ts: a test's drop does not wait for it).
afterAll(() => settleDrops());

// After each test the worker's event loop turns once. Vitest does not yield between tests, so a
// file of synchronous tests (spawnSync of the CLI) blocked its worker for their sum: 100 s for
// e2e/fx-cli.test.ts beside CPU hogs, past vitest 3's fixed 60 s wait for the answer to the
// worker's "onTaskUpdate" call ("Timeout calling onTaskUpdate", an unhandled error that fails
// the run; the answer had arrived but was not read). Now a block is at most one test's.
afterEach(() => new Promise<void>((resolve) => setImmediate(resolve)));
