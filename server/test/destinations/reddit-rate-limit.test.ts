import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DestinationEnv } from '../../src/destinations/adapter.js';
import { tokenLimiter } from '../../src/destinations/reddit/rate-limit.js';
import { sendReddit } from '../../src/destinations/reddit/sender.js';
import { FakeReddit } from './fake-reddit.js';

/** Reddit documents 10 Conversions API calls a second per ad account: the sender never exceeds it. */

let fake: FakeReddit;
beforeAll(async () => {
  fake = await FakeReddit.start();
});
afterAll(async () => {
  await fake.close();
});

const env = (): DestinationEnv => ({
  metaGraphUrl: 'http://127.0.0.1:9',
  metaGraphVersion: 'v24.0',
  googleAdsApiUrl: 'http://127.0.0.1:9',
  googleAdsApiVersion: 'v22',
  googleOauthTokenUrl: 'http://127.0.0.1:9/token',
  googleDataManagerUrl: 'http://127.0.0.1:9',
  microsoftCapiUrl: 'http://127.0.0.1:9',
  pinterestApiUrl: 'http://127.0.0.1:9',
  snapchatApiUrl: 'http://127.0.0.1:9',
  tiktokApiUrl: 'http://127.0.0.1:9',
  redditApiUrl: fake.url,
  linkedinApiUrl: 'http://127.0.0.1:9',
});

const event = (i: number) => ({
  event_at: new Date().toISOString(),
  event_type: { tracking_type: 'Purchase' },
  click_id: `rdt-${i}`,
  event_metadata: { conversion_id: `ev-${i}`, currency: 'USD', value_decimal: 1 },
  user: {},
});

describe('the Reddit rate limit', () => {
  it('30 batches sent at once reach Reddit at most 10 in any second, all of them delivered', async () => {
    fake.adAccountId = 'a2_ratelimit30';
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        sendReddit({
          settings: { adAccountId: fake.adAccountId },
          secrets: { accessToken: fake.token },
          live: true,
          kind: 'conversion',
          route: '',
          payloads: [event(i)],
          env: env(),
          timeoutMs: 10_000,
        }),
      ),
    );
    expect(results.every((r) => r.outcomes[0]?.outcome === 'sent')).toBe(true);
    const times = fake.requests.filter((r) => r.adAccountId === 'a2_ratelimit30').map((r) => r.at);
    expect(times).toHaveLength(30);
    times.sort((a, b) => a - b);
    // The 11th request after any request arrived a full second after it: no 1-second window holds 11.
    for (let i = 0; i + 10 < times.length; i++)
      expect((times[i + 10] as number) - (times[i] as number)).toBeGreaterThanOrEqual(1000);
    // And it does not crawl: three windows' worth take about two seconds, not thirty.
    expect((times[29] as number) - (times[0] as number)).toBeLessThan(6000);
  }, 20_000);

  it('the limiter keeps each key to `limit` starts per window, keys apart (a fake clock)', async () => {
    let clock = 0;
    const starts: Array<[string, number]> = [];
    const limiter = tokenLimiter(10, 1000, {
      now: () => clock,
      sleep: async (ms) => {
        clock += ms;
      },
    });
    // Each request answered 200 ms after it started.
    for (let i = 0; i < 25; i++) {
      const release = await limiter.acquire('a2_one');
      starts.push(['a2_one', clock]);
      clock += 200;
      release();
      clock -= 200;
    }
    (await limiter.acquire('a2_two'))();
    starts.push(['a2_two', clock]);
    const one = starts.filter(([k]) => k === 'a2_one').map(([, t]) => t);
    expect(one.slice(0, 10)).toEqual(Array(10).fill(0));
    // A token is usable a window after its request's answer (at 200 ms): from 1200 ms, then 2400 ms.
    expect(one.slice(10, 20)).toEqual(Array(10).fill(1200));
    expect(one.slice(20)).toEqual(Array(5).fill(2400));
    // Another ad account has tokens of its own: no wait beyond the clock as it stands.
    expect(starts.at(-1)).toEqual(['a2_two', 2400]);
  });

  it('with every token held, the next request waits for one to be given back', async () => {
    const limiter = tokenLimiter(2, 50);
    const first = await limiter.acquire('k');
    const second = await limiter.acquire('k');
    let third = false;
    const waiting = limiter.acquire('k').then((release) => {
      third = true;
      release();
    });
    await new Promise((r) => setTimeout(r, 120));
    expect(third).toBe(false);
    first();
    second();
    await waiting;
    expect(third).toBe(true);
  });
});
