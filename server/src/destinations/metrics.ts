import { Counter, Gauge, type Registry } from 'prom-client';
import type { Database } from '../db/database.js';
import { countJobs } from '../db/repositories/destinations.js';
import type { DestinationJobsTable } from '../db/schema.js';

export const modeOf = (livemode: number) => (livemode === 1 ? 'live' : 'test');

/**
 * What the shared dispatcher reports to Prometheus (`/metrics`): per destination
 * `waytrack_destination_*`, and for Meta also the `waytrack_capi_*` series it had before the
 * outbox was one (operations.md lists both).
 */
export function dispatcherMetrics(database: Database, registry: Registry | undefined) {
  const registers = registry ? [registry] : [];
  /** One read of the backlog serves both gauges of a scrape. */
  let backlog: Promise<Array<{ destination: string; livemode: number; count: number }>> | undefined;
  const readBacklog = () => {
    backlog ??= countJobs(database.read).finally(() => setTimeout(() => (backlog = undefined), 100).unref());
    return backlog;
  };
  const capi = {
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
          const rows = (await readBacklog()).filter((r) => r.destination === 'meta');
          for (const m of ['live', 'test']) this.set({ mode: m }, rows.find((r) => modeOf(r.livemode) === m)?.count ?? 0);
        } catch {
          // The database is unreachable: readiness reports that; the gauge keeps its last value.
        }
      },
    }),
  };
  const events = new Counter({
    name: 'waytrack_destination_events_total',
    help: 'Conversion deliveries to destinations, by destination, mode and outcome (sent, retried, failed)',
    labelNames: ['destination', 'mode', 'outcome'],
    registers,
  });
  const refunds = new Counter({
    name: 'waytrack_destination_refunds_total',
    help: 'Refund deliveries (Google Ads adjustments, opt-in refund events) to destinations, by destination, mode and outcome (sent, retried, failed, skipped)',
    labelNames: ['destination', 'mode', 'outcome'],
    registers,
  });
  const requests = new Counter({
    name: 'waytrack_destination_requests_total',
    help: 'Requests to destinations, by destination',
    labelNames: ['destination'],
    registers,
  });
  new Gauge({
    name: 'waytrack_destination_backlog',
    help: 'Conversions waiting for delivery to a destination, by destination and mode',
    labelNames: ['destination', 'mode'],
    registers,
    collect: async function (this: Gauge) {
      try {
        const rows = await readBacklog();
        this.reset();
        for (const row of rows) this.set({ destination: row.destination, mode: modeOf(row.livemode) }, row.count);
      } catch {
        // The database is unreachable: readiness reports that.
      }
    },
  });

  return {
    /** A request was made (`outcome`: the platform's own name of it, when it gave one). */
    request(destination: string, outcome: string | undefined): void {
      requests.inc({ destination });
      if (destination === 'meta' && outcome) capi.requests.inc({ outcome });
    },
    /** Jobs whose state a recording changed (sent, retried: pending again, failed); `retried` false: jobs given back untried. */
    recorded(
      destination: string,
      rows: Array<Pick<DestinationJobsTable, 'status' | 'livemode' | 'kind'>>,
      retried: boolean,
    ): void {
      for (const row of rows) {
        if (row.status === 'pending' && !retried) continue;
        const outcome = row.status === 'pending' ? 'retried' : row.status;
        const mode = modeOf(row.livemode);
        (row.kind === 'refund' ? refunds : events).inc({ destination, mode, outcome });
        if (destination !== 'meta') continue;
        if (row.status === 'sent') capi.sent.inc({ mode });
        else if (row.status === 'failed') capi.failed.inc({ mode });
        else if (row.status === 'pending') capi.retried.inc({ mode });
      }
    },
    skipped(destination: string, livemode: number, count: number): void {
      refunds.inc({ destination, mode: modeOf(livemode), outcome: 'skipped' }, count);
    },
  };
}

export type DispatcherMetrics = ReturnType<typeof dispatcherMetrics>;
