import { afterAll } from 'vitest';
import { settleDrops } from './drops.js';

// Runs in every test file (vitest.config.ts setupFiles): the file ends once the PostgreSQL test
// databases its tests dropped are gone (engine.ts: a test's drop does not wait for it).
afterAll(() => settleDrops());
