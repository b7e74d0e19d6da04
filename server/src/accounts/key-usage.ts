import type { Database } from '../db/database.js';
import { markApiKeyUsed } from '../db/repositories/accounts.js';

/** One minute: "last used" is shown to the day and hour, and a write per request would cost ingest. */
export const KEY_USAGE_INTERVAL_MS = 60_000;

/**
 * Remembers when each API key last authenticated a request (the API keys page shows it). Each
 * instance writes a key's time at most once per interval, off the request's path: the answer
 * never waits for it, and a failed write (the database away) only leaves the time older.
 */
export class KeyUsage {
  private readonly writtenAt = new Map<string, number>();
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly database: Database,
    private readonly onError: (error: unknown) => void = () => {},
    private readonly intervalMs = KEY_USAGE_INTERVAL_MS,
  ) {}

  record(keyId: string, now = Date.now()): void {
    const last = this.writtenAt.get(keyId);
    if (last !== undefined && now - last < this.intervalMs) return;
    if (this.writtenAt.size >= 10_000) this.writtenAt.clear();
    this.writtenAt.set(keyId, now);
    const write = this.database
      .write((trx) => markApiKeyUsed(trx, keyId, now))
      .catch((error: unknown) => {
        // Try again with the next request rather than a minute later.
        this.writtenAt.delete(keyId);
        this.onError(error);
      })
      .finally(() => this.pending.delete(write));
    this.pending.add(write);
  }

  /** Waits for the writes under way (before the database closes). */
  async settle(): Promise<void> {
    await Promise.all([...this.pending]);
  }
}
