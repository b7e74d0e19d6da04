/**
 * Requests waiting for their conversion's first delivery attempt (CAPI_SYNC_WAIT_MS): a request
 * that records a conversion may wait up to that long to answer with the outcome instead of
 * `pending`. Each wait ends with the attempt's outcome (`true`: Meta acknowledged it) or, at the
 * time limit, with `false`.
 */
export class DeliveryWaiters {
  private readonly waiting = new Map<string, Array<(sent: boolean) => void>>();

  /** Resolves with the first attempt's outcome for `conversionId`, or false after `waitMs`. */
  wait(conversionId: string, waitMs: number): Promise<boolean> {
    return new Promise((resolve) => {
      const list = this.waiting.get(conversionId) ?? [];
      const settle = (sent: boolean) => {
        clearTimeout(timer);
        resolve(sent);
      };
      const timer = setTimeout(() => {
        const rest = this.waiting.get(conversionId)?.filter((f) => f !== settle) ?? [];
        if (rest.length > 0) this.waiting.set(conversionId, rest);
        else this.waiting.delete(conversionId);
        resolve(false);
      }, waitMs);
      list.push(settle);
      this.waiting.set(conversionId, list);
    });
  }

  /** The attempt for these conversions is recorded: their waits end with `sent`. */
  settle(conversionIds: string[], sent: boolean): void {
    for (const id of conversionIds) {
      const list = this.waiting.get(id);
      if (!list) continue;
      this.waiting.delete(id);
      for (const settle of list) settle(sent);
    }
  }

  /** Ends every wait (shutdown). */
  settleAll(sent: boolean): void {
    this.settle([...this.waiting.keys()], sent);
  }
}
