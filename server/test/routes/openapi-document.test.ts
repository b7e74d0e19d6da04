// The reference documentation (GET /v1/openapi.json, /docs): a valid OpenAPI 3.1 document whose
// every operation is named, described and declares the errors it can answer; examples that
// fit their own schemas (and that the server accepts); Waytrack's own look on /docs.
import { isIPv4, isIPv6 } from 'node:net';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_STATUS } from '../../src/http/errors.js';
import { call, createTestContext, makeStore, type TestContext } from '../helpers.js';

type Json = Record<string, unknown>;
interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
  security?: unknown[];
  parameters?: Array<{ in: string; name: string; schema: Json; example?: unknown; examples?: Json }>;
  requestBody?: { content: Record<string, Media> };
  responses: Record<string, { description: string; content?: Record<string, Media> }>;
}
interface Media {
  schema: Json;
  example?: unknown;
  examples?: Record<string, { value: unknown }>;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** The formats the document uses, checked the way the server's domain code checks them. */
function exampleValidator(): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addFormat(
    'date-time',
    (v: string) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(v) && !Number.isNaN(Date.parse(v)),
  );
  ajv.addFormat('date', (v: string) => /^\d{4}-\d{2}-\d{2}$/.test(v) && new Date(`${v}T00:00:00Z`).toISOString().startsWith(v));
  ajv.addFormat('uri', (v: string) => URL.canParse(v));
  ajv.addFormat('ipv4', (v: string) => isIPv4(v));
  ajv.addFormat('ipv6', (v: string) => isIPv6(v));
  ajv.addFormat('hostname', (v: string) => /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/i.test(v));
  return ajv;
}

describe('the OpenAPI document', () => {
  let ctx: TestContext;
  let doc: Json & { paths: Record<string, Record<string, Operation>>; info: Json; components: Json };
  let operations: Array<{ key: string; path: string; method: string; op: Operation }>;

  beforeAll(async () => {
    ctx = await createTestContext();
    const res = await call(ctx.app, 'GET', '/v1/openapi.json');
    expect(res.status).toBe(200);
    doc = res.body;
    operations = Object.entries(doc.paths).flatMap(([path, item]) =>
      METHODS.filter((m) => item[m]).map((method) => ({
        key: `${method.toUpperCase()} ${path}`,
        path,
        method,
        op: item[method] as Operation,
      })),
    );
  });
  afterAll(async () => ctx?.close());

  it('is a valid OpenAPI 3.1 document', async () => {
    const result = await new Validator().validate(doc as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(doc.openapi).toMatch(/^3\.1\./);
  });

  it('documents the API and only the API (no dashboard, docs or tag routes)', () => {
    const paths = Object.keys(doc.paths);
    expect(paths.filter((p) => p.startsWith('/v1/')).length).toBeGreaterThanOrEqual(14);
    expect(paths).toEqual(expect.arrayContaining(['/healthz', '/readyz', '/metrics']));
    for (const path of paths) expect(path).toMatch(/^\/(v1\/|healthz$|readyz$|metrics$)/);
    expect(operations.length).toBeGreaterThanOrEqual(20);
  });

  it('names every operation with a unique camelCase operationId, a summary and a description', () => {
    const ids = operations.map(({ op }) => op.operationId);
    for (const { key, op } of operations) {
      expect(op.operationId, key).toMatch(/^[a-z][a-zA-Z]+$/);
      expect(op.summary?.trim(), key).toBeTruthy();
      expect(op.description?.trim().length ?? 0, `${key} description`).toBeGreaterThan(40);
    }
    expect(new Set(ids).size).toBe(ids.length);
    const byKey = Object.fromEntries(operations.map(({ key, op }) => [key, op.operationId]));
    expect(byKey).toMatchObject({
      'POST /v1/track/click': 'trackClick',
      'POST /v1/track/conversion': 'trackConversion',
      'GET /v1/conversions': 'listConversions',
      'GET /v1/conversions/{id}': 'getConversion',
      'POST /v1/conversions/{id}/resend': 'resendConversion',
      'GET /v1/clicks': 'listClicks',
      'POST /v1/stores': 'createStore',
      'GET /v1/stores': 'listStores',
      'GET /v1/stores/{id}': 'getStore',
      'PATCH /v1/stores/{id}': 'updateStore',
      'GET /v1/analytics/metrics': 'getMetrics',
      'POST /v1/stores/{id}/ad-spend': 'upsertAdSpend',
    });
  });

  it('states the scope of every authenticated operation, the one its 403 example names', () => {
    for (const { key, op } of operations.filter(({ op }) => op.security)) {
      const scope = /\*\*Scope:\*\* `([a-z]+:[a-z]+)`/.exec(op.description ?? '')?.[1];
      expect(scope, key).toBeDefined();
      const examples = op.responses['403']?.content?.['application/json']?.examples ?? {};
      // A 403 names the one scope missing, or (POST /v1/track/batch) the scopes of which one is needed.
      const named = Object.values(examples).flatMap((e) => {
        const details = (e.value as { error: { details?: Json } }).error.details;
        return [details?.requiredScope, ...((details?.requiredScopes as unknown[] | undefined) ?? [])];
      });
      expect(named, key).toContain(scope);
    }
    const rules = (key: string) => operations.find((o) => o.key === key)?.op.description ?? '';
    expect(rules('POST /v1/track/click')).toMatch(/Idempotency-Key/);
    expect(rules('POST /v1/track/click')).toMatch(/publishable/);
    expect(rules('POST /v1/track/conversion')).toMatch(/orderId/);
    expect(rules('POST /v1/track/conversion')).toMatch(/attributionWindowDays/);
    expect(rules('POST /v1/track/conversion')).toMatch(/minConfidence/);
    expect(rules('POST /v1/track/conversion')).toMatch(/wt_test_/);
  });

  it('describes every response; none is "Default Response"', () => {
    for (const { key, op } of operations) {
      for (const [status, response] of Object.entries(op.responses)) {
        expect(response.description, `${key} ${status}`).not.toMatch(/^Default Response$/);
        expect(response.description.length, `${key} ${status}`).toBeGreaterThan(5);
      }
    }
  });

  it('declares the error statuses each operation can answer, with the error envelope', () => {
    for (const { key, path, method, op } of operations) {
      const statuses = Object.keys(op.responses);
      const expected = ['403', '500'];
      if (path.startsWith('/v1/')) expected.push('400', '503');
      if (op.security) expected.push('401', '429');
      if (method === 'post' || method === 'patch') expected.push('413');
      // A batch answers each event's 404 in its results, never the request's.
      if (/\{id\}/.test(path) || (/track/.test(path) && !path.endsWith('/batch'))) expected.push('404');
      expect(statuses, key).toEqual(expect.arrayContaining(expected));
      for (const status of statuses.filter((s) => /^[45]/.test(s))) {
        const media = op.responses[status]?.content?.['application/json'];
        const schema = media?.schema as { properties?: Record<string, Json> } | undefined;
        expect(schema?.properties?.success, `${key} ${status}`).toEqual({ type: 'boolean', enum: [false] });
        const error = schema?.properties?.error as { properties: { code: { enum: string[] } } } | undefined;
        expect(error?.properties.code.enum, `${key} ${status}`).toContain('service_unavailable');
        // Each example's code is one that answers with this status.
        const examples = Object.values(media?.examples ?? {});
        expect(examples.length, `${key} ${status} examples`).toBeGreaterThan(0);
        for (const example of examples) {
          const shown = (example.value as { error: { code: string } }).error.code;
          expect(ERROR_STATUS[shown as keyof typeof ERROR_STATUS], `${key} ${status} shows ${shown}`).toBe(Number(status));
        }
      }
    }
  });

  it('shows service_unavailable on 503 and a fitting code on every error status', () => {
    const click = operations.find((o) => o.key === 'POST /v1/track/click')?.op as Operation;
    const shown = (status: string) =>
      Object.values(click.responses[status]?.content?.['application/json']?.examples ?? {}).map(
        (e) => (e.value as { error: { code: string } }).error.code,
      );
    expect(shown('503')).toEqual(['service_unavailable']);
    expect(shown('500')).toEqual(['internal_error']);
    expect(shown('401')).toContain('unauthorized');
    expect(shown('429')).toEqual(['rate_limit_exceeded']);
    expect(shown('413')).toEqual(['payload_too_large']);
    expect(shown('404')).toEqual(['store_not_found']);
    expect(shown('400')).toEqual(expect.arrayContaining(['missing_required_field', 'invalid_fbclid', 'invalid_request']));
    const schema503 = click.responses['503']?.content?.['application/json']?.schema as Json;
    expect(JSON.stringify(schema503)).not.toContain('missing_required_field"]');
  });

  it('has examples that fit their own schemas (schemas, parameters, bodies and responses)', () => {
    const ajv = exampleValidator();
    let checked = 0;
    const compiled = new Map<string, ReturnType<Ajv2020['compile']>>();
    const check = (schema: Json, value: unknown, where: string) => {
      const { examples: _e, example: _x, ...rest } = schema;
      const text = JSON.stringify(rest);
      const validate = compiled.get(text) ?? ajv.compile(rest);
      compiled.set(text, validate);
      expect(validate(value) ? [] : validate.errors, where).toEqual([]);
      checked++;
    };
    const walk = (schema: unknown, where: string): void => {
      if (Array.isArray(schema)) {
        schema.forEach((s, i) => {
          walk(s, `${where}[${i}]`);
        });
        return;
      }
      if (schema === null || typeof schema !== 'object') return;
      const node = schema as Json;
      if (Array.isArray(node.examples) && typeof node.type === 'string') {
        for (const example of node.examples) check(node, example, where);
      }
      for (const [key, value] of Object.entries(node)) if (key !== 'examples') walk(value, `${where}.${key}`);
    };
    const media = (m: Media | undefined, where: string) => {
      if (!m) return;
      walk(m.schema, where);
      if (m.example !== undefined) check(m.schema, m.example, `${where} example`);
      for (const [name, e] of Object.entries(m.examples ?? {})) check(m.schema, e.value, `${where} ${name}`);
    };
    for (const { key, op } of operations) {
      for (const p of op.parameters ?? []) {
        walk(p.schema, `${key} ${p.name}`);
        if (p.example !== undefined) check(p.schema, p.example, `${key} ${p.name} example`);
      }
      for (const [type, m] of Object.entries(op.requestBody?.content ?? {})) media(m, `${key} body ${type}`);
      for (const [status, r] of Object.entries(op.responses)) {
        for (const [type, m] of Object.entries(r.content ?? {})) media(m, `${key} ${status} ${type}`);
      }
    }
    expect(checked).toBeGreaterThan(300);
  });

  it('has every operation with a body and every success response show whole examples', () => {
    for (const { key, op } of operations) {
      const body = op.requestBody?.content['application/json'];
      if (body && Object.keys((body.schema.properties as Json | undefined) ?? {}).length > 0) {
        expect(Object.keys(body.examples ?? {}).length, `${key} body`).toBeGreaterThan(0);
      }
      const success = Object.entries(op.responses).find(([s]) => /^2/.test(s))?.[1];
      const content = success?.content?.['application/json'];
      if (content) expect(Object.keys(content.examples ?? {}).length, `${key} success`).toBeGreaterThan(0);
    }
  });

  it('uses ids in the real id format and a realistic fbclid in examples', () => {
    const text = JSON.stringify(doc.paths);
    // Words that share an id prefix are not ids: the warning code spend_not_converted, the events spend_source.*.
    const words = /^spend_(not_converted|source\.)/;
    const ids = [...text.matchAll(/"((?:st|clk|conv|req|spend)_[^"]*)"/g)]
      .map((m) => m[1] as string)
      .filter((id) => !words.test(id) && !/^[a-z]+(?:_[a-z]+){2,}$/.test(id));
    expect(ids.length).toBeGreaterThan(20);
    for (const id of ids) expect(id).toMatch(/^(st|clk|conv|req|spend)_[0-9a-hjkmnp-tv-z]{26}$/);
    const trackClick = operations.find((o) => o.key === 'POST /v1/track/click')?.op as Operation;
    const properties = trackClick.requestBody?.content['application/json']?.schema.properties as Record<string, Json> | undefined;
    // fbclid is optional (any one click id will do): its schema is the first of its anyOf.
    const fbclid = (properties?.fbclid?.anyOf as Json[] | undefined)?.[0];
    const example = (fbclid?.examples as string[] | undefined)?.[0];
    expect(example).toMatch(/^IwAR[A-Za-z0-9_-]{50,70}$/);
    expect(text).not.toMatch(/"examples":\[("string"|1000000000000)\]/);
  });

  it('describes every conversion extension field and every body field', () => {
    const conversion = operations.find((o) => o.key === 'POST /v1/track/conversion')?.op as Operation;
    const properties = conversion.requestBody?.content['application/json']?.schema.properties as Record<string, Json>;
    for (const field of ['ipAddress', 'userAgent', 'fingerprint', 'fbc', 'fbp', 'clickId', 'eventId', 'eventSourceUrl']) {
      expect(String(properties[field]?.description ?? ''), field).toMatch(/.{30,}/);
    }
    for (const { key, op } of operations) {
      const schema = op.requestBody?.content['application/json']?.schema;
      const fields = Object.entries((schema?.properties as Record<string, Json> | undefined) ?? {});
      for (const [name, property] of fields) {
        // A nullable field (PATCH) carries its description on the non-null alternative.
        const alternatives = (property.anyOf as Json[] | undefined) ?? [];
        const described = property.description ?? alternatives.find((a) => a.description)?.description;
        expect(described, `${key} ${name}`).toBeTruthy();
      }
    }
  });

  it('states the rules the server enforces: currency, non-empty required strings, dates, URLs and addresses', () => {
    const conversion = operations.find((o) => o.key === 'POST /v1/track/conversion')?.op as Operation;
    const body = conversion.requestBody?.content['application/json']?.schema as Json & { properties: Record<string, Json> };
    // Any case (stored upper-case); that the code exists is a rule JSON Schema cannot state: x-rules.
    expect(body.properties.currency).toMatchObject({ pattern: '^[A-Za-z]{3}$', 'x-rules': ['iso-4217'] });
    // An optional property may be sent as null or "" (the same as leaving it out).
    const optional = (property: Json | undefined) => ((property as Json).anyOf as Json[])[0] as Json;
    expect(((body.properties.eventSourceUrl as Json).anyOf as Json[]).slice(1)).toEqual([{ type: 'null' }, { enum: [''] }]);
    // The server refuses "" for every required string (missing_required_field): the document does too.
    for (const { key, op } of operations) {
      const schema = op.requestBody?.content['application/json']?.schema as
        | (Json & { properties: Record<string, Json> })
        | undefined;
      for (const field of (schema?.required as string[] | undefined) ?? []) {
        const property = schema?.properties[field] as Json;
        if (property.type !== 'string') continue;
        const refusesEmpty =
          (property.minLength as number) >= 1 ||
          (typeof property.pattern === 'string' && !new RegExp(property.pattern, 'u').test(''));
        expect(refusesEmpty, `${key} ${field}`).toBe(true);
      }
    }
    expect(optional(body.properties.eventSourceUrl)).toMatchObject({ format: 'uri' });
    expect(optional(body.properties.ipAddress).anyOf).toHaveLength(2);
    expect(optional(body.properties.timestamp)).toMatchObject({ 'x-rules': ['date-exists', 'not-in-future'] });
    const click = operations.find((o) => o.key === 'POST /v1/track/click')?.op as Operation;
    const clickBody = click.requestBody?.content['application/json']?.schema as Json & { properties: Record<string, Json> };
    expect(clickBody.properties.landingPage).toMatchObject({ minLength: 1, format: 'uri' });
    const metrics = operations.find((o) => o.key === 'GET /v1/analytics/metrics')?.op as Operation;
    const startDate = metrics.parameters?.find((p) => p.name === 'startDate');
    expect(startDate?.schema.pattern).toBe('^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])$');
    // The markers that carry these rules into the document never appear in it.
    expect(JSON.stringify(doc)).not.toContain('x-domain-rules');
  });

  it('documents Idempotency-Key on every POST and PATCH of /v1', () => {
    for (const { key, method, path, op } of operations) {
      const header = op.parameters?.find((p) => p.in === 'header' && p.name === 'Idempotency-Key');
      if (path.startsWith('/v1/') && (method === 'post' || method === 'patch')) expect(header, key).toBeDefined();
      else expect(header, key).toBeUndefined();
    }
  });

  it('introduces Waytrack, its keys and its guides, linking nowhere outside', () => {
    const info = doc.info as { title: string; description: string };
    expect(info.title).toMatch(/Waytrack/);
    expect(info.description).toMatch(/Waytrack/);
    expect(info.description).toContain('/dashboard');
    expect(info.description).toContain('docs/');
    expect(info.description).toContain('README.md');
    const scheme = (doc.components as { securitySchemes: Record<string, { description: string }> }).securitySchemes.bearerAuth;
    for (const text of [
      'wt_live_',
      'wt_test_',
      'wt_pk_',
      'clicks:write',
      'waytrack account create',
      'waytrack keys create',
      'Settings → API keys',
    ]) {
      expect(scheme?.description).toContain(text);
    }
    // Links are relative; the only hosts named are the examples' shop and Facebook's referrer.
    const everything = JSON.stringify(doc);
    const descriptions = [...everything.matchAll(/"description":"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1] as string);
    expect(descriptions.length).toBeGreaterThan(100);
    for (const text of descriptions) expect(text).not.toMatch(/\]\((?!\/)/);
    const hosts = new Set([...everything.matchAll(/https?:\/\/([A-Za-z0-9.-]+\.[A-Za-z]{2,})/g)].map((m) => m[1]));
    expect([...hosts].sort()).toEqual(['l.facebook.com', 'shop.acme-outdoor.com']);
  });

  it('the request examples of the document are accepted by the server', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const bodyExamples = (key: string) =>
      Object.values(operations.find((o) => o.key === key)?.op.requestBody?.content['application/json']?.examples ?? {}).map(
        (e) => e.value as Json,
      );
    // Timestamps are left out: the examples' dates are fixed, the server's clock is not.
    const fitted = (body: Json) => {
      const { timestamp: _t, ...rest } = body;
      return { ...rest, storeId };
    };
    for (const body of bodyExamples('POST /v1/stores')) {
      const res = await call(ctx.app, 'POST', '/v1/stores', { key: ctx.a.live, body });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
    }
    for (const body of bodyExamples('POST /v1/track/click')) {
      const res = await call(ctx.app, 'POST', '/v1/track/click', { key: ctx.a.live, body: fitted(body) });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
    for (const body of bodyExamples('POST /v1/track/conversion')) {
      const res = await call(ctx.app, 'POST', '/v1/track/conversion', { key: ctx.a.live, body: fitted(body) });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
    for (const body of bodyExamples('POST /v1/stores/{id}/ad-spend')) {
      const res = await call(ctx.app, 'POST', `/v1/stores/${storeId}/ad-spend`, { key: ctx.a.live, body });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
  });
});

describe('/docs', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext();
  });
  afterAll(async () => ctx?.close());

  it('is Waytrack’s: title, favicon and logo, no Swagger or Fastify logo', async () => {
    const page = await ctx.app.inject({ method: 'GET', url: '/docs/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-security-policy']).toBeDefined();
    expect(page.body).toMatch(/<title>Waytrack[^<]*<\/title>/);
    expect(page.body).not.toMatch(/<title>Swagger/);
    expect(page.body).not.toMatch(/favicon-(16|32)x\d+\.png/);
    const favicon = /href="([^"]*favicon\.svg)"/.exec(page.body)?.[1] as string;
    expect(favicon).toBeDefined();
    const css = /href="([^"]*waytrack\.css)"/.exec(page.body)?.[1] as string;
    expect(css).toBeDefined();
    for (const asset of [favicon, css]) {
      const res = await ctx.app.inject({ method: 'GET', url: `/docs/${asset.replace(/^\.\//, '')}` });
      expect(res.statusCode, asset).toBe(200);
    }

    const initializer = await ctx.app.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' });
    expect(initializer.statusCode).toBe(200);
    const logos = [...initializer.body.matchAll(/data:image\/svg\+xml;base64,([A-Za-z0-9+/=]+)/g)].map((m) =>
      Buffer.from(m[1] as string, 'base64').toString('utf8'),
    );
    expect(logos).toHaveLength(1);
    expect(logos[0]).toContain('Waytrack');
    expect(logos[0]?.toLowerCase()).not.toMatch(/fastify|swagger/);
    // The default logo (Fastify's wordmark, a path starting "M6603.4") is gone.
    expect(initializer.body).not.toContain(
      'PD94bWwgdmVyc2lvbj0iMS4wIiBlbmNvZGluZz0idXRmLTgiPz4KPCEtLSBHZW5lcmF0b3I6IEFkb2JlIElsbHVzdHJhdG9y',
    );
  });

  it('shows the document the API serves', async () => {
    const fromDocs = await ctx.app.inject({ method: 'GET', url: '/docs/json' });
    const fromApi = await ctx.app.inject({ method: 'GET', url: '/v1/openapi.json' });
    expect(fromDocs.json()).toEqual(fromApi.json());
  });
});
