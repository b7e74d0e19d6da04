// node bench/load.js '<json>' — one autocannon client in a process of its own, for runs that
// drive several servers (or one server from several clients) at once: one Node process cannot
// drive two servers without becoming the bottleneck itself. bench/run.js spawns it.
//
// The JSON names `url` (the server's https origin), `kind` ('click' or 'health'), `connections`,
// `duration` (s), and for clicks `key`, `storeId` and `prefix` (unique fbclids across clients).
// Prints one JSON line: req/s, totals, non-2xx, errors, latency percentiles (ms).
import { benchClick, cannon } from './lib.js';

process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0'; // the bench's own self-signed servers on 127.0.0.1

const options = JSON.parse(process.argv[2] ?? '{}');
let n = 0;
const target =
  options.kind === 'health'
    ? { url: `${options.url}/healthz` }
    : {
        url: `${options.url}/v1/track/click`,
        method: 'POST',
        headers: { authorization: `Bearer ${options.key}`, 'content-type': 'application/json' },
        requests: [
          {
            setupRequest: (req) => ({
              ...req,
              body: JSON.stringify(benchClick(options.storeId, `${options.prefix}_${process.pid}_${n++}`)),
            }),
          },
        ],
      };
const result = await cannon({ connections: options.connections, duration: options.duration, ...target });
console.log(
  JSON.stringify({
    average: result.requests.average,
    total: result.requests.total,
    ok: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes: result.statusCodeStats,
    p50: result.exact.p50,
    p99: result.exact.p99,
    max: result.exact.max,
    cpuMs: (process.cpuUsage().user + process.cpuUsage().system) / 1000,
  }),
);
