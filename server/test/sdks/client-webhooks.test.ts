// @waytrack/client's verifyWebhook, checked against the reference implementation of Standard
// Webhooks (the `standardwebhooks` package, a dev dependency only): whatever it signs we accept,
// and on every case below, good or forged, both reach the same verdict. Also the signer the
// server really uses, and Node 18's path (no global Web Crypto). Engine-independent: SQLite pass only.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { WebhookVerificationError as ReferenceVerificationError, Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { verifyWebhook, WebhookVerificationError } from '../../../packages/client/src/index.ts';
import { newSigningSecret, signedHeaders } from '../../src/webhooks/signing.js';
import { ENGINE } from '../engine.js';

const CLIENT_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../packages/client');
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const OTHER_SECRET = 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD';
const BODY =
  '{"type":"conversion.attributed","timestamp":"2026-11-22T10:00:00.000Z","data":{"orderId":"820982911946154508","value":49.99,"note":"café ☕"}}';

type Headers = Record<string, string>;
type Verdict = 'accepted' | 'refused';

/** Standard Webhooks headers signed by the reference library, `secondsAgo` in the past. */
function referenceSigned(body: string, secret = SECRET, secondsAgo = 0, id = 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W'): Headers {
  const at = new Date(Date.now() - secondsAgo * 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(id, at, body),
  };
}

async function ours(body: string | Uint8Array, headers: Headers, secret: string): Promise<Verdict> {
  try {
    await verifyWebhook(body, headers, secret);
    return 'accepted';
  } catch (error) {
    if (error instanceof WebhookVerificationError) return 'refused';
    throw error;
  }
}

function reference(body: string, headers: Headers, secret: string): Verdict {
  try {
    new Webhook(secret).verify(body, headers);
    return 'accepted';
  } catch (error) {
    if (error instanceof ReferenceVerificationError) return 'refused';
    throw error;
  }
}

afterEach(() => {
  vi.useRealTimers();
});

describe.skipIf(ENGINE === 'postgres')('verifyWebhook (@waytrack/client) against the standardwebhooks package', () => {
  it('accepts what the reference signs, as text or raw bytes, whatever the headers object', async () => {
    const headers = referenceSigned(BODY);
    const event = await verifyWebhook(BODY, headers, SECRET);
    expect(event).toEqual(JSON.parse(BODY));
    // Raw bytes (Node's Buffer from express.raw, a Uint8Array from a fetch Request) are verified as sent.
    expect(await verifyWebhook(Buffer.from(BODY), headers, SECRET)).toEqual(event);
    expect(await verifyWebhook(new TextEncoder().encode(BODY), headers, SECRET)).toEqual(event);
    // Fetch API Headers, any header case, and Node's string[] values.
    expect(await verifyWebhook(BODY, new globalThis.Headers(headers), SECRET)).toEqual(event);
    const upper = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]));
    expect(await verifyWebhook(BODY, upper, SECRET)).toEqual(event);
    expect(
      await verifyWebhook(BODY, { ...headers, 'webhook-signature': [headers['webhook-signature'] as string] }, SECRET),
    ).toEqual(event);
  });

  it('reaches the reference verdict on every case: secrets, tampering, timestamps, several signatures', async () => {
    const good = referenceSigned(BODY);
    const goodSignature = good['webhook-signature'] as string;
    const otherSignature = referenceSigned(BODY, OTHER_SECRET)['webhook-signature'] as string;
    const bareSecret = SECRET.slice('whsec_'.length);
    const cases: Array<{ name: string; body?: string; headers: Headers; secret?: string; verdict: Verdict }> = [
      { name: 'as signed', headers: good, verdict: 'accepted' },
      { name: 'secret without the whsec_ prefix', headers: good, secret: bareSecret, verdict: 'accepted' },
      {
        name: 'signed with the bare secret, verified with whsec_',
        headers: referenceSigned(BODY, bareSecret),
        verdict: 'accepted',
      },
      { name: 'wrong secret', headers: good, secret: OTHER_SECRET, verdict: 'refused' },
      { name: 'tampered body', body: BODY.replace('49.99', '4999'), headers: good, verdict: 'refused' },
      { name: 'body with a trailing newline', body: `${BODY}\n`, headers: good, verdict: 'refused' },
      { name: 'another webhook-id', headers: { ...good, 'webhook-id': 'msg_other' }, verdict: 'refused' },
      {
        name: 'timestamp changed',
        headers: { ...good, 'webhook-timestamp': String(Number(good['webhook-timestamp']) + 1) },
        verdict: 'refused',
      },
      { name: '4 minutes old', headers: referenceSigned(BODY, SECRET, 240), verdict: 'accepted' },
      { name: '6 minutes old', headers: referenceSigned(BODY, SECRET, 360), verdict: 'refused' },
      { name: '6 minutes in the future', headers: referenceSigned(BODY, SECRET, -360), verdict: 'refused' },
      { name: 'timestamp not a number', headers: { ...good, 'webhook-timestamp': 'yesterday' }, verdict: 'refused' },
      {
        name: 'right one second of two',
        headers: { ...good, 'webhook-signature': `${otherSignature} ${goodSignature}` },
        verdict: 'accepted',
      },
      {
        name: 'right one first of three',
        headers: { ...good, 'webhook-signature': `${goodSignature} v1,bm9ldHRoZXNpZ25hdHVyZQ== ${otherSignature}` },
        verdict: 'accepted',
      },
      {
        name: 'two wrong ones',
        headers: { ...good, 'webhook-signature': `${otherSignature} v1,bm9ldHRoZXNpZ25hdHVyZQ==` },
        verdict: 'refused',
      },
      {
        name: 'right signature under another version',
        headers: { ...good, 'webhook-signature': goodSignature.replace('v1,', 'v2,') },
        verdict: 'refused',
      },
      {
        name: 'right signature without its version',
        headers: { ...good, 'webhook-signature': goodSignature.slice(3) },
        verdict: 'refused',
      },
      { name: 'signature truncated', headers: { ...good, 'webhook-signature': goodSignature.slice(0, -4) }, verdict: 'refused' },
      {
        name: 'no webhook-signature',
        headers: { 'webhook-id': good['webhook-id'] as string, 'webhook-timestamp': good['webhook-timestamp'] as string },
        verdict: 'refused',
      },
      {
        name: 'no webhook-id',
        headers: { 'webhook-timestamp': good['webhook-timestamp'] as string, 'webhook-signature': goodSignature },
        verdict: 'refused',
      },
      {
        name: 'no webhook-timestamp',
        headers: { 'webhook-id': good['webhook-id'] as string, 'webhook-signature': goodSignature },
        verdict: 'refused',
      },
    ];
    const verdicts = await Promise.all(
      cases.map(async ({ name, body = BODY, headers, secret = SECRET }) => ({
        name,
        ours: await ours(body, headers, secret),
        reference: reference(body, headers, secret),
      })),
    );
    expect(verdicts).toEqual(cases.map(({ name, verdict }) => ({ name, ours: verdict, reference: verdict })));
  });

  it('accepts the Standard Webhooks specification test vector, with its time', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: (1614265330 + 10) * 1000 });
    const headers = {
      'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      'webhook-timestamp': '1614265330',
      'webhook-signature': 'v1,bm9ldHRoZXNpZ25hdHVyZQ== v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    };
    expect(await verifyWebhook('{"test": 2432232314}', headers, SECRET)).toEqual({ test: 2432232314 });
    expect(reference('{"test": 2432232314}', headers, SECRET)).toBe('accepted');
    await expect(verifyWebhook('{"test": 2432232314}', headers, SECRET, { toleranceSeconds: 5 })).rejects.toThrow(/too old/);
  });

  it('accepts what the server signs and the reference accepts, and keeps big integers exact', async () => {
    const secret = newSigningSecret();
    const body = '{"type":"refund.recorded","timestamp":"2026-11-22T10:00:00.000Z","data":{"shopOrder":12345678901234567890}}';
    const headers = signedHeaders(secret, 'msg_server', body);
    expect(reference(body, headers, secret)).toBe('accepted');
    const event = await verifyWebhook<{ shopOrder: unknown }>(body, headers, secret);
    expect(event.data.shopOrder).toBe('12345678901234567890');
  });

  it('a secret that is not one is a TypeError (configuration), not a refused request', async () => {
    const headers = referenceSigned(BODY);
    for (const secret of ['', 'whsec_', 'whsec_not base64!', 'whsec_abcde']) {
      await expect(verifyWebhook(BODY, headers, secret), secret).rejects.toThrow(TypeError);
    }
  });

  it('refuses a signed body that is not JSON with a verification error', async () => {
    const headers = referenceSigned('not json');
    await expect(verifyWebhook('not json', headers, SECRET)).rejects.toThrow(WebhookVerificationError);
  });

  it('works on Node 18, which has no global Web Crypto: node:crypto instead', async () => {
    const headers = referenceSigned(BODY);
    const descriptor = Object.getOwnPropertyDescriptor(globalThis, 'crypto');
    // Node ≥ 19 defines it configurable; this file's tests run one at a time, and it comes back below.
    Reflect.deleteProperty(globalThis, 'crypto');
    try {
      expect(globalThis.crypto).toBeUndefined();
      expect((await verifyWebhook<{ orderId: string }>(BODY, headers, SECRET)).data.orderId).toBe('820982911946154508');
      await expect(verifyWebhook(BODY.replace('49.99', '4999'), headers, SECRET)).rejects.toThrow(WebhookVerificationError);
    } finally {
      if (descriptor) Object.defineProperty(globalThis, 'crypto', descriptor);
    }
    expect(typeof globalThis.crypto.subtle).toBe('object');
  });
});

describe.skipIf(ENGINE === 'postgres')('@waytrack/client has zero runtime dependencies', () => {
  it('package.json lists none (standardwebhooks is a dev dependency, for these tests)', () => {
    const pkg = JSON.parse(readFileSync(path.join(CLIENT_DIR, 'package.json'), 'utf8'));
    expect(pkg.dependencies ?? {}).toEqual({});
    expect(pkg.peerDependencies ?? {}).toEqual({});
    expect(pkg.optionalDependencies ?? {}).toEqual({});
    expect(pkg.devDependencies).toHaveProperty('standardwebhooks');
  });

  it('its sources import only each other and node: built-ins (the latter only from src/node, which browsers skip)', () => {
    const sources = sourcesUnder(path.join(CLIENT_DIR, 'src'));
    const outside: string[] = [];
    for (const file of sources) {
      const text = readFileSync(file, 'utf8');
      for (const [, specifier] of text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)'([^']+)'/g)) {
        const relative = specifier?.startsWith('.');
        const builtinInNodeDir = specifier?.startsWith('node:') && file.includes(`${path.sep}node${path.sep}`);
        if (!relative && !builtinInNodeDir) outside.push(`${path.relative(CLIENT_DIR, file)}: ${specifier}`);
      }
    }
    expect(sources.length).toBeGreaterThan(10);
    expect(outside).toEqual([]);
    // Every src/node module is mapped away for browsers.
    const browser = JSON.parse(readFileSync(path.join(CLIENT_DIR, 'package.json'), 'utf8')).browser as Record<string, false>;
    for (const file of sources.filter((f) => f.includes(`${path.sep}node${path.sep}`))) {
      const name = path.basename(file, '.ts');
      expect(browser).toMatchObject({ [`./dist/esm/node/${name}.js`]: false, [`./dist/cjs/node/${name}.js`]: false });
    }
  });
});

function sourcesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => path.join(entry.parentPath, entry.name));
}
