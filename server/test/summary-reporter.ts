import type { Reporter, RunnerTask, RunnerTestFile } from 'vitest/node';

/** Prints one plain closing line, `N passed, M failed, K skipped`, that any CI log reader understands. */
export default class SummaryReporter implements Reporter {
  onFinished(files: RunnerTestFile[] = [], errors: unknown[] = []): void {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    const visit = (task: RunnerTask): void => {
      const before = counts.failed;
      if (task.type === 'suite') {
        for (const child of task.tasks) visit(child);
        // A suite that failed with no failed test inside: a file that failed to load, or a
        // beforeAll/afterAll hook that threw (its tests then report as skipped).
        if (task.result?.state === 'fail' && counts.failed === before) counts.failed++;
        return;
      }
      if (task.mode === 'skip' || task.mode === 'todo') counts.skipped++;
      else if (task.result?.state === 'pass') counts.passed++;
      else if (task.result?.state === 'fail') counts.failed++;
      else counts.skipped++; // never ran
    };
    for (const file of files) visit(file);
    counts.failed += errors.length;
    console.log(`\n${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`);
  }
}
