import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, databaseForProcesses, request, type ServerProcess, SHORT_LEASES, serve } from '../e2e/process.js';
import { FakePlatforms } from './fake-platforms.js';
import { countBy, sleep } from './meta/setup.js';

// The real `waytrack serve` process, killed with SIGKILL while Google and TikTok are failing:
// after the restart every conversion reaches each of them exactly once.
describe('destinations survive kill -9 (end to end)', () => {
  let fake: FakePlatforms;
  let server: ServerProcess | undefined;
  const testDb = databaseForProcesses('waytrack-dest-e2e-');

  beforeAll(async () => {
    fake = await FakePlatforms.start();
  });
  afterAll(async () => {
    await server?.stop('SIGKILL');
    await fake.close();
  });

  it('delivers the outbox after a restart, each conversion once per destination', async () => {
    const env = {
      ...testDb.env,
      ...SHORT_LEASES,
      GOOGLE_ADS_API_URL: fake.url,
      GOOGLE_OAUTH_TOKEN_URL: fake.tokenUrl,
      TIKTOK_API_URL: fake.url,
      CAPI_SYNC_WAIT_MS: '0',
    };
    fake.outage = true;
    server = await serve(env);
    const account = JSON.parse(cli(['account', 'create', '--email', 'kill9-dest@example.com', '--json'], env).stdout);
    const key = account.keys.live as string;
    const store = await request(server, 'POST', '/v1/stores', {
      key,
      body: { name: 'Kill -9', domain: 'kill9.example.com', platform: 'custom' },
    });
    const storeId = store.body.data.id as string;
    const google = await request(server, 'PUT', `/v1/stores/${storeId}/destinations/google_ads`, {
      key,
      body: {
        customerId: '1234567890',
        conversionAction: 'customers/1234567890/conversionActions/1',
        api: 'google_ads_api',
        developerToken: fake.developerToken,
        oauth: fake.oauthClient,
      },
    });
    expect(google.status).toBe(200);
    const tiktok = await request(server, 'PUT', `/v1/stores/${storeId}/destinations/tiktok`, {
      key,
      body: { pixelCode: 'CKILL9PIXEL0000', accessToken: fake.tiktokToken },
    });
    expect(tiktok.status).toBe(200);
    for (let i = 0; i < 20; i++) {
      const res = await request(server, 'POST', '/v1/track/conversion', {
        key,
        body: {
          storeId,
          eventType: 'Purchase',
          orderId: `k-${i}`,
          eventValue: 10,
          currency: 'USD',
          gclid: `G-${i}`,
          ttclid: `T-${i}`,
        },
      });
      expect(res.status).toBe(200);
    }
    const live = server;
    const tried = async () => {
      const list = await request(live, 'GET', '/v1/conversions?limit=100', { key });
      return list.body.data.conversions.filter(
        (c: { forwarding: Record<string, { attempts: number }> }) =>
          (c.forwarding.google_ads?.attempts ?? 0) >= 1 && (c.forwarding.tiktok?.attempts ?? 0) >= 1,
      ).length;
    };
    const deadline = Date.now() + 10_000;
    while ((await tried()) < 20 && Date.now() < deadline) await sleep(20);
    await server.stop('SIGKILL');
    expect(fake.googleAccepted()).toHaveLength(0);
    expect(fake.tiktokAccepted()).toHaveLength(0);

    fake.outage = false;
    server = await serve(env);
    await fake.waitFor(
      () => new Set(fake.googleAccepted().map((c) => c.orderId)).size === 20 && fake.tiktokAccepted().length >= 20,
      30_000,
      'the 20 conversions at Google and TikTok after restart',
    );
    await sleep(500);
    const google1 = countBy(fake.googleAccepted().map((c) => c.orderId as string));
    const tiktok1 = countBy(fake.tiktokAccepted().map((e) => e.event_id as string));
    expect(google1.size).toBe(20);
    expect(tiktok1.size).toBe(20);
    expect([...google1.values(), ...tiktok1.values()].every((n) => n === 1)).toBe(true);

    const restarted = server;
    let sent = 0;
    for (const deadline = Date.now() + 20_000; sent < 20 && Date.now() < deadline; ) {
      const list = await request(restarted, 'GET', '/v1/conversions?limit=100', { key });
      sent = list.body.data.conversions.filter(
        (c: { forwarding: Record<string, { status: string }> }) =>
          c.forwarding.google_ads?.status === 'sent' && c.forwarding.tiktok?.status === 'sent',
      ).length;
      if (sent < 20) await sleep(20);
    }
    expect(sent).toBe(20);
    expect(await server.stop('SIGTERM')).toBe(0);
    server = undefined;
  }, 120_000);
});
