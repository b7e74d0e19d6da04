import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { verifyWebhook, WebhookVerificationError } from '@waytrack/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RETRY_LIMIT_MS, retryDelayMs } from '../../src/webhooks/schedule.js';
import { call, clickBody, conversionBody, createTestContext, expectError, makeStore, type TestContext } from '../helpers.js';
import { type Received, Receiver } from './receiver.js';

// Webhooks out (api.md §9) against a local https receiver, on the test's engine: signing checked
// by each client library's verify helper, retries on a scaled schedule, disabling, resend.
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

let ctx: TestContext;
let receiver: Receiver;
beforeAll(async () => {
  receiver = await Receiver.start();
  ctx = await createTestContext({
    // 3 days × 0.00001 = 2.6 s; the first retries come after 0.05 ms, 0.3 ms, 1.2 ms, 6 ms, 36 ms, then every 216 ms.
    env: { WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCALE: '0.00001' },
    webhooks: { pollMs: 20, ca: receiver.cert },
  });
});
afterAll(async () => {
  await ctx?.close();
  await receiver?.close();
});

async function createEndpoint(events: string[], key = ctx.a.live, pathname = `/hooks/${Math.random().toString(36).slice(2)}`) {
  const res = await call(ctx.app, 'POST', '/v1/webhooks', { key, body: { url: receiver.url(pathname), events } });
  if (res.status !== 201) throw new Error(`webhook creation failed: ${JSON.stringify(res.body)}`);
  return { ...(res.body.data as { id: string; secret: string; url: string }), pathname };
}

async function attributedConversion(storeId: string, key = ctx.a.live) {
  const click = clickBody(storeId);
  const clicked = await call(ctx.app, 'POST', '/v1/track/click', { key, body: click });
  expect(clicked.status).toBe(200);
  const body = conversionBody(storeId, { fbclid: click.fbclid });
  const res = await call(ctx.app, 'POST', '/v1/track/conversion', { key, body });
  expect(res.status).toBe(200);
  expect(res.body.data.attributed).toBe(true);
  return { orderId: body.orderId as string, conversionId: res.body.data.conversionId as string, fbclid: click.fbclid };
}

/**
 * Runs a client library's verify helper (python3 / php) on `input`, awaited: spawnSync blocked
 * the test worker for every run. A process that could not be started (EAGAIN or ENOMEM on a busy
 * machine) is started again, twice at most; one that ran is never run again, whatever its exit.
 * One that could not be started at all fails the test saying why (spawnSync gave a null stderr).
 */
async function runVerifier(command: string, args: string[], input: string, env?: NodeJS.ProcessEnv) {
  for (let attempt = 1; ; attempt++) {
    let child: ChildProcess | undefined;
    const result = await new Promise<{ status: number | null; stdout: string; stderr: string; error?: Error }>((resolve) => {
      let stdout = '';
      let stderr = '';
      child = spawn(command, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
      child.stdout?.setEncoding('utf8').on('data', (d: string) => {
        stdout += d;
      });
      child.stderr?.setEncoding('utf8').on('data', (d: string) => {
        stderr += d;
      });
      child.once('error', (error) => resolve({ status: null, stdout, stderr, error }));
      child.once('close', (status) => resolve({ status, stdout, stderr }));
      child.stdin?.on('error', () => {}); // a verifier that exits before reading all of it
      child.stdin?.end(input);
    });
    if (!result.error) return result;
    const started = child?.pid !== undefined;
    if (started || attempt >= 3)
      throw new Error(`${command} ${started ? 'failed' : 'could not be started'}: ${result.error.message}`);
    await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
  }
}

function pythonVerify(received: Received, secret: string) {
  const script =
    'import json,sys; from waytrack import verify_webhook; a=json.load(sys.stdin); print(json.dumps(verify_webhook(a["body"].encode(), a["headers"], a["secret"])))';
  return runVerifier('python3', ['-c', script], JSON.stringify({ body: received.body, headers: received.headers, secret }), {
    ...process.env,
    PYTHONPATH: path.join(ROOT, 'sdks/python/src'),
    PYTHONDONTWRITEBYTECODE: '1',
  });
}

function phpVerify(received: Received, secret: string) {
  const script = `require '${path.join(ROOT, 'sdks/php/autoload.php')}'; $a = json_decode(stream_get_contents(STDIN), true); echo json_encode(Waytrack\\Webhook::verify($a['body'], $a['headers'], $a['secret']));`;
  return runVerifier('php', ['-r', script], JSON.stringify({ body: received.body, headers: received.headers, secret }));
}

describe('webhook endpoints', () => {
  it('creates an endpoint whose secret is shown once, lists and deletes it, per account and mode', async () => {
    const created = await call(ctx.app, 'POST', '/v1/webhooks', {
      key: ctx.a.live,
      body: { url: receiver.url('/crud'), events: ['store.updated', 'refund.recorded'], description: 'Orders' },
    });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({
      url: receiver.url('/crud'),
      events: ['store.updated', 'refund.recorded'],
      description: 'Orders',
      status: 'enabled',
      disabledReason: null,
      livemode: true,
    });
    expect(created.body.data.id).toMatch(/^wh_/);
    expect(created.body.data.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const id = created.body.data.id as string;

    const list = await call(ctx.app, 'GET', '/v1/webhooks?limit=100', { key: ctx.a.live });
    const listed = list.body.data.webhooks.find((w: { id: string }) => w.id === id);
    expect(listed).toMatchObject({ id, status: 'enabled' });
    expect(listed.secret).toBeUndefined();
    // Another account, or the other mode, does not see it.
    const other = await call(ctx.app, 'GET', '/v1/webhooks', { key: ctx.b.live });
    expect(other.body.data.webhooks).toEqual([]);
    const testMode = await call(ctx.app, 'GET', '/v1/webhooks?limit=100', { key: ctx.a.test });
    expect(testMode.body.data.webhooks.map((w: { id: string }) => w.id)).not.toContain(id);
    expectError(await call(ctx.app, 'DELETE', `/v1/webhooks/${id}`, { key: ctx.b.live }), 404, 'not_found');
    expectError(await call(ctx.app, 'GET', `/v1/webhooks/${id}/deliveries`, { key: ctx.b.live }), 404, 'not_found');

    const deleted = await call(ctx.app, 'DELETE', `/v1/webhooks/${id}`, { key: ctx.a.live });
    expect(deleted.status).toBe(200);
    expect(deleted.body.data).toMatchObject({ id, deleted: true });
    expectError(await call(ctx.app, 'DELETE', `/v1/webhooks/${id}`, { key: ctx.a.live }), 404, 'not_found');
  });

  it('needs webhooks:write to change and webhooks:read (or write) to list', async () => {
    const reader = await ctx.keyWithScopes(['webhooks:read']);
    const writer = await ctx.keyWithScopes(['webhooks:write']);
    const other = await ctx.keyWithScopes(['stores:read']);
    expect((await call(ctx.app, 'GET', '/v1/webhooks', { key: reader })).status).toBe(200);
    expect((await call(ctx.app, 'GET', '/v1/webhooks', { key: writer })).status).toBe(200);
    expectError(await call(ctx.app, 'GET', '/v1/webhooks', { key: other }), 403, 'forbidden');
    const body = { url: receiver.url('/scopes'), events: ['store.updated'] };
    const refused = expectError(await call(ctx.app, 'POST', '/v1/webhooks', { key: reader, body }), 403, 'forbidden');
    expect(refused.details).toMatchObject({ requiredScope: 'webhooks:write' });
    expect((await call(ctx.app, 'POST', '/v1/webhooks', { key: writer, body })).status).toBe(201);
  });

  it('refuses bad bodies with the field at fault', async () => {
    const post = (body: unknown) => call(ctx.app, 'POST', '/v1/webhooks', { key: ctx.a.live, body });
    expect(expectError(await post({ events: ['store.updated'] }), 400, 'missing_required_field').details).toMatchObject({
      field: 'url',
    });
    expect(expectError(await post({ url: receiver.url(), events: [] }), 400, 'invalid_request').details).toMatchObject({
      field: 'events',
    });
    expect(
      expectError(await post({ url: receiver.url(), events: ['order.paid'] }), 400, 'invalid_request').details,
    ).toMatchObject({ field: 'events[0]' });
    for (const url of ['http://localhost/hooks', 'not a url', 'https://user:pw@example.com/hooks']) {
      const error = expectError(await post({ url, events: ['store.updated'] }), 400, 'invalid_request');
      expect(error.details).toMatchObject({ field: 'url', reason: 'invalid_url' });
    }
  });
});

describe('deliveries', () => {
  it('sends conversion.attributed, refund.recorded and store.updated, signed so that every client verifies them', async () => {
    const endpoint = await createEndpoint(['conversion.attributed', 'refund.recorded', 'store.updated']);
    const testEndpoint = await createEndpoint(['conversion.attributed', 'store.updated'], ctx.a.test);
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const { orderId, conversionId, fbclid } = await attributedConversion(storeId);
    const refund = await call(ctx.app, 'POST', '/v1/track/refund', {
      key: ctx.a.live,
      body: { storeId, orderId, refundId: `r_${conversionId}`, amount: 10, currency: 'USD' },
    });
    expect(refund.status).toBe(200);
    const patched = await call(ctx.app, 'PATCH', `/v1/stores/${storeId}`, { key: ctx.a.live, body: { minConfidence: 60 } });
    expect(patched.status).toBe(200);

    const mine = () => receiver.received.filter((r) => r.path === endpoint.pathname);
    await receiver.waitFor(() => mine().length >= 3);
    const byType = Object.fromEntries(mine().map((r) => [JSON.parse(r.body).type, r]));
    const attributed = byType['conversion.attributed'] as Received;
    expect(JSON.parse(attributed.body)).toMatchObject({
      type: 'conversion.attributed',
      data: { conversionId, storeId, orderId, value: 49.99, currency: 'USD', fbclid, livemode: true, eventType: 'Purchase' },
    });
    expect(JSON.parse((byType['refund.recorded'] as Received).body).data).toMatchObject({
      conversionId,
      amount: 10,
      refundedTotal: 10,
      remaining: 39.99,
      livemode: true,
    });
    expect(JSON.parse((byType['store.updated'] as Received).body).data).toMatchObject({
      storeId,
      store: { id: storeId, minConfidence: 60 },
      changes: ['minConfidence'],
    });
    expect(attributed.headers['webhook-id']).toMatch(/^msg_/);
    expect(attributed.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(Math.abs(Number(attributed.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);

    // The TypeScript client (Web Crypto), Python and PHP all accept it…
    for (const received of mine()) {
      expect((await verifyWebhook(received.body, received.headers, endpoint.secret)).type).toBe(JSON.parse(received.body).type);
    }
    const python = await pythonVerify(attributed, endpoint.secret);
    expect(python.stderr).toBe('');
    expect(JSON.parse(python.stdout)).toMatchObject({ type: 'conversion.attributed', data: { conversionId } });
    const php = await phpVerify(attributed, endpoint.secret);
    expect(php.stderr).toBe('');
    expect(JSON.parse(php.stdout)).toMatchObject({ type: 'conversion.attributed', data: { conversionId } });
    // …and refuse it with another secret or an altered body.
    const tampered = { ...attributed, body: attributed.body.replace('49.99', '4999') };
    await expect(verifyWebhook(tampered.body, tampered.headers, endpoint.secret)).rejects.toThrow(WebhookVerificationError);
    await expect(verifyWebhook(attributed.body, attributed.headers, testEndpoint.secret)).rejects.toThrow(
      WebhookVerificationError,
    );
    expect((await pythonVerify(tampered, endpoint.secret)).status).not.toBe(0);
    expect((await pythonVerify(attributed, testEndpoint.secret)).stderr).toContain('WebhookVerificationError');
    expect((await phpVerify(tampered, endpoint.secret)).status).not.toBe(0);
    const refused = await phpVerify(attributed, testEndpoint.secret);
    expect(refused.stderr + refused.stdout).toContain('WebhookVerificationException');

    // The test-mode endpoint got store.updated (configuration) but not the live conversion.
    const theirs = () => receiver.received.filter((r) => r.path === testEndpoint.pathname);
    await receiver.waitFor(() => theirs().length >= 1);
    expect(theirs().map((r) => JSON.parse(r.body).type)).toEqual(['store.updated']);

    // The receiver answered before the attempt was recorded: wait for the records (a write each,
    // which a loaded machine's database may take seconds to commit; CI once saw 2 of 3 after ~3 s).
    let deliveries = await call(ctx.app, 'GET', `/v1/webhooks/${endpoint.id}/deliveries`, { key: ctx.a.live });
    for (const deadline = Date.now() + 20_000; deliveries.body.data.deliveries.length < 3 && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      deliveries = await call(ctx.app, 'GET', `/v1/webhooks/${endpoint.id}/deliveries`, { key: ctx.a.live });
    }
    expect(deliveries.status).toBe(200);
    expect(deliveries.body.data.deliveries).toHaveLength(3);
    for (const item of deliveries.body.data.deliveries) {
      expect(item).toMatchObject({ webhookId: endpoint.id, attempt: 1, status: 'succeeded', responseCode: 200 });
      expect(Object.keys(item)).toEqual(
        expect.arrayContaining(['id', 'webhookId', 'event', 'attempt', 'status', 'responseCode', 'at']),
      );
    }
  }, 60_000);

  it('retries a failing endpoint on the schedule, with the same webhook-id, until it recovers', async () => {
    const endpoint = await createEndpoint(['store.updated']);
    let calls = 0;
    const previous = receiver.answer;
    receiver.answer = (r) => (r.path === endpoint.pathname && ++calls <= 3 ? 500 : previous(r, 0));
    const storeId = await makeStore(ctx.app, ctx.a.live);
    await call(ctx.app, 'PATCH', `/v1/stores/${storeId}`, { key: ctx.a.live, body: { name: 'Renamed' } });
    const mine = () => receiver.received.filter((r) => r.path === endpoint.pathname);
    await receiver.waitFor(() => mine().length >= 4);
    receiver.answer = previous;
    await new Promise((resolve) => setTimeout(resolve, 100)); // the last attempt recorded
    expect(new Set(mine().map((r) => r.headers['webhook-id'])).size).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(mine()).toHaveLength(4); // delivered: no more attempts

    const page1 = await call(ctx.app, 'GET', `/v1/webhooks/${endpoint.id}/deliveries?limit=2`, { key: ctx.a.live });
    expect(page1.body.data.hasMore).toBe(true);
    const page2 = await call(
      ctx.app,
      'GET',
      `/v1/webhooks/${endpoint.id}/deliveries?limit=2&cursor=${encodeURIComponent(page1.body.data.nextCursor)}`,
      { key: ctx.a.live },
    );
    expect(page2.body.data.hasMore).toBe(false);
    const all = [...page1.body.data.deliveries, ...page2.body.data.deliveries].reverse();
    expect(all.map((d: { attempt: number }) => d.attempt)).toEqual([1, 2, 3, 4]);
    expect(all.map((d: { status: string }) => d.status)).toEqual(['failed', 'failed', 'failed', 'succeeded']);
    expect(all.map((d: { responseCode: number }) => d.responseCode)).toEqual([500, 500, 500, 200]);
    expect(all[0].error).toBe('The endpoint answered 500');
    const webhook = await call(ctx.app, 'GET', '/v1/webhooks?limit=100', { key: ctx.a.live });
    expect(webhook.body.data.webhooks.find((w: { id: string }) => w.id === endpoint.id).status).toBe('enabled');
  });

  it('disables the endpoint once the retries pass the (scaled) 3 days, with the reason; a resend still works', async () => {
    const endpoint = await createEndpoint(['store.updated']);
    const previous = receiver.answer;
    receiver.answer = (r) => (r.path === endpoint.pathname ? 503 : previous(r, 0));
    const storeId = await makeStore(ctx.app, ctx.a.live);
    await call(ctx.app, 'PATCH', `/v1/stores/${storeId}`, { key: ctx.a.live, body: { name: 'Down' } });
    const list = async () =>
      (await call(ctx.app, 'GET', '/v1/webhooks?limit=100', { key: ctx.a.live })).body.data.webhooks.find(
        (w: { id: string }) => w.id === endpoint.id,
      );
    const deadline = Date.now() + 15_000;
    while ((await list()).status !== 'disabled') {
      if (Date.now() > deadline) throw new Error('never disabled');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const disabled = await list();
    expect(disabled.disabledReason).toMatch(/^Deliveries failed for 3 days × WEBHOOK_RETRY_SCALE 0\.00001 .*answered 503/);
    expect(disabled.disabledAt).not.toBeNull();
    const mine = receiver.received.filter((r) => r.path === endpoint.pathname);
    // The schedule's rule (schedule.ts), checked on the recorded times: how many attempts fit in
    // the (scaled) 3 days depends on how late a busy machine's dispatcher ticks, the rule does not.
    // Attempt n+1 came at least the n-th delay after attempt n was recorded; every attempt was
    // retried while its retry fell within 3 days of the event, and the endpoint was disabled when
    // the next one would have fallen after them.
    const delay = (attempt: number) => retryDelayMs(attempt, 0.00001);
    const limitAt = Date.parse(JSON.parse((mine[0] as Received).body).timestamp) + Math.round(RETRY_LIMIT_MS * 0.00001);
    const recorded = (
      (await call(ctx.app, 'GET', `/v1/webhooks/${endpoint.id}/deliveries?limit=100`, { key: ctx.a.live })).body.data
        .deliveries as Array<{ attempt: number; at: string }>
    ).sort((x, y) => x.attempt - y.attempt);
    expect(recorded.map((d) => d.attempt)).toEqual(mine.map((_, i) => i + 1));
    const recordedAt = recorded.map((d) => Date.parse(d.at));
    for (const [i, at] of recordedAt.entries()) {
      const next = mine[i + 1];
      if (next) {
        expect(next.at).toBeGreaterThanOrEqual(at + delay(i + 1));
        expect(at + delay(i + 1)).toBeLessThanOrEqual(limitAt);
      }
    }
    expect(Date.parse(disabled.disabledAt) + delay(mine.length)).toBeGreaterThan(limitAt);
    // Hence at most 1 + the five quick retries + one per 6 hours (216 ms here) of the 2.6 s.
    expect(mine.length).toBeLessThanOrEqual(20);
    const count = mine.length;
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(receiver.received.filter((r) => r.path === endpoint.pathname)).toHaveLength(count);

    // Resend: a new attempt of the same message, same webhook-id; the endpoint stays disabled.
    receiver.answer = previous;
    const deliveries = await call(ctx.app, 'GET', `/v1/webhooks/${endpoint.id}/deliveries?limit=1`, { key: ctx.a.live });
    const last = deliveries.body.data.deliveries[0];
    const resent = await call(ctx.app, 'POST', `/v1/webhooks/${endpoint.id}/deliveries/${last.id}/resend`, { key: ctx.a.live });
    expect(resent.status).toBe(201);
    expect(resent.body.data).toMatchObject({
      webhookId: endpoint.id,
      eventId: last.eventId,
      attempt: last.attempt + 1,
      status: 'succeeded',
      responseCode: 200,
    });
    const after = receiver.received.filter((r) => r.path === endpoint.pathname);
    expect(after).toHaveLength(count + 1);
    expect(after.at(-1)?.headers['webhook-id']).toBe(mine[0]?.headers['webhook-id']);
    expect(
      await verifyWebhook(after.at(-1)?.body as string, after.at(-1)?.headers as Record<string, string>, endpoint.secret),
    ).toMatchObject({
      type: 'store.updated',
    });
    expect((await list()).status).toBe('disabled');
    expectError(
      await call(ctx.app, 'POST', `/v1/webhooks/${endpoint.id}/deliveries/whd_unknown/resend`, { key: ctx.a.live }),
      404,
      'not_found',
    );
    expectError(
      await call(ctx.app, 'POST', `/v1/webhooks/${endpoint.id}/deliveries/${last.id}/resend`, { key: ctx.b.live }),
      404,
      'not_found',
    );
  });
});
