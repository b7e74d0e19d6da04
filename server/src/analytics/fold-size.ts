/**
 * How many queued events the next fold step reads. A step is written only if none of the events
 * it read changed before its write (rollups.ts, `applyFold`); the events most likely to change
 * are the newest, whose first delivery is recorded within the outbox's linger. Under steady
 * traffic on a loaded machine, a step that read the whole queue took longer than that and was
 * stale every time: nothing was folded for as long as the traffic lasted. So a stale step
 * quarters the size (down to one event: the head of the queue, the oldest, which has settled),
 * and a written one doubles it back up to `max`. The cohort steps (cohort-rollups.ts) follow the
 * same rule, though only another instance's cohort fold makes one stale (a customer queued again
 * meanwhile just stays queued): fewer customers a step, fewer of them shared with it.
 */
export class FoldSize {
  private size: number;

  constructor(private readonly max: number) {
    this.size = max;
  }

  get value(): number {
    return this.size;
  }

  /** Adjusts the size to a step's outcome; false when a stale step was of one event already. */
  after(step: 'done' | 'more' | 'stale'): boolean {
    if (step !== 'stale') {
      this.size = Math.min(this.max, this.size * 2);
      return true;
    }
    if (this.size === 1) return false;
    this.size = Math.max(1, Math.floor(this.size / 4));
    return true;
  }
}
