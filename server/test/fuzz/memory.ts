import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * Heap samples across fuzz batches, to catch a leak: something the server keeps per request.
 *
 * With a forced full GC (global.gc, or one obtained by turning --expose-gc on at run time) the
 * live heap plus external memory (Buffers) is measured, which is steady to a few MB between batches; without it, RSS is
 * compared with a much wider margin. Growth is judged from the smallest sample after warm-up
 * (JIT, compiled schemas, first-use caches) to the last one, against a floor that noise never
 * reaches plus a per-request allowance: a long run (FUZZ_RUNS=20000) sends hundreds of thousands
 * of requests, so even a few hundred bytes kept per request exceeds it.
 */
export function forcedGc(): (() => void) | undefined {
  const existing = (globalThis as { gc?: () => void }).gc;
  if (existing) return existing;
  try {
    setFlagsFromString('--expose-gc');
    return runInNewContext('gc') as () => void;
  } catch {
    return undefined;
  }
}

export interface Sample {
  requests: number;
  bytes: number;
}

export interface LeakPolicy {
  /** Growth tolerated whatever the request count (noise, bounded caches filling up). */
  floorBytes: number;
  /** Bytes per request on top of the floor. */
  perRequestBytes: number;
  /** Samples ignored at the start (warm-up). */
  warmup: number;
}

export const HEAP_POLICY: LeakPolicy = { floorBytes: 48 * 1024 * 1024, perRequestBytes: 256, warmup: 3 };
export const RSS_POLICY: LeakPolicy = { floorBytes: 256 * 1024 * 1024, perRequestBytes: 1024, warmup: 3 };

export class MemoryWatch {
  readonly samples: Sample[] = [];
  private readonly gc = forcedGc();
  readonly policy: LeakPolicy;
  readonly measure: 'heapUsed+external after GC' | 'rss';

  constructor(policy?: LeakPolicy) {
    this.measure = this.gc ? 'heapUsed+external after GC' : 'rss';
    this.policy = policy ?? (this.gc ? HEAP_POLICY : RSS_POLICY);
  }

  sample(requests: number): Sample {
    let bytes: number;
    if (this.gc) {
      this.gc();
      this.gc();
      // Buffers live outside the V8 heap (external): a leak of request bodies shows there.
      const usage = process.memoryUsage();
      bytes = usage.heapUsed + usage.external;
    } else bytes = process.memoryUsage().rss;
    const sample = { requests, bytes };
    this.samples.push(sample);
    return sample;
  }

  /** Undefined when memory is bounded, else why not. */
  verdict(): string | undefined {
    return leakVerdict(this.samples, this.policy);
  }
}

export function leakVerdict(samples: readonly Sample[], policy: LeakPolicy): string | undefined {
  const steady = samples.slice(policy.warmup);
  if (steady.length < 2) return undefined;
  let base = steady[0] as Sample;
  for (const s of steady) if (s.bytes < base.bytes) base = s;
  const last = steady[steady.length - 1] as Sample;
  const requests = Math.max(0, last.requests - base.requests);
  const growth = last.bytes - base.bytes;
  const allowed = policy.floorBytes + policy.perRequestBytes * requests;
  if (growth <= allowed) return undefined;
  const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;
  return `memory grew ${mb(growth)} over ${requests} requests (${Math.round(growth / Math.max(1, requests))} B/request; allowed ${mb(allowed)}): ${steady.map((s) => mb(s.bytes)).join(' → ')}`;
}
