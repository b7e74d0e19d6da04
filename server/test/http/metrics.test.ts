import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenForMetrics, type MetricsListener } from '../../src/observability.js';
import { call, createTestContext, expectError, type TestContext } from '../helpers.js';

const TOKEN = 'scrape-0123456789abcdef';

describe('GET /metrics', () => {
  describe('by default (no METRICS_* variable)', () => {
    let ctx: TestContext;
    beforeAll(async () => {
      ctx = await createTestContext();
    });
    afterAll(() => ctx.close());

    it('is served on the API port without a key, each help text describing its labels', async () => {
      await call(ctx.app, 'GET', '/v1/stores'); // a 401, counted by status
      const res = await call(ctx.app, 'GET', '/metrics');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toContain('text/plain');
      const text = res.raw.body;
      expect(text).toContain('# HELP waytrack_http_errors_total Error responses (HTTP status 400 and above) by HTTP status');
      expect(text).toContain('waytrack_http_errors_total{status="401"} 1');
      expect(text).toContain(
        '# HELP waytrack_http_request_duration_seconds HTTP request latency by method, route pattern and status',
      );
      expect(text).toContain('waytrack_http_request_duration_seconds_count{method="GET",route="/v1/stores",status="401"} 1');
      expect(text).not.toMatch(/# HELP \S+ .*by code/);
    });
  });

  describe('with METRICS_TOKEN', () => {
    let ctx: TestContext;
    beforeAll(async () => {
      ctx = await createTestContext({ env: { METRICS_TOKEN: TOKEN } });
    });
    afterAll(() => ctx.close());

    it('answers 401 in the envelope without the token, or with another one', async () => {
      for (const authorization of [undefined, `Bearer ${TOKEN}x`, `Basic ${TOKEN}`, TOKEN, `Bearer ${ctx.a.live}`]) {
        const res = await call(ctx.app, 'GET', '/metrics', { headers: authorization ? { authorization } : {} });
        expectError(res, 401, 'unauthorized');
        expect(res.headers['www-authenticate']).toContain('Bearer');
        expect(res.raw.body).not.toContain('waytrack_');
      }
    });

    it('serves the metrics to a request bearing the token; the other endpoints are unchanged', async () => {
      const res = await call(ctx.app, 'GET', '/metrics', { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(res.status).toBe(200);
      expect(res.raw.body).toContain('waytrack_http_request_duration_seconds');
      expect((await call(ctx.app, 'GET', '/healthz')).status).toBe(200);
      expect((await call(ctx.app, 'GET', '/v1/stores', { key: ctx.a.live })).status).toBe(200);
    });
  });

  describe('with METRICS_PORT', () => {
    let ctx: TestContext;
    let listener: MetricsListener;
    beforeAll(async () => {
      ctx = await createTestContext({ env: { METRICS_PORT: '0', METRICS_TOKEN: TOKEN } });
      listener = await listenForMetrics(ctx.app.metrics, ctx.config);
    });
    afterAll(async () => {
      await listener?.close();
      await ctx.close();
    });

    it('is not served on the API port, even with the token, nor listed in the API reference', async () => {
      const res = await call(ctx.app, 'GET', '/metrics', { headers: { authorization: `Bearer ${TOKEN}` } });
      expectError(res, 404, 'not_found');
      const document = await call(ctx.app, 'GET', '/v1/openapi.json');
      expect(Object.keys(document.body.paths)).not.toContain('/metrics');
      expect(Object.keys(document.body.paths)).toContain('/healthz');
    });

    it('is served by a plain-HTTP listener of its own on METRICS_HOST, with the token', async () => {
      expect(listener.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
      await call(ctx.app, 'GET', '/healthz');
      const res = await fetch(listener.url, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/plain');
      expect(await res.text()).toContain(
        'waytrack_http_request_duration_seconds_count{method="GET",route="/healthz",status="200"}',
      );

      const refused = await fetch(listener.url);
      expect(refused.status).toBe(401);
      const body = (await refused.json()) as { meta: { requestId: string } };
      expect(body).toMatchObject({ success: false, error: { code: 'unauthorized' } });
      expect(refused.headers.get('request-id')).toBe(body.meta.requestId);

      const other = await fetch(listener.url.replace('/metrics', '/v1/stores'), {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      expect(other.status).toBe(404);
      expect(await other.json()).toMatchObject({ success: false, error: { code: 'not_found' } });
    });
  });
});
