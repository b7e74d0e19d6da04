/**
 * PostgreSQL drops still under way. DROP DATABASE forces a checkpoint of the whole server (a
 * second or more while other databases are busy), so a test's `drop()` closes its connections
 * and starts the drop without waiting for it; drops started side by side share a checkpoint.
 * The end of each test file waits for them (server/test/setup.ts: `settleDrops`).
 */
const pendingDrops = new Set<Promise<void>>();
const failedDrops: unknown[] = [];

/** Waits for every drop started so far; throws if one failed. */
export async function settleDrops(): Promise<void> {
  while (pendingDrops.size > 0) await Promise.all(pendingDrops);
  const failed = failedDrops.splice(0);
  if (failed.length > 0) throw new AggregateError(failed, `${failed.length} test database(s) could not be dropped`);
}

/** Starts `dropIt` without waiting for it (see above). */
export function startDrop(dropIt: () => Promise<unknown>): void {
  const pending: Promise<void> = dropIt().then(
    () => {
      pendingDrops.delete(pending);
    },
    (error: unknown) => {
      failedDrops.push(error);
      pendingDrops.delete(pending);
    },
  );
  pendingDrops.add(pending);
}
