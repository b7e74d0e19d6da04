import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, databaseForProcesses, request, type ServerProcess, SHORT_LEASES, serve } from '../e2e/process.js';
import { Receiver } from './receiver.js';

// The real `waytrack serve` process killed with SIGKILL after the endpoint received a webhook
// and before the attempt was recorded: after the restart the message comes again (at least
// once) with the same webhook-id. The receiver is trusted through NODE_EXTRA_CA_CERTS.
describe('webhooks survive kill -9 (end to end)', () => {
  let receiver: Receiver;
  let server: ServerProcess | undefined;
  const testDb = databaseForProcesses('waytrack-webhooks-e2e-');

  beforeAll(async () => {
    receiver = await Receiver.start();
  });
  afterAll(async () => {
    await server?.stop('SIGKILL');
    await receiver?.close();
  });

  it('delivers again after a restart, with the same webhook-id', async () => {
    const env = { ...testDb.env, ...SHORT_LEASES, WEBHOOKS_ALLOW_PRIVATE: 'true', NODE_EXTRA_CA_CERTS: receiver.certPath };
    server = await serve({ ...env, WAYTRACK_TEST_CRASH_AT: 'webhook' });
    const account = JSON.parse(cli(['account', 'create', '--email', 'kill9-hooks@example.com', '--json'], env).stdout);
    const key = account.keys.live as string;
    const created = await request(server, 'POST', '/v1/webhooks', {
      key,
      body: { url: receiver.url('/kill9'), events: ['store.updated'] },
    });
    expect(created.status).toBe(201);
    const secret = created.body.data.secret as string;
    const store = await request(server, 'POST', '/v1/stores', {
      key,
      body: { name: 'Kill -9', domain: 'kill9.example.com', platform: 'custom' },
    });
    const storeId = store.body.data.id as string;
    const patched = await request(server, 'PATCH', `/v1/stores/${storeId}`, { key, body: { name: 'Killed' } });
    expect(patched.status).toBe(200); // acknowledged: its webhook is in the outbox

    await receiver.waitFor(() => receiver.received.length >= 1);
    const exit = await new Promise<NodeJS.Signals | null>((resolve) => {
      const child = server?.child;
      if (!child || child.signalCode !== null) return resolve(child?.signalCode ?? null);
      child.once('exit', (_code, signal) => resolve(signal));
    });
    expect(exit).toBe('SIGKILL');
    expect(server.output()).toContain('crash point webhook reached');

    server = await serve(env);
    // The killed process's lease (SHORT_LEASES: 4 s) runs out, then the message is sent again.
    await receiver.waitFor(() => receiver.received.length >= 2, 40_000);
    const [first, again] = receiver.received;
    expect(again?.headers['webhook-id']).toBe(first?.headers['webhook-id']);
    expect(again?.body).toBe(first?.body);
    const { verifyWebhook } = await import('@waytrack/client');
    expect((await verifyWebhook(again?.body as string, again?.headers as Record<string, string>, secret)).type).toBe(
      'store.updated',
    );

    const webhooks = await request(server, 'GET', '/v1/webhooks', { key });
    const id = webhooks.body.data.webhooks[0].id as string;
    let deliveries = await request(server, 'GET', `/v1/webhooks/${id}/deliveries`, { key });
    for (const deadline = Date.now() + 20_000; deliveries.body.data.deliveries.length < 1 && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      deliveries = await request(server, 'GET', `/v1/webhooks/${id}/deliveries`, { key });
    }
    // The attempt the kill interrupted was never recorded; the one after the restart was.
    expect(deliveries.body.data.deliveries).toHaveLength(1);
    expect(deliveries.body.data.deliveries[0]).toMatchObject({ attempt: 1, status: 'succeeded', responseCode: 200 });
  }, 300_000); // two server starts (e2e/process.ts: up to 90 s each on a busy machine) and the lease's end
});
