// One set of Standard Webhooks vectors, signed by the reference implementation (the
// `standardwebhooks` package), checked by all three client libraries: the TypeScript client,
// Python's waytrack.verify_webhook and PHP's Waytrack\Webhook::verify each reach the reference's
// verdict on every case, keep big integers in the event exact, and treat a secret that is not one
// as a configuration error. Python and PHP are optional on a developer's machine (CI has both):
// without one, its half says so and skips. Engine-independent: SQLite pass only.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { WebhookVerificationError as ReferenceVerificationError, Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseJsonExact, verifyWebhook, WebhookVerificationError } from '../../../packages/client/src/index.ts';
import { ENGINE } from '../engine.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const NOW = 1_790_000_000; // seconds; every case is signed relative to it and checked at it
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const OTHER = 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD';
// Integers beyond 2^53 and beyond 2^63 (PHP's int): both must come back exact.
const BODY =
  '{"type":"conversion.attributed","timestamp":"2026-09-21T12:00:00.000Z","data":{"shopOrderId":820982911946154508,"lineItem":12345678901234567890,"value":49.99,"note":"café ☕"}}';

type Verdict = 'accepted' | 'refused' | 'bad-secret';
interface Case {
  name: string;
  body: string;
  headers: Record<string, string>;
  secret: string;
}
interface Outcome {
  verdict: Verdict;
  /** For an accepted case: the event's data with every value as text (exactness compared across languages). */
  data?: Record<string, string>;
}

function signed(body: string, secret: string, secondsAgo = 0, id = 'msg_vectors'): Record<string, string> {
  const at = new Date((NOW - secondsAgo) * 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(NOW - secondsAgo),
    'webhook-signature': new Webhook(secret).sign(id, at, body),
  };
}

function cases(): Case[] {
  const good = signed(BODY, SECRET);
  const right = good['webhook-signature'] as string;
  const wrong = signed(BODY, OTHER)['webhook-signature'] as string;
  const bare = SECRET.slice('whsec_'.length);
  const base = { body: BODY, secret: SECRET };
  return [
    { ...base, name: 'as signed', headers: good },
    { ...base, name: 'bare secret (no whsec_)', headers: good, secret: bare },
    { ...base, name: 'signed with the bare secret', headers: signed(BODY, bare) },
    { ...base, name: 'wrong secret', headers: good, secret: OTHER },
    { ...base, name: 'tampered body', body: BODY.replace('49.99', '4999') },
    { ...base, name: 'trailing newline', body: `${BODY}\n`, headers: good },
    { ...base, name: '4 minutes old', headers: signed(BODY, SECRET, 240) },
    { ...base, name: '6 minutes old', headers: signed(BODY, SECRET, 360) },
    { ...base, name: '6 minutes ahead', headers: signed(BODY, SECRET, -360) },
    { ...base, name: 'timestamp not a number', headers: { ...good, 'webhook-timestamp': 'soon' } },
    { ...base, name: 'right one second of two', headers: { ...good, 'webhook-signature': `${wrong} ${right}` } },
    { ...base, name: 'two wrong ones', headers: { ...good, 'webhook-signature': `${wrong} v1,bm9ldHRoZXNpZ25hdHVyZQ==` } },
    { ...base, name: 'right one as v2', headers: { ...good, 'webhook-signature': right.replace('v1,', 'v2,') } },
    { ...base, name: 'no webhook-id', headers: { 'webhook-timestamp': String(NOW), 'webhook-signature': right } },
    { ...base, name: 'secret not base64', headers: good, secret: 'whsec_not base64!' },
    { ...base, name: 'empty secret', headers: good, secret: 'whsec_' },
  ].map((c) => ({ headers: good, ...c }));
}

function reference(c: Case): Outcome {
  try {
    new Webhook(c.secret).verify(c.body, c.headers);
    return { verdict: 'accepted' };
  } catch (error) {
    return { verdict: error instanceof ReferenceVerificationError ? 'refused' : 'bad-secret' };
  }
}

function asText(data: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, String(v)]));
}

async function typescript(c: Case): Promise<Outcome> {
  try {
    const event = await verifyWebhook(c.body, c.headers, c.secret);
    return { verdict: 'accepted', data: asText(event.data) };
  } catch (error) {
    if (error instanceof WebhookVerificationError) return { verdict: 'refused' };
    if (error instanceof TypeError) return { verdict: 'bad-secret' };
    throw error;
  }
}

/** Runs `script` once over every case (JSON on stdin); it prints one outcome a line, numbers as written. */
function runAll(command: string, args: string[], all: Case[], env: NodeJS.ProcessEnv = process.env): Outcome[] {
  const result = spawnSync(command, args, { input: JSON.stringify({ now: NOW, cases: all }), encoding: 'utf8', env });
  expect(result.stderr).toBe('');
  expect(result.status).toBe(0);
  return result.stdout
    .trim()
    .split('\n')
    .map((line) => parseJsonExact<{ verdict: Verdict; data?: Record<string, unknown> }>(line))
    .map(({ verdict, data }) => (data ? { verdict, data: asText(data) } : { verdict }));
}

const PYTHON = `
import json, sys
from waytrack import WebhookVerificationError, verify_webhook
given = json.load(sys.stdin)
for c in given["cases"]:
    try:
        event = verify_webhook(c["body"].encode(), c["headers"], c["secret"], now=given["now"])
        print(json.dumps({"verdict": "accepted", "data": event["data"]}, ensure_ascii=False))
    except WebhookVerificationError:
        print(json.dumps({"verdict": "refused"}))
    except ValueError:
        print(json.dumps({"verdict": "bad-secret"}))
`;

const PHP = `
require '${path.join(ROOT, 'sdks/php/autoload.php')}';
$given = json_decode(stream_get_contents(STDIN), true);
foreach ($given['cases'] as $c) {
    try {
        $event = Waytrack\\Webhook::verify($c['body'], $c['headers'], $c['secret'], 300, $given['now']);
        echo json_encode(['verdict' => 'accepted', 'data' => $event['data']], JSON_UNESCAPED_UNICODE), "\\n";
    } catch (Waytrack\\Exception\\WebhookVerificationException $e) {
        echo json_encode(['verdict' => 'refused']), "\\n";
    } catch (InvalidArgumentException $e) {
        echo json_encode(['verdict' => 'bad-secret']), "\\n";
    }
}
`;

const hasPython = spawnSync('python3', ['-c', 'import sys; sys.exit(0 if sys.version_info >= (3, 9) else 1)']).status === 0;
const hasPhp = spawnSync('php', ['-r', 'exit(PHP_VERSION_ID >= 80100 ? 0 : 1);']).status === 0;
if (!hasPython) console.log('skipped: the Python half needs python3 ≥ 3.9 on PATH');
if (!hasPhp) console.log('skipped: the PHP half needs php ≥ 8.1 on PATH');

afterEach(() => {
  vi.useRealTimers();
});

describe.skipIf(ENGINE === 'postgres')('Standard Webhooks vectors in every client library', () => {
  const all = cases();
  const exactData = { shopOrderId: '820982911946154508', lineItem: '12345678901234567890', value: '49.99', note: 'café ☕' };

  /** The reference's verdicts (checked at NOW), with the exact data every accepted case must give. */
  function expected(): Outcome[] {
    vi.useFakeTimers({ toFake: ['Date'], now: NOW * 1000 });
    try {
      return all.map((c) => {
        const outcome = reference(c);
        return outcome.verdict === 'accepted' ? { ...outcome, data: exactData } : outcome;
      });
    } finally {
      vi.useRealTimers();
    }
  }

  it('the vectors cover acceptance, refusal and a bad secret', () => {
    const verdicts = expected().map((o) => o.verdict);
    expect(verdicts.filter((v) => v === 'accepted').length).toBeGreaterThanOrEqual(4);
    expect(verdicts.filter((v) => v === 'refused').length).toBeGreaterThanOrEqual(8);
    expect(verdicts.filter((v) => v === 'bad-secret')).toHaveLength(2);
  });

  it('TypeScript (@waytrack/client) agrees with the reference', async () => {
    const want = expected();
    vi.useFakeTimers({ toFake: ['Date'], now: NOW * 1000 });
    const got: Outcome[] = [];
    for (const c of all) got.push(await typescript(c));
    expect(got.map((o, i) => ({ case: all[i]?.name, ...o }))).toEqual(want.map((o, i) => ({ case: all[i]?.name, ...o })));
  });

  it.skipIf(!hasPython)('Python (waytrack.verify_webhook) agrees with the reference', () => {
    const got = runAll('python3', ['-c', PYTHON], all, {
      ...process.env,
      PYTHONPATH: path.join(ROOT, 'sdks/python/src'),
      PYTHONDONTWRITEBYTECODE: '1',
    });
    expect(got.map((o, i) => ({ case: all[i]?.name, ...o }))).toEqual(expected().map((o, i) => ({ case: all[i]?.name, ...o })));
  });

  it.skipIf(!hasPhp)('PHP (Waytrack\\Webhook::verify) agrees with the reference', () => {
    const got = runAll('php', ['-r', PHP], all);
    expect(got.map((o, i) => ({ case: all[i]?.name, ...o }))).toEqual(expected().map((o, i) => ({ case: all[i]?.name, ...o })));
  });
});
