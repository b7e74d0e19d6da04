import { closeSync, fdatasync, fstatSync, openSync } from 'node:fs';
import { DatabaseThread, type WorkerOptions } from '../worker-thread.js';

/**
 * Keeps the SQLite write-ahead log's disk work off the event loop.
 *
 * The connection runs with `synchronous = NORMAL` and without automatic checkpoints, so a
 * COMMIT only writes the log (into the OS page cache) and returns. Durability is then ours:
 * `sync()` fdatasyncs the log file on libuv's thread pool, and the group committer answers a
 * write only after a sync that began after its commit. That is the durability of
 * `synchronous = FULL` (the log holds every committed frame, checksummed; recovery replays the
 * valid ones), without blocking every request behind the disk for the ~1 ms of each fsync.
 *
 * Checkpoints (copying the log into the database file, with fsyncs of both) stall the writer
 * for up to hundreds of milliseconds when SQLite runs them inside a COMMIT. Here a worker
 * thread with its own connection runs them, in two steps, at most every `checkpointIntervalMs`
 * once the log file has reached `checkpointBytes`:
 *  1. a PASSIVE checkpoint copies the log while requests go on committing (it never waits for,
 *     nor blocks, readers or the writer) — the long part;
 *  2. at a quiet moment (at most `finishWaitMs` later), commits pause (the event loop does
 *     not: requests are parsed, looked up and queued) while a second PASSIVE checkpoint copies
 *     the few frames committed since step 1. Under a steady load no quiet moment comes, so the
 *     wait is short: each millisecond of it is more frames to copy with commits paused
 *     (measured at 2,000 clicks/s: waiting up to 1 s paused commits for 6–11.5 ms every second,
 *     up to 50 ms for ~3 ms, most of it the database file's fsync). With the whole log copied
 *     and no reader inside it, SQLite restarts the log from its beginning at the next commit.
 *     Without this step a busy server always commits during the checkpoint, the log is never
 *     complete, and it grows without bound (measured: 60 MB in 10 s at 500 conversions/s).
 *
 * A restarted log is overwritten from its start but keeps its size: after a burst the file
 * stayed at its peak for good (46–53 MB beside a 12.6 MB database). Once no commit has come for
 * `idleTruncateMs` and the log file is larger than `idleTruncateBytes`, the worker runs a
 * TRUNCATE checkpoint with commits paused (none is waiting: the writer is idle; one that comes
 * meanwhile waits for it, a few milliseconds), which copies what is left and cuts the file to
 * zero bytes. It waits for readers at most 100 ms; a reader in the way makes it try again after
 * the next quiet spell.
 */
export interface WalOptions {
  /** Start checkpointing once the log file is this large (SQLite's own default is 1000 pages). */
  checkpointBytes?: number;
  /** Least time between the starts of two checkpoints. */
  checkpointIntervalMs?: number;
  /** How long step 2 may wait for a quiet moment for the writer (see `quiet` below; default 50 ms). */
  finishWaitMs?: number;
  /** Truncate the log once no commit has come for this long (default 5 s)… */
  idleTruncateMs?: number;
  /** …and the log file is larger than this (default 1 MiB). */
  idleTruncateBytes?: number;
  /** How the log file is synced: node:fs `fdatasync` (server/test/db/wal.test.ts holds or fails it). */
  fdatasync?: Fdatasync;
}

type Fdatasync = (fd: number, callback: (error: NodeJS.ErrnoException | null) => void) => void;

export interface WalKeeperOptions extends WalOptions {
  /** Resolves at a quiet moment for the writer, at most `maxWaitMs` later (`GroupCommitter.quiet` in database.ts). */
  quiet?: (maxWaitMs: number) => Promise<void>;
  /** The checkpoint worker's thread options. */
  thread?: WorkerOptions;
}

interface CheckpointResult {
  ok: boolean;
  message?: string;
}

export class WalKeeper {
  private fd: number | undefined;
  private readonly worker: DatabaseThread;
  /**
   * idle → copying (step 1) → quieting (waiting for a quiet moment) → [waiting for the commit in
   * progress] → finishing (step 2) → idle
   */
  private phase: 'idle' | 'copying' | 'quieting' | 'waiting' | 'finishing' | 'truncating' = 'idle';
  /** Commits in progress (the writer thread may have a few batches in hand). */
  private committing = 0;
  private paused: Promise<void> | undefined;
  private resume: (() => void) | undefined;
  private lastCheckpointAt = 0;
  private closed = false;
  private readonly checkpointBytes: number;
  private readonly checkpointIntervalMs: number;
  private readonly quiet: () => Promise<void>;
  private readonly idleTruncateMs: number;
  private readonly idleTruncateBytes: number;
  private readonly fdatasync: Fdatasync;
  /** Fires `idleTruncateMs` after the last commit (re-armed by each). */
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly file: string,
    options: WalKeeperOptions = {},
    private readonly onError: (error: unknown) => void = () => {},
  ) {
    this.checkpointBytes = options.checkpointBytes ?? 4 * 1024 * 1024;
    this.checkpointIntervalMs = options.checkpointIntervalMs ?? 1000;
    const finishWaitMs = options.finishWaitMs ?? 50;
    const quiet = options.quiet;
    this.quiet = quiet ? () => quiet(finishWaitMs) : () => Promise.resolve();
    this.idleTruncateMs = options.idleTruncateMs ?? 5000;
    this.idleTruncateBytes = options.idleTruncateBytes ?? 1024 * 1024;
    this.fdatasync = options.fdatasync ?? fdatasync;
    this.worker = new DatabaseThread({ engine: 'sqlite', file }, options.thread);
  }

  /**
   * Starts the checkpoint worker ahead of the first checkpoint and resolves once it answers (a
   * thread takes tens of milliseconds to start; the log would grow meanwhile under load).
   */
  async start(): Promise<void> {
    await this.worker.run({ type: 'ping' });
  }

  /** Resolves once everything committed so far is on disk. */
  sync(): Promise<void> {
    const fd = this.logFd();
    if (fd === undefined) return Promise.resolve(); // no log: everything is in the database file
    return new Promise((resolve, reject) => this.fdatasync(fd, (error) => (error ? reject(error) : resolve())));
  }

  /** Before a commit: waits while a checkpoint's last step runs (step 2 above). */
  async beforeCommit(): Promise<void> {
    while (this.paused) await this.paused;
    this.committing++;
  }

  /** After a commit (or its failure): lets a waiting checkpoint finish, or starts one when due. */
  afterCommit(now = Date.now()): void {
    this.committing--;
    this.armIdleTimer();
    if (this.phase === 'waiting') {
      if (this.committing === 0) this.finish();
      return;
    }
    if (this.closed || this.phase !== 'idle' || now - this.lastCheckpointAt < this.checkpointIntervalMs) return;
    const fd = this.logFd();
    if (fd === undefined || fstatSync(fd).size < this.checkpointBytes) return;
    this.lastCheckpointAt = now;
    this.phase = 'copying';
    this.checkpoint();
  }

  /** Waits for a running checkpoint, stops the worker and closes the log file. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.idleTimer);
    while (this.phase !== 'idle') await new Promise((r) => setTimeout(r, 5));
    await this.worker.close();
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  /** (Re)starts the wait for a quiet spell after which the log is truncated. */
  private armIdleTimer(): void {
    if (this.closed) return;
    if (this.idleTimer) this.idleTimer.refresh();
    else {
      this.idleTimer = setTimeout(() => this.truncateWhenIdle(), this.idleTruncateMs);
      this.idleTimer.unref();
    }
  }

  /** The writer has been idle for `idleTruncateMs`: cuts a large log file down to nothing. */
  private truncateWhenIdle(): void {
    if (this.closed) return;
    if (this.phase !== 'idle' || this.committing > 0 || this.paused) {
      this.armIdleTimer(); // a checkpoint or a commit is under way: after the next quiet spell
      return;
    }
    const fd = this.logFd();
    if (fd === undefined || fstatSync(fd).size <= this.idleTruncateBytes) return;
    this.phase = 'truncating';
    this.pause();
    this.worker.run<{ busy: number }>({ type: 'truncate' }).then(
      (result) => {
        if (result.busy) this.armIdleTimer(); // a reader was in the log: try again later
        this.settled({ ok: true });
      },
      (error: Error) => this.settled({ ok: false, message: error.message }),
    );
  }

  /** Holds new commits back (beforeCommit waits) until step 2 is done. */
  private pause(): void {
    this.paused ??= new Promise((resolve) => {
      this.resume = resolve;
    });
  }

  /** Step 2: with commits paused, copies what was committed during step 1. */
  private finish(): void {
    this.phase = 'finishing';
    this.pause();
    this.checkpoint();
  }

  private settled(result: CheckpointResult): void {
    if (!result.ok) this.onError(new Error(`WAL checkpoint failed: ${result.message}`));
    if (this.phase === 'copying' && result.ok && !this.closed) {
      // Step 2 holds the writer: let the requests' writes of a busy moment go first.
      this.phase = 'quieting';
      void this.quiet().then(() => {
        if (this.phase !== 'quieting') return;
        if (this.committing > 0) {
          // Commits in progress end first (no new one starts); the last one finishes step 2.
          this.pause();
          this.phase = 'waiting';
        } else this.finish();
      });
      return;
    }
    // Step 2 done (or a step failed): commits go on.
    this.phase = 'idle';
    const resume = this.resume;
    this.paused = undefined;
    this.resume = undefined;
    resume?.();
  }

  /**
   * The log file, opened once it exists (SQLite creates it with the first write of WAL mode
   * and removes it only when the last connection closes, so the descriptor stays valid).
   */
  private logFd(): number | undefined {
    if (this.fd !== undefined) return this.fd;
    try {
      this.fd = openSync(`${this.file}-wal`, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    return this.fd;
  }

  /** One PASSIVE checkpoint on the worker's connection; a failed or lost worker counts as a failed step, so commits never stay paused. */
  private checkpoint(): void {
    this.worker.run({ type: 'checkpoint' }).then(
      () => this.settled({ ok: true }),
      (error: Error) => this.settled({ ok: false, message: error.message }),
    );
  }
}
