import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that run longest (each 8 s or more in a whole run of the suite on the 2-core machine,
 * on either engine), longest first. They start first: vitest runs one engine's files to the end
 * before it starts the other's, and a long file that starts last keeps the other workers waiting
 * for it (on a fresh clone, with no durations cached, vitest starts the largest files first, and
 * the kill -9 tests are small). Refresh it from a run's per-file durations:
 *   npx vitest run --reporter=json --outputFile.json=/tmp/run.json
 * A file missing here only starts later; nothing else depends on the list.
 */
export const LONGEST_FIRST = [
  'server/test/fuzz/openapi-fuzz.test.ts',
  'server/test/e2e/cli-help.test.ts',
  'server/test/http/security.test.ts',
  'server/test/dashboard/browser.test.ts',
  'server/test/e2e/outage.test.ts',
  'server/test/e2e/crash-loop.test.ts',
  'server/test/e2e/instances.test.ts',
  'server/test/fuzz/openapi-agreement.test.ts',
  'server/test/db/wal.test.ts',
  'server/test/destinations/meta/failures.test.ts',
  'server/test/destinations/meta/forwarding.test.ts',
  'server/test/http/unauthenticated-limits.test.ts',
  'server/test/e2e/backup.test.ts',
  'server/test/e2e/cli.test.ts',
  'server/test/dashboard/session.test.ts',
  'server/test/tracking/batch.test.ts',
  'server/test/sdks/client.test.ts',
  'server/test/destinations/restart.test.ts',
  'server/test/dashboard/browser-destinations.test.ts',
  'server/test/e2e/account-password.test.ts',
  'server/test/analytics/rollups.test.ts',
  'server/test/dashboard/security.test.ts',
  'server/test/destinations/meta/restart.test.ts',
  'server/test/e2e/publishable-cli.test.ts',
  'server/test/webhooks/restart.test.ts',
  'server/test/destinations/meta/outbox.test.ts',
  'server/test/http/hardening.test.ts',
  'server/test/e2e/start.test.ts',
  'server/test/e2e/durability.test.ts',
  'server/test/webhooks/webhooks.test.ts',
];

/** vitest's order (longest cached duration first, else largest file first), the files above ahead of it. */
export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const root = `${this.ctx.config.root}/`;
    const rank = (spec: TestSpecification) => {
      const at = LONGEST_FIRST.indexOf(spec.moduleId.replace(root, ''));
      return at === -1 ? LONGEST_FIRST.length : at;
    };
    return sorted
      .map((spec, at) => ({ spec, at, rank: rank(spec) }))
      .sort((a, b) => a.rank - b.rank || a.at - b.at)
      .map((s) => s.spec);
  }
}
