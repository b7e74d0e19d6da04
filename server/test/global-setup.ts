import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { TestProject } from 'vitest/node';
import { createPostgresTemplate, dropPostgresTemplate } from './postgres-admin.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Builds what changed of the server (server/dist), the dashboard and the client, once, before
 * any test file runs: end-to-end tests start the real `waytrack` (bin → dist), the test
 * databases' SQLite worker threads load it (test/engine.ts: no TypeScript runtime in each
 * thread), and browser tests load the built dashboard. Building here rather than in each file's
 * beforeAll means one compile per run instead of one per file and engine, and no test worker
 * blocked by a compile. In watch mode it builds again before each rerun, as the sources changed.
 */
export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  // Every project (engine) runs its global setup in this one main process: build once for all.
  const shared = globalThis as Shared;
  project.onTestsRerun(() => {
    // Each project asks at a rerun: the first asks for a build, the others share it.
    if ((shared.waytrackBuildStarted ?? 0) < Date.now() - 2000) shared.waytrackBuild = undefined;
    return start(shared);
  });
  if (!project.name.includes('postgres')) {
    await start(shared);
    return undefined;
  }
  // The PostgreSQL projects: also the migrated database that test databases are copied from
  // (test/engine.ts), made while the build runs, dropped once the run ends.
  shared.postgresTemplate ??= createPostgresTemplate();
  const [, template] = await Promise.all([start(shared), shared.postgresTemplate]);
  project.provide('postgresTemplate', template);
  return async () => {
    const dropped = shared.postgresTemplate;
    shared.postgresTemplate = Promise.resolve(undefined);
    const name = await dropped;
    if (name) await dropPostgresTemplate(name);
  };
}

interface Shared {
  waytrackBuild?: Promise<void>;
  waytrackBuildStarted?: number;
  postgresTemplate?: Promise<string | undefined>;
}

function start(shared: Shared): Promise<void> {
  if (!shared.waytrackBuild) {
    shared.waytrackBuildStarted = Date.now();
    shared.waytrackBuild = build();
  }
  return shared.waytrackBuild;
}

async function build(): Promise<void> {
  const started = Date.now();
  // What `npm start` runs too: it builds each workspace whose sources changed since its last
  // build, and nothing on a fresh `npm ci` (which built everything).
  const { stderr } = await promisify(execFile)(process.execPath, ['scripts/build-if-stale.mjs'], {
    cwd: ROOT,
    maxBuffer: 16 * 1024 * 1024,
  });
  const built = stderr.match(/^build: (\S+) \(/gm)?.map((line) => line.slice('build: '.length, -2)) ?? [];
  console.log(
    built.length > 0
      ? `built ${built.join(', ')} for the end-to-end tests in ${Date.now() - started} ms`
      : 'server/dist and dashboard/dist are up to date with the sources',
  );
}
