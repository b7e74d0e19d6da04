// Debian's `wrk` for the closed-loop runs of the benches: found (or installed), and run with a
// Lua script that sends clicks or batches and reports in JSON.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { benchClick, cpuMs } from './lib.js';

/**
 * Debian's `wrk` (a C client: at the rates here it uses a fraction of a core, where autocannon,
 * a Node process, needs nearly a whole one and becomes the bottleneck itself). Installed with
 * apt-get when missing and the bench runs as root; undefined when it cannot be had (the bench
 * then drives the server with autocannon and says so).
 */
export function findWrk() {
  const which = () => {
    try {
      return execFileSync('sh', ['-c', 'command -v wrk'], { encoding: 'utf8' }).trim() || undefined;
    } catch {
      return undefined;
    }
  };
  let found = which();
  if (!found && process.getuid?.() === 0) {
    try {
      execFileSync(
        'sh',
        ['-c', 'apt-get install -y -qq wrk >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq wrk)'],
        {
          stdio: 'ignore',
          timeout: 300_000,
        },
      );
    } catch {
      // no package source reachable: autocannon it is
    }
    found = which();
  }
  return found;
}

/**
 * One `wrk` run (one thread, `connections` keep-alive connections), resolved with req/s,
 * latency percentiles (ms), the count of non-2xx answers and socket errors, and the client's own
 * CPU time. `click` sends POST /v1/track/click with a unique fbclid per request (a Lua script);
 * otherwise GET `url`.
 */
export function wrkRun({ wrkPath, url, connections, duration, click, batch }) {
  const dir = mkdtempSync(path.join(tmpdir(), 'waytrack-wrk-'));
  const script = path.join(dir, 'run.lua');
  // The body as a Lua expression: benchClick's JSON with the fbclid spliced in per request. A
  // batch (`batch.events` clicks a request) is built in Lua from the same click, each event
  // with an fbclid of its own.
  const post = click ?? batch;
  const [before, after] = post ? JSON.stringify(benchClick(post.storeId, '\u0000')).split('\\u0000') : ['', ''];
  const body = batch ? `{"events":[' .. events() .. ']}` : `${before}' .. prefix .. counter .. '${after}`;
  const eventLua = batch
    ? `events = function()
  local parts = {}
  for i = 1, ${batch.events} do
    counter = counter + 1
    parts[i] = '{"type":"click",${before.slice(1)}' .. prefix .. counter .. '${after}'
  end
  return table.concat(parts, ",")
end
`
    : '';
  writeFileSync(
    script,
    `counter = 0
prefix = "wrk_${process.pid}_${Date.now().toString(36)}_"
${eventLua}${
  post
    ? `wrk.method = "POST"
wrk.headers["Authorization"] = "Bearer ${post.key}"
wrk.headers["Content-Type"] = "application/json"
request = function()
  ${batch ? '' : 'counter = counter + 1'}
  return wrk.format(nil, nil, nil, '${body}')
end`
    : ''
}
non2xx = 0
response = function(status, headers, body)
  if status < 200 or status > 299 then non2xx = non2xx + 1 end
end
done = function(summary, latency, requests)
  io.write(string.format('WAYTRACK {"requests":%d,"seconds":%f,"p50":%f,"p90":%f,"p99":%f,"max":%f,"errors":%d,"non2xx":%d}\\n',
    summary.requests, summary.duration / 1e6, latency:percentile(50) / 1000, latency:percentile(90) / 1000,
    latency:percentile(99) / 1000, latency.max / 1000,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout, non2xx))
end
`,
  );
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(wrkPath, ['-t1', `-c${connections}`, `-d${duration}s`, '--latency', '-s', script, url], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      out += d;
    });
    const pid = child.pid;
    let cpu = 0;
    const sample = setInterval(() => {
      cpu = cpuMs(pid) || cpu;
    }, 200);
    child.once('exit', (code) => {
      clearInterval(sample);
      rmSync(dir, { recursive: true, force: true });
      const line = /WAYTRACK (\{.*\})/.exec(out)?.[1];
      if (code !== 0 || !line) return reject(new Error(`wrk exited with ${code}:\n${out}`));
      const r = JSON.parse(line);
      // The status codes of non-2xx answers are counted by the script (wrk's own count is of >399).
      resolve({
        average: r.requests / r.seconds,
        total: r.requests,
        ok: r.requests - r.non2xx,
        non2xx: r.non2xx,
        errors: r.errors,
        exact: { p50: round1(r.p50), p90: round1(r.p90), p99: round1(r.p99), max: round1(r.max) },
        clientCpuShare: Math.round((100 * cpu) / (performance.now() - started)),
      });
    });
  });
}

const round1 = (ms) => Math.round(ms * 10) / 10;
