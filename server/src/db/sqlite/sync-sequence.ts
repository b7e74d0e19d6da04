/**
 * Syncs of one file, one at a time: `afterNow()` resolves once a sync that began after the call
 * has finished. A call made while a sync is in flight waits for it, then for the next one, which
 * starts as soon as the one in flight ends and serves every caller that arrived meanwhile. So
 * commits never wait for each other's syncs, and a sync never covers less than its callers wrote.
 */
export class SyncSequence {
  private syncing: Promise<void> | undefined;
  private next: Promise<void> | undefined;

  constructor(private readonly sync: () => Promise<void>) {}

  afterNow(): Promise<void> {
    if (!this.syncing) {
      this.syncing = this.sync().finally(() => {
        this.syncing = undefined;
      });
      return this.syncing;
    }
    this.next ??= this.syncing
      .catch(() => {})
      .then(() => {
        this.next = undefined;
        return this.afterNow();
      });
    return this.next;
  }
}
