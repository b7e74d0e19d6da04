import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import SqliteDriver from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINE } from '../engine.js';
import { cli, request, type ServerProcess, serve } from './process.js';

/**
 * Power loss, not just kill -9: kill -9 keeps the OS page cache, so it cannot show that an
 * acknowledged write reached the disk. This test reads the order of the server's system calls
 * instead (strace) while it takes clicks and conversions over HTTPS, with log checkpoints
 * forced every 64 KiB: for every acknowledged request, the log frames holding its row were
 * written (pwrite64 to the -wal file) and an fsync/fdatasync of the -wal file began after that
 * commit and returned BEFORE the first byte of the response went to the client's socket. A power
 * cut keeps exactly what was synced, so this is the evidence that every 2xx survives one.
 * docs/durability.md explains the argument and shows an excerpt of the trace.
 *
 * Why the order is sound: strace is one process that handles every thread's stops one at a
 * time and writes them in that order to one file (-f, one -o file). A thread stopped at a
 * syscall's exit runs on only after strace has written that exit, so anything it causes (the
 * pool thread's fsync completing → the event loop sending the answer) is written later.
 *
 * Which socket write answers which request: TLS hides the bytes, so per connection (one
 * keep-alive connection per client lane, known by its client port, which `-yy` prints with
 * the fd) the server's successful reads and writes form bursts; each request is one read
 * burst followed by one write burst (the client sends the next request only after the whole
 * answer arrived). Counted from the end (the server is killed with the connections still open,
 * so nothing follows the last answer), the lane's n requests are the last n read/write pairs.
 * A mistaken pairing cannot pass: the request's row must appear in the log after its read.
 */
const STRACE = '/usr/bin/strace';
const LANES = 4;
const PER_LANE = 60; // clicks and conversions alternately: 240 acknowledged writes
const CHECKPOINT_BYTES = 64 * 1024;

if (ENGINE !== 'sqlite') {
  console.log(
    'durability trace skipped on PostgreSQL (the strace check is of the embedded engine); checking synchronous_commit and fsync instead',
  );
} else if (!existsSync(STRACE)) {
  console.log('durability trace skipped: install strace (/usr/bin/strace) to check that every answer follows its fsync');
}

interface Sent {
  marker: string;
  kind: 'click' | 'conversion';
  status: number;
  port: number;
}

/** One syscall of the trace: where its entry and its exit were written (line numbers). */
interface Call {
  pid: string;
  name: string;
  /** The fd's annotation printed by -yy: a path, or `TCP:[local->remote]`. */
  fd: string;
  /** pwrite64: count and offset, the first 24 bytes, and the request markers in the buffer. */
  count: number;
  offset: number;
  head: Buffer;
  markers: string[];
  /** The return value; -1 when the trace has none (see `cutOff`). */
  result: number;
  /**
   * Entered but its return never reported (`= ?`, a line cut short, or no exit line at all): the
   * server was killed while strace held the call's exit. The kernel may have done it all
   * already: a lane's last answer can be such a write, its bytes with the client before strace
   * wrote the exit.
   */
  cutOff: boolean;
  entry: number;
  exit: number;
  entryLine: string;
}

/**
 * Parses `strace -f -ttt -yy -x` output, joining `<unfinished ...>` and `<... resumed>` halves.
 * Buffers are not kept (pages make lines of 16 kB): a pwrite64 keeps its count, offset, first
 * bytes and the markers (`prefix…z`) found in it.
 */
function parseTrace(text: string, prefix: string): Call[] {
  const hexPrefix = hex(prefix);
  const markersIn = (line: string): string[] => {
    const found: string[] = [];
    for (let at = line.indexOf(hexPrefix); at >= 0; at = line.indexOf(hexPrefix, at + 1)) {
      const end = line.indexOf('\\x7a', at + hexPrefix.length); // 'z' ends a marker
      if (end > at && end - at < 40 * 4) found.push(Buffer.from(line.slice(at, end + 4).replace(/\\x/g, ''), 'hex').toString());
    }
    for (let at = line.indexOf(prefix); at >= 0; at = line.indexOf(prefix, at + 1)) {
      const end = line.indexOf('z', at + prefix.length);
      if (end > at) found.push(line.slice(at, end + 1));
    }
    return found;
  };
  const calls: Call[] = [];
  const open = new Map<string, { name: string; head: string; entry: number; entryLine: string }>();
  const lines = text.split('\n');
  const finish = (pid: string, name: string, full: string, entry: number, exit: number, entryLine: string) => {
    const fd = /^[a-z0-9_]+\(\d+<(TCP:\[[^\]]*\]|[^>]*)>/.exec(full)?.[1] ?? '';
    const result = /\) = (-?\d+)(?: [A-Z].*)?$/.exec(full)?.[1];
    const pwrite = name === 'pwrite64' ? /"(?:\.\.\.)?, (\d+), (\d+)\) = /.exec(full) : null;
    const quoted = pwrite ? (/^[^"]*"((?:\\x[0-9a-f]{2}){0,24})/.exec(full)?.[1] ?? '') : '';
    calls.push({
      pid,
      name,
      fd,
      count: pwrite ? Number(pwrite[1]) : -1,
      offset: pwrite ? Number(pwrite[2]) : -1,
      head: Buffer.from(quoted.replace(/\\x/g, ''), 'hex'),
      markers: pwrite && fd.endsWith('.db-wal') ? markersIn(full) : [],
      result: result === undefined ? -1 : Number(result),
      cutOff: result === undefined,
      entry,
      exit,
      entryLine: entryLine.length > 400 ? entryLine.slice(0, 400) : entryLine,
    });
  };
  lines.forEach((line, i) => {
    const m = /^(\d+) +\d+\.\d+ (.*)$/.exec(line);
    if (!m) return;
    const [, pid, rest] = m as unknown as [string, string, string];
    const resumed = /^<\.\.\. ([a-z0-9_]+) resumed>(.*)$/.exec(rest);
    if (resumed) {
      const started = open.get(pid);
      open.delete(pid);
      if (started) finish(pid, started.name, started.head + resumed[2], started.entry, i, started.entryLine);
      return;
    }
    const call = /^([a-z0-9_]+)\(/.exec(rest);
    if (!call) return; // signals, exits
    const name = call[1] as string;
    if (rest.endsWith(' <unfinished ...>')) {
      open.set(pid, { name, head: rest.slice(0, -' <unfinished ...>'.length), entry: i, entryLine: line });
    } else finish(pid, name, rest, i, i, line);
  });
  for (const [pid, started] of open) finish(pid, started.name, started.head, started.entry, started.entry, started.entryLine);
  return calls;
}

const hex = (s: string) => [...Buffer.from(s)].map((b) => `\\x${b.toString(16).padStart(2, '0')}`).join('');

function send(agent: https.Agent, server: ServerProcess, urlPath: string, key: string, body?: unknown) {
  const payload = body === undefined ? '' : JSON.stringify(body);
  return new Promise<{ status: number; port: number }>((resolve, reject) => {
    const req = https.request(
      new URL(urlPath, server.url),
      {
        method: body === undefined ? 'GET' : 'POST',
        agent,
        ca: server.ca,
        servername: 'localhost',
        headers: {
          authorization: `Bearer ${key}`,
          ...(payload && { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
        },
      },
      (res) => {
        const port = res.socket.localPort ?? 0;
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, port }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** Children of a process (the server started by strace). */
function childrenOf(pid: number): number[] {
  const file = `/proc/${pid}/task/${pid}/children`;
  return existsSync(file) ? readFileSync(file, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number) : [];
}

const clip = (line: string, n = 170) => (line.length > n ? `${line.slice(0, n)}…` : line);

describe.skipIf(ENGINE !== 'sqlite' || !existsSync(STRACE))(
  'power loss: every answer follows the fsync of its log frames (strace)',
  () => {
    let dataDir: string;
    let traceDir: string;
    let server: ServerProcess | undefined;

    beforeAll(async () => {
      dataDir = mkdtempSync(path.join(tmpdir(), 'waytrack-durability-'));
      traceDir = mkdtempSync(path.join(tmpdir(), 'waytrack-durability-trace-'));
    }, 180_000);
    afterAll(async () => {
      if (server) for (const pid of childrenOf(server.child.pid as number)) process.kill(pid, 'SIGKILL');
      await server?.stop('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(traceDir, { recursive: true, force: true });
    });

    it('syncs the -wal file after each commit and before answering, also right after a checkpoint restarted the log', async () => {
      const started = Date.now();
      const env = {
        DATA_DIR: dataDir,
        WAYTRACK_TEST_CHECKPOINT_BYTES: String(CHECKPOINT_BYTES),
        RATE_LIMIT_RPS: '1000000',
        RATE_LIMIT_BURST: '1000000',
        IP_RATE_LIMIT_RPS: '1000000',
      };
      const account = JSON.parse(cli(['account', 'create', '--email', 'durable@example.com', '--json'], env).stdout);
      const key = account.keys.live as string;
      const traceFile = path.join(traceDir, 'trace');
      // Only the calls the check reads stop the server (seccomp-bpf): it runs at near full speed.
      const wrap = [STRACE, '-f', '--seccomp-bpf', '-ttt', '-yy', '-x', '-s', '4096'];
      wrap.push('-e', 'trace=pwrite64,fsync,fdatasync,read,readv,write,writev', '-o', traceFile);
      server = await serve(env, { wrap });
      const live = server;
      const store = await request(live, 'POST', '/v1/stores', {
        key,
        body: { name: 'Durable', domain: 'durable.example.com', platform: 'custom' },
      });
      expect(store.status).toBe(201);
      const storeId = store.body.data.id as string;

      // Markers are unique and none is a prefix of another (zero-padded), so the first log
      // frame holding one is the commit of that request.
      const tag = Date.now().toString(36);
      const lanes = await Promise.all(
        Array.from({ length: LANES }, async (_, lane) => {
          const agent = new https.Agent({ keepAlive: true, maxSockets: 1, keepAliveMsecs: 1000 });
          const sent: Sent[] = [];
          // A first exchange that is not checked: TLS 1.3 sends its session tickets after the
          // handshake, in the same burst of writes as the first answer.
          expect((await send(agent, live, '/healthz', key)).status).toBe(200);
          for (let i = 0; i < PER_LANE; i++) {
            const n = String(Math.floor(i / 2)).padStart(3, '0');
            const fbclid = `dur${tag}l${lane}c${n}z`;
            if (i % 2 === 0) {
              const res = await send(agent, live, '/v1/track/click', key, {
                storeId,
                fbclid,
                landingPage: `https://durable.example.com/p?utm_source=trace&n=${n}`,
              });
              sent.push({ marker: fbclid, kind: 'click', ...res });
            } else {
              const orderId = `dur${tag}l${lane}o${n}z`;
              const res = await send(agent, live, '/v1/track/conversion', key, {
                storeId,
                eventType: 'Purchase',
                orderId,
                eventValue: 12.5,
                currency: 'USD',
                fbclid,
              });
              sent.push({ marker: orderId, kind: 'conversion', ...res });
            }
          }
          return sent;
        }),
      );
      const loadMs = Date.now() - started;
      // Killed with every connection still open: nothing follows the last answer on any of them.
      const nodePid = childrenOf(live.child.pid as number)[0];
      expect(nodePid, 'the server process under strace').toBeDefined();
      process.kill(nodePid as number, 'SIGKILL');
      await live.stop('SIGKILL'); // resolves when strace exits (it exits with its tracee)
      server = undefined;

      const all = lanes.flat();
      expect(all.filter((s) => s.status !== 200)).toEqual([]);

      const text = readFileSync(traceFile, 'utf8');
      const calls = parseTrace(text, `dur${tag}l`);
      const isWal = (c: Call) => c.fd.endsWith('.db-wal');
      const walWrites = calls.filter((c) => c.name === 'pwrite64' && isWal(c) && c.result > 0).sort((a, b) => a.entry - b.entry);
      const walSyncs = calls.filter((c) => (c.name === 'fsync' || c.name === 'fdatasync') && isWal(c) && c.result === 0);
      const dbWrites = calls.filter((c) => c.name === 'pwrite64' && c.fd.endsWith('/waytrack.db') && c.result > 0);
      // A log header (32 bytes at offset 0) after the first one: a checkpoint restarted the log.
      const isHeader = (c: Call) => c.count === 32 && c.offset === 0;
      // A frame header (24 bytes) whose "database size after commit" field is set ends a commit.
      const isCommitFrame = (c: Call) => c.count === 24 && c.head.length === 24 && c.head.readUInt32BE(4) !== 0;
      const headers = walWrites.filter(isHeader);

      const firstFrame = new Map<string, Call>();
      for (const c of walWrites) for (const m of c.markers) if (!firstFrame.has(m)) firstFrame.set(m, c);

      // Per client port: the server's successful socket reads (R) and writes (W), in order.
      const bursts = new Map<number, { kind: 'R' | 'W'; at: number }[]>();
      for (const c of calls) {
        const port = /->127\.0\.0\.1:(\d+)\]$/.exec(c.fd)?.[1];
        // A write cut off by the kill counts: the client had its answer (every lane got all of its).
        if (!port || (c.result <= 0 && !(c.cutOff && c.name.startsWith('write')))) continue;
        const kind = c.name === 'read' || c.name === 'readv' ? 'R' : c.name === 'write' || c.name === 'writev' ? 'W' : undefined;
        if (!kind) continue;
        const list = bursts.get(Number(port)) ?? [];
        if (list.at(-1)?.kind !== kind) list.push({ kind, at: c.entry });
        bursts.set(Number(port), list);
      }

      let afterRestart = 0;
      let example: { sent: Sent; calls: Call[] } | undefined;
      const answerCall = (at: number) => calls.find((c) => c.entry === at) as Call;
      const problems: string[] = [];
      for (const sent of lanes) {
        const ports = new Set(sent.map((s) => s.port));
        expect(ports.size, 'each lane keeps one connection').toBe(1);
        const list = [...(bursts.get(sent[0]?.port as number) ?? [])];
        while (list.at(-1)?.kind === 'R') list.pop();
        expect(list.length, `bursts on port ${sent[0]?.port}`).toBeGreaterThanOrEqual(2 * sent.length);
        for (const [k, s] of sent.entries()) {
          const read = list[list.length - 2 * (sent.length - k)];
          const answer = list[list.length - 2 * (sent.length - k) + 1];
          if (read?.kind !== 'R' || answer?.kind !== 'W') {
            problems.push(`${s.marker}: no read/answer pair`);
            continue;
          }
          const frame = firstFrame.get(s.marker);
          if (!frame) {
            problems.push(`${s.marker}: its row was never written to the log`);
            continue;
          }
          if (frame.entry < read.at) {
            problems.push(`${s.marker}: in the log before its request was read`);
            continue;
          }
          const at = walWrites.indexOf(frame);
          const commit = walWrites.slice(at).find(isCommitFrame);
          const page = commit && walWrites.slice(walWrites.indexOf(commit) + 1).find((c) => c.pid === commit.pid);
          if (!commit || !page) {
            problems.push(`${s.marker}: no commit frame after its row`);
            continue;
          }
          // Any completed sync of the file will do; ours (fdatasync on the thread pool) is shown first.
          const synced = (c: Call) => c.entry > page.exit && c.exit < answer.at;
          const sync = walSyncs.find((c) => c.name === 'fdatasync' && synced(c)) ?? walSyncs.find(synced);
          if (!sync) {
            problems.push(
              `${s.marker}: answered (line ${answer.at + 1}) with no fsync of the log between its commit (line ${page.exit + 1}) and the answer`,
            );
            continue;
          }
          // The first commit after a checkpoint restarted the log (a new log header at offset 0).
          const header = headers.filter((h) => h.entry < frame.entry).at(-1);
          const between = header && walWrites.filter((c) => c.entry > header.entry && c.entry < frame.entry);
          if (header && headers.indexOf(header) > 0 && between && !between.some(isCommitFrame)) {
            afterRestart++;
            const headerSync = walSyncs.find((c) => c.entry > header.entry) as Call;
            example ??= { sent: s, calls: [header, headerSync, frame, commit, page, sync, answerCall(answer.at)] };
          }
        }
      }
      if (problems.length > 0) {
        // Keep the evidence: the trace directory is removed after the test.
        const kept = path.join(tmpdir(), `waytrack-durability-failed-${Date.now()}.trace`);
        copyFileSync(traceFile, kept);
        console.log(`durability trace kept for inspection: ${kept}`);
      }
      expect(problems).toEqual([]);

      const checkpoints = calls
        .filter((c) => c.name === 'fsync' || c.name === 'fdatasync')
        .filter((c) => c.fd.endsWith('/waytrack.db'));
      console.log(
        `durability trace: ${all.length} acknowledged writes over ${LANES} HTTPS connections in ${loadMs} ms; ` +
          `${walWrites.filter(isCommitFrame).length} commits, ${walSyncs.length} syncs of the log, ` +
          `${checkpoints.length} syncs of the database file by checkpoints (${dbWrites.length} pages copied), ` +
          `${headers.length - 1} log restarts; ${afterRestart} answers were of the first commit after a restart; ` +
          'every answer followed an fsync of its commit',
      );
      expect(headers.length - 1, 'checkpoints restarted the log').toBeGreaterThanOrEqual(2);
      expect(afterRestart, 'answers checked right after a log restart').toBeGreaterThanOrEqual(1);
      if (example) {
        console.log(`excerpt (${example.sent.kind} ${example.sent.marker}, first commit after a log restart):`);
        for (const c of example.calls) {
          console.log(
            `  line ${c.entry + 1}: ${clip(c.entryLine)}${c.exit !== c.entry ? ` … returned at line ${c.exit + 1}` : ''}`,
          );
        }
      }

      // And what was acknowledged is there after the kill (the page cache kept it; the trace above is the power-cut evidence).
      const db = new SqliteDriver(path.join(dataDir, 'waytrack.db'));
      try {
        const clicks = db.prepare('select count(*) as n from clicks where fbclid = ?');
        const conversions = db.prepare('select count(*) as n from conversions where order_id = ?');
        for (const s of all) {
          const row = (s.kind === 'click' ? clicks : conversions).get(s.marker) as { n: number };
          expect(row.n, s.marker).toBe(1);
        }
      } finally {
        db.close();
      }
    }, 150_000);
  },
);

describe.skipIf(ENGINE !== 'postgres')('PostgreSQL: a commit returns once it is durable', () => {
  it('runs with synchronous_commit = on and fsync = on', async () => {
    const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await client.connect();
    try {
      const setting = async (name: string) => (await client.query(`show ${name}`)).rows[0]?.[name];
      expect(await setting('synchronous_commit')).toBe('on');
      expect(await setting('fsync')).toBe('on');
      expect(await setting('full_page_writes')).toBe('on');
    } finally {
      await client.end();
    }
  });
});
