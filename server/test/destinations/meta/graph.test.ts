import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { GRAPH_TIMEOUT_MS, type GraphRequest, postEvents, retryHintMs } from '../../../src/destinations/meta/graph.js';
import { freePort } from '../../e2e/process.js';
import { FakeGraph } from './fake-graph.js';

let fake: FakeGraph;
beforeAll(async () => {
  fake = await FakeGraph.start();
});
afterAll(async () => fake.close());
afterEach(() => {
  fake.reset();
});

const event = (id: string) =>
  JSON.stringify({
    event_name: 'Purchase',
    event_time: Math.floor(Date.now() / 1000),
    event_id: id,
    action_source: 'website',
    user_data: {},
  });

function request(overrides: Partial<GraphRequest> = {}): GraphRequest {
  return {
    baseUrl: fake.url,
    version: 'v24.0',
    pixelId: '1234567890',
    accessToken: 'EAAB-secret',
    testEventCode: null,
    events: [event('e-1'), event('e-2')],
    ...overrides,
  };
}

describe('the Graph API client', () => {
  it('posts JSON with data, access_token in the body (never the URL) and test_event_code', async () => {
    const result = await postEvents(request({ testEventCode: 'TEST1' }));
    expect(result).toEqual({ outcome: 'accepted', eventsReceived: 2, fbtraceId: expect.stringMatching(/^A/) });
    expect(fake.requests[0]).toMatchObject({
      contentType: 'application/json',
      pixelId: '1234567890',
      accessToken: 'EAAB-secret',
      tokenInUrl: false,
      testEventCode: 'TEST1',
    });
    expect(fake.requests[0]?.events.map((e) => e.event_id)).toEqual(['e-1', 'e-2']);
  });

  it(`times out after ${GRAPH_TIMEOUT_MS} ms by default and asks for a retry`, async () => {
    fake.faults = [{ type: 'hang', ms: 4000 }];
    const started = Date.now();
    const result = await postEvents(request());
    const elapsed = Date.now() - started;
    expect(GRAPH_TIMEOUT_MS).toBe(1500);
    expect(elapsed).toBeGreaterThanOrEqual(1450);
    expect(elapsed).toBeLessThan(2500);
    expect(result).toMatchObject({
      outcome: 'retry',
      error: expect.stringMatching(/^This server got no answer from 127\.0\.0\.1 within 1500 ms \(timeout\)/),
    });
  });

  it('classifies transient, throttling and permanent errors', async () => {
    const cases: Array<[Parameters<typeof fake.faults.push>[0], string, boolean?]> = [
      [{ type: 'http500' }, 'retry'],
      [{ type: 'throttle', code: 17 }, 'retry'],
      [{ type: 'throttle', code: 613 }, 'retry'],
      [{ type: 'error', code: 1 }, 'retry'],
      [{ type: 'error', status: 429, code: 100 }, 'retry'],
      [{ type: 'error', code: 100, subcode: 2804003 }, 'rejected', true],
      [{ type: 'error', code: 190 }, 'rejected', false],
      [{ type: 'error', code: 200 }, 'rejected', false],
      [{ type: 'error', code: 100, subcode: 33 }, 'rejected', false],
    ];
    for (const [fault, outcome, eventLevel] of cases) {
      fake.faults = [fault];
      const result = await postEvents(request());
      expect(result.outcome, JSON.stringify(fault)).toBe(outcome);
      if (result.outcome === 'rejected') expect(result.eventLevel, JSON.stringify(fault)).toBe(eventLevel);
      expect(result.outcome === 'accepted' ? null : result.fbtraceId).toMatch(/^A[0-9a-f]+$/);
    }
  });

  it('treats an unreachable Meta as retryable', async () => {
    const port = await freePort(); // nothing listens there
    const result = await postEvents(request({ baseUrl: `http://127.0.0.1:${port}` }));
    expect(result).toMatchObject({
      outcome: 'retry',
      error: expect.stringMatching(
        /^This server could not connect to 127\.0\.0\.1:\d+ \(ECONNREFUSED\): check outbound network, DNS, proxy/,
      ),
    });
  });
});

describe('retry hints', () => {
  it('reads Retry-After in seconds or as a date, and the business-use-case estimate in minutes', () => {
    const now = Date.parse('2026-11-22T10:00:00Z');
    expect(retryHintMs(new Headers({ 'retry-after': '3' }), now)).toBe(3000);
    expect(retryHintMs(new Headers({ 'retry-after': 'Sun, 22 Nov 2026 10:00:05 GMT' }), now)).toBe(5000);
    const usage = JSON.stringify({ '123': [{ type: 'ads_management', call_count: 100, estimated_time_to_regain_access: 2 }] });
    expect(retryHintMs(new Headers({ 'x-business-use-case-usage': usage }), now)).toBe(120_000);
    expect(retryHintMs(new Headers({ 'x-business-use-case-usage': 'not json' }), now)).toBeUndefined();
    expect(retryHintMs(new Headers(), now)).toBeUndefined();
  });
});
