import type { LookupAddress } from 'node:dns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPrivateAddress } from '../../src/webhooks/address.js';
import { nextAttemptAt, retryDelayMs } from '../../src/webhooks/schedule.js';
import { postMessage } from '../../src/webhooks/send.js';
import { signatureOf } from '../../src/webhooks/signing.js';
import { Receiver } from '../webhooks/receiver.js';

describe('private addresses', () => {
  it.each([
    '127.0.0.1',
    '127.8.9.10',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '0.0.0.0',
    '100.64.0.1',
    '::1',
    '::',
    'fd00::1',
    'fc12:3456::1',
    'fe80::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '::ffff:a9fe:a9fe',
    '[::1]',
    '0:0:0:0:0:ffff:c0a8:0101',
  ])('%s is refused', (address) => {
    expect(isPrivateAddress(address)).toBe(true);
  });

  // 203.0.113.0/24 (documentation) is no longer here: only public unicast passes (address.ts).
  it.each(['8.8.8.8', '93.184.216.34', '172.32.0.1', '192.169.0.1', '2001:4860:4860::8888', '::ffff:8.8.8.8', '::ffff:808:808'])(
    '%s is allowed',
    (address) => {
      expect(isPrivateAddress(address)).toBe(false);
    },
  );
});

describe('retry schedule', () => {
  it('is 5 s, 30 s, 2 min, 10 min, 1 h, then every 6 h, scaled', () => {
    const hour = 3_600_000;
    expect([1, 2, 3, 4, 5, 6, 7, 20].map((n) => retryDelayMs(n, 1))).toEqual([
      5000,
      30_000,
      120_000,
      600_000,
      hour,
      6 * hour,
      6 * hour,
      6 * hour,
    ]);
    expect(retryDelayMs(1, 0.001)).toBe(5);
  });

  it('gives up when the next attempt would fall after 3 days (scaled too)', () => {
    const day = 24 * 3_600_000;
    expect(nextAttemptAt(0, 10, 2 * day, 1)).toBe(2 * day + 6 * 3_600_000);
    expect(nextAttemptAt(0, 10, 3 * day - 3_600_000, 1)).toBeUndefined();
    expect(nextAttemptAt(0, 10, 0.5 * 3 * day * 0.01, 0.01)).toBeDefined();
    expect(nextAttemptAt(0, 10, 3 * day * 0.01 - 1, 0.01)).toBeUndefined();
  });
});

describe('signing', () => {
  it('matches the Standard Webhooks reference vector', () => {
    // From the Standard Webhooks specification's test vectors.
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const signature = signatureOf(secret, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}');
    expect(signature).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });
});

describe('the connect-time address check (DNS rebinding)', () => {
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await Receiver.start();
  });
  afterAll(async () => receiver.close());

  const resolvingTo =
    (address: string) => (_host: string, _options: unknown, callback: (e: Error | null, a: LookupAddress[]) => void) =>
      callback(null, [{ address, family: 4 }]);

  it('refuses a name that resolves to a private address when it connects, and sends nothing', async () => {
    // A name that resolved to a public address when the endpoint was made and to 127.0.0.1 now.
    const result = await postMessage(`https://localhost:${receiver.port}/rebound`, {}, '{}', {
      allowPrivate: false,
      ca: receiver.cert,
      // biome-ignore lint/suspicious/noExplicitAny: a stand-in for dns.lookup
      resolve: resolvingTo('127.0.0.1') as any,
    });
    expect(result).toMatchObject({ ok: false, responseCode: null });
    expect(result.error).toMatch(/^Refused: localhost resolves to 127\.0\.0\.1, a private address/);
    expect(receiver.received).toHaveLength(0);
  });

  it('refuses a literal private address without connecting, also written as IPv4-mapped IPv6', async () => {
    for (const host of ['127.0.0.1', '[::ffff:127.0.0.1]', '[::1]']) {
      const result = await postMessage(`https://${host}:${receiver.port}/literal`, {}, '{}', {
        allowPrivate: false,
        ca: receiver.cert,
      });
      expect(result.error).toMatch(/^Refused: .* is a private address/);
    }
    expect(receiver.received).toHaveLength(0);
  });

  it('delivers there when private addresses are allowed', async () => {
    const result = await postMessage(`https://localhost:${receiver.port}/allowed`, { 'webhook-id': 'msg_1' }, '{"a":1}', {
      allowPrivate: true,
      ca: receiver.cert,
    });
    expect(result).toMatchObject({ ok: true, responseCode: 200, error: null });
    expect(receiver.received.at(-1)).toMatchObject({ path: '/allowed', body: '{"a":1}' });
  });

  it('fails a request the endpoint does not answer within the timeout', async () => {
    receiver.answer = () => new Promise((resolve) => setTimeout(() => resolve(200), 1000));
    const result = await postMessage(`https://localhost:${receiver.port}/slow`, {}, '{}', {
      allowPrivate: true,
      ca: receiver.cert,
      timeoutMs: 200,
    });
    expect(result).toMatchObject({ ok: false, responseCode: null });
    expect(result.error).toMatch(/^No answer within/);
  });
});
