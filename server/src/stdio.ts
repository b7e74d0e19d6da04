import { write, writeSync } from 'node:fs';

/**
 * Standard output that never stops the server. A reader that goes away (`waytrack serve | head
 * -1`, a log shipper restarted) makes every later write fail with EPIPE: Node reports that as an
 * 'error' event nobody listens to, and pino's own destination then retries a synchronous write
 * for ever on exit — the server hung, bound to its port, deaf to SIGTERM. Here a closed output
 * only drops lines: one warning goes to standard error (if that is open), and the server goes on.
 */

let stdoutClosed = false;
let warned = false;

/** Says once, on standard error, that standard output is gone (nothing if stderr is gone too). */
function stdoutGone(error: unknown): void {
  stdoutClosed = true;
  if (warned) return;
  warned = true;
  const code = (error as { code?: unknown } | null)?.code ?? String(error);
  try {
    writeSync(2, `waytrack: standard output is closed (${code}); its log lines and messages are dropped from now on\n`);
  } catch {
    // standard error is closed as well: nobody to tell
  }
}

/**
 * Makes a failing standard output (or error) drop what is written to it instead of throwing an
 * uncaught error: console.log and the log keep working, to nowhere. Call once, before serving.
 */
export function guardStandardStreams(): void {
  process.stdout.on('error', stdoutGone);
  process.stderr.on('error', () => {});
}

/** How much log text may wait for a slow reader before new lines are dropped. */
const MAX_PENDING_BYTES = 16 * 1024 * 1024;

/**
 * The log's destination when standard output is not a terminal: pino's JSON lines, written to
 * file descriptor 1 off the event loop (one write in flight at a time on libuv's thread pool),
 * in order. A reader that is slow makes lines wait (up to 16 MiB, then they are dropped, with one
 * warning); a reader that is gone makes them dropped (see above). Nothing here ever blocks or
 * throws; on exit, what is still waiting gets one synchronous attempt.
 */
export class LogOutput {
  private pending: string[] = [];
  private pendingBytes = 0;
  private writing = false;
  private overflowWarned = false;

  constructor(private readonly fd = 1) {
    process.once('exit', () => this.flushSync());
  }

  write(line: string): boolean {
    if (stdoutClosed) return true;
    if (this.pendingBytes + line.length > MAX_PENDING_BYTES) {
      if (!this.overflowWarned) {
        this.overflowWarned = true;
        try {
          writeSync(2, 'waytrack: standard output is not being read; log lines are dropped until it is\n');
        } catch {}
      }
      return true;
    }
    this.pending.push(line);
    this.pendingBytes += line.length;
    if (!this.writing) this.writeNext();
    return true;
  }

  private writeNext(): void {
    if (stdoutClosed || this.pending.length === 0) {
      this.writing = false;
      return;
    }
    const chunk = Buffer.from(this.pending.join(''));
    this.pending = [];
    this.pendingBytes = 0;
    this.overflowWarned = false;
    this.writing = true;
    this.writeChunk(chunk);
  }

  private writeChunk(chunk: Buffer): void {
    write(this.fd, chunk, 0, chunk.length, null, (error, written) => {
      if (error) {
        // A non-blocking pipe that is full: try again shortly.
        if (error.code === 'EAGAIN') setTimeout(() => this.writeChunk(chunk), 10).unref();
        else {
          stdoutGone(error);
          this.pending = [];
          this.pendingBytes = 0;
          this.writing = false;
        }
        return;
      }
      if (written < chunk.length) this.writeChunk(chunk.subarray(written));
      else this.writeNext();
    });
  }

  /** One synchronous attempt at what waits (on exit): a failure drops it. */
  flushSync(): void {
    if (stdoutClosed || this.pending.length === 0) return;
    const rest = this.pending.join('');
    this.pending = [];
    this.pendingBytes = 0;
    try {
      writeSync(this.fd, rest);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') stdoutGone(error);
    }
  }
}
