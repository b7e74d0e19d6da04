import type { LookupAddress, lookup } from 'node:dns';
import { isIP } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTestContext, expectError, makeStore, type TestContext } from '../helpers.js';

// Webhooks out (api.md §9): without WEBHOOKS_ALLOW_PRIVATE, an endpoint may reach only public
// unicast addresses — every IPv6 form that embeds a private IPv4 address, and every range the
// address classifier (ipaddr.js) calls special, is refused when the endpoint is registered (a
// literal, or a name resolving to it) and when a delivery connects (a name that resolves there
// later: DNS rebinding). DNS is replaced by a table (the resolver both checks use).

/** Addresses no endpoint may reach: [the address, what it is]. */
const REFUSED: Array<[string, string]> = [
  ['::127.0.0.1', 'IPv4-compatible loopback'],
  ['::10.0.0.1', 'IPv4-compatible private'],
  ['::ffff:0:127.0.0.1', 'IPv4-translated (::ffff:0:0:0/96) loopback'],
  ['::ffff:0:10.0.0.1', 'IPv4-translated private'],
  ['::ffff:192.168.1.1', 'IPv4-mapped private'],
  ['::ffff:169.254.169.254', 'IPv4-mapped link-local (cloud metadata)'],
  ['64:ff9b::127.0.0.1', 'NAT64 of loopback'],
  ['64:ff9b::10.0.0.1', 'NAT64 of private'],
  ['64:ff9b::a9fe:a9fe', 'NAT64 of link-local, hex'],
  ['64:ff9b:1::a00:1', 'NAT64 local-use prefix (64:ff9b:1::/48)'],
  ['2002:7f00:1::1', '6to4 of loopback'],
  ['2002:a00:1::1', '6to4 of private'],
  ['2002:c0a8:101::', '6to4 of private 192.168.1.1'],
  ['fec0::1', 'site-local (fec0::/10)'],
  ['fc00::1', 'unique-local (fc00::/7)'],
  ['fdff:ffff::1', 'unique-local, upper half'],
  ['fe80::1', 'link-local'],
  ['::1', 'loopback'],
  ['::', 'unspecified'],
  ['ff02::1', 'multicast'],
  ['2001::1', 'Teredo'],
  ['2001:db8::1', 'documentation'],
  ['100::1', 'discard-only'],
  ['2001:2::1', 'benchmarking'],
  ['100.64.0.1', 'carrier-grade NAT'],
  ['198.18.0.1', 'benchmarking (IPv4)'],
  ['203.0.113.10', 'documentation (IPv4)'],
  ['192.0.0.1', 'IETF protocol assignments'],
  ['255.255.255.255', 'broadcast'],
  ['240.0.0.1', 'reserved'],
];

/** Public addresses, also in embedding forms: accepted (NAT64 is how IPv6-only hosts reach IPv4). */
const ACCEPTED: Array<[string, string]> = [
  ['8.8.4.4', 'public IPv4'],
  ['2606:4700:4700::1111', 'global unicast IPv6'],
  ['::ffff:8.8.4.4', 'IPv4-mapped public'],
  ['64:ff9b::8.8.4.4', 'NAT64 of public'],
  ['2002:808:404::1', '6to4 of public'],
];

const bracketed = (address: string) => (isIP(address) === 6 ? `[${address}]` : address);

/** The table DNS answers from: host name → address. */
const answers = new Map<string, string>();
const fakeDns = ((hostname: string, options: unknown, callback?: unknown) => {
  const done = (typeof options === 'function' ? options : callback) as (e: Error | null, a: LookupAddress[]) => void;
  const address = answers.get(hostname);
  if (address === undefined)
    return done(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);
  done(null, [{ address, family: isIP(address) }]);
}) as unknown as typeof lookup;

let ctx: TestContext;
beforeAll(async () => {
  // WEBHOOKS_ALLOW_PRIVATE is off (the default); a failed delivery is retried 5 s × 10 later at the earliest.
  // One endpoint per address form in one account: more than the default cap of 20 (WEBHOOK_MAX_ENDPOINTS).
  ctx = await createTestContext({
    env: { WEBHOOK_RETRY_SCALE: '10', WEBHOOK_MAX_ENDPOINTS: '200' },
    webhooks: { pollMs: 20, resolve: fakeDns },
  });
});
afterAll(async () => ctx?.close());

/** Registers an endpoint; account a's get no events (nothing fires refund.recorded here), so nothing is sent to them. */
const register = (url: string, key = ctx.a.live, events = ['refund.recorded']) =>
  call(ctx.app, 'POST', '/v1/webhooks', { key, body: { url, events } });

describe('at registration, a literal address', () => {
  it.each(REFUSED)('https://%s/ (%s) → 400 invalid_request, details.field url', async (address) => {
    const error = expectError(await register(`https://${bracketed(address)}/hooks`), 400, 'invalid_request');
    expect(error.details).toEqual({ field: 'url', reason: 'invalid_url' });
    expect(error.message).toMatch(/private, loopback or link-local address \(.+ is .+\); WEBHOOKS_ALLOW_PRIVATE=true/);
  });

  it.each(ACCEPTED)('https://%s/ (%s) → 201', async (address) => {
    expect((await register(`https://${bracketed(address)}/hooks`)).status).toBe(201);
  });
});

describe('at registration, a name resolving to the address', () => {
  it.each(REFUSED)('→ %s (%s): 400 invalid_request, details.field url', async (address) => {
    const host = `r${answers.size}.hooks.example`;
    answers.set(host, address);
    const error = expectError(await register(`https://${host}/hooks`), 400, 'invalid_request');
    expect(error.details).toEqual({ field: 'url', reason: 'invalid_url' });
    expect(error.message).toContain(`${host} resolves to ${address}, `);
  });

  it.each(ACCEPTED)('→ %s (%s): 201', async (address) => {
    const host = `a${answers.size}.hooks.example`;
    answers.set(host, address);
    expect((await register(`https://${host}/hooks`)).status).toBe(201);
  });
});

describe('at connect time', () => {
  it('refuses every form for a name that resolved to a public address at registration, sending nothing', async () => {
    // One endpoint per form, each on its own name, all public now…
    const hosts = REFUSED.map(([address], i) => ({ host: `rebind${i}.hooks.example`, address }));
    const endpoints = new Map<string, string>();
    for (const { host, address } of hosts) {
      answers.set(host, '8.8.4.4');
      // Account b holds only these endpoints: its store.updated reaches nothing else.
      const created = await register(`https://${host}/hooks`, ctx.b.live, ['store.updated']);
      expect(created.status).toBe(201);
      endpoints.set(created.body.data.id, address);
      // …and each name is rebound to its private form before the delivery connects.
      answers.set(host, address);
    }
    const storeId = await makeStore(ctx.app, ctx.b.live);
    const patched = await call(ctx.app, 'PATCH', `/v1/stores/${storeId}`, { key: ctx.b.live, body: { name: 'Rebound' } });
    expect(patched.status).toBe(200);
    for (const [id, address] of endpoints) {
      const attempt = await firstAttempt(id);
      expect(attempt).toMatchObject({ status: 'failed', responseCode: null });
      // Refused by the connect-time check, naming the address (not a connection error).
      expect(attempt.error).toContain(`resolves to ${address}, a private address (`);
      expect(attempt.error).toMatch(/^Refused: /);
    }
  }, 60_000);
});

async function firstAttempt(webhookId: string): Promise<{ status: string; responseCode: number | null; error: string }> {
  for (const deadline = Date.now() + 20_000; Date.now() < deadline; ) {
    const res = await call(ctx.app, 'GET', `/v1/webhooks/${webhookId}/deliveries`, { key: ctx.b.live });
    const attempt = res.body.data.deliveries.at(-1);
    if (attempt) return attempt;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no attempt recorded for ${webhookId}`);
}
