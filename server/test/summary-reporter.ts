import type { Reporter, RunnerTask, RunnerTestFile } from 'vitest/node';

/** Prints one plain closing line, `N passed, M failed, K skipped`, that any CI log reader understands. */
export default class SummaryReporter implements Reporter {
  onFinished(files: RunnerTestFile[] = [], errors: unknown[] = []): void {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    const visit = (task: RunnerTask) => {
      if (task.type === 'suite') {
        for (const child of task.tasks) visit(child);
        if (task.result?.state === 'fail' && task.tasks.length === 0) counts.failed++;
        return;
      }
      if (task.mode === 'skip' || task.mode === 'todo') counts.skipped++;
      else if (task.result?.state === 'pass') counts.passed++;
      else if (task.result?.state === 'fail') counts.failed++;
    };
    for (const file of files) {
      visit(file);
      // A file that failed to load has no tests but must count as a failure.
      if (file.result?.state === 'fail' && file.tasks.length === 0) counts.failed++;
    }
    counts.failed += errors.length;
    console.log(`\n${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`);
  }
}
