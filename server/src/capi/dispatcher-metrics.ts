import { Counter, Gauge, type Registry } from 'prom-client';
import type { Database } from '../db/database.js';
import { countBacklog } from '../db/repositories/outbox.js';

export const modeOf = (livemode: number) => (livemode === 1 ? 'live' : 'test');

/** What the dispatcher reports to Prometheus (`/metrics`): deliveries, requests and the backlog. */
export function dispatcherMetrics(database: Database, registry: Registry | undefined) {
  const registers = registry ? [registry] : [];
  return {
    sent: new Counter({
      name: 'waytrack_capi_events_sent_total',
      help: 'Conversions Meta acknowledged',
      labelNames: ['mode'],
      registers,
    }),
    failed: new Counter({
      name: 'waytrack_capi_events_failed_total',
      help: 'Conversions given up on (refused by Meta, or not delivered within 7 days)',
      labelNames: ['mode'],
      registers,
    }),
    retried: new Counter({
      name: 'waytrack_capi_events_retried_total',
      help: 'Conversion delivery attempts that failed and were scheduled again',
      labelNames: ['mode'],
      registers,
    }),
    requests: new Counter({
      name: 'waytrack_capi_requests_total',
      help: 'Conversions API requests by outcome',
      labelNames: ['outcome'],
      registers,
    }),
    backlog: new Gauge({
      name: 'waytrack_capi_outbox_backlog',
      help: 'Conversions waiting in the outbox for delivery to Meta',
      labelNames: ['mode'],
      registers,
      async collect() {
        try {
          const counts = new Map((await countBacklog(database.read)).map((r) => [modeOf(r.livemode), r.count]));
          for (const m of ['live', 'test']) this.set({ mode: m }, counts.get(m) ?? 0);
        } catch {
          // The database is unreachable: readiness reports that; the gauge keeps its last value.
        }
      },
    }),
  };
}

export type DispatcherMetrics = ReturnType<typeof dispatcherMetrics>;
