import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { ENGINE } from '../engine.js';
import { call, createTestContext, makeStore } from '../helpers.js';
import { arbitraryFor, otherTypes, outOfBounds, type Schema } from './arbitraries.js';
import { isWebhook, signedWebhook, WEBHOOK_SECRET } from './webhooks.js';

// The OpenAPI document and the server agree on request bodies, both ways (docs/api.md
// "Reference documentation"): bodies are generated from the document the server serves, each
// is judged by the document's own schema (Ajv, JSON Schema 2020-12 with formats asserted, as a
// client's validator would), then sent. Valid by the document → accepted (2xx); invalid → 400.
//
// The only bodies excluded are those the document itself marks as checked beyond JSON Schema:
// a property with `x-rules` (rules no JSON Schema can state: an ISO 4217 code that exists, a
// time at most 5 minutes ahead, an IANA time zone, a date that exists, …). The generator
// makes values that keep those rules, and a body breaking one may be refused, but only with
// a 400 naming that property.
//
// FUZZ_RUNS (default 150 per operation) and FUZZ_SEED as in openapi-fuzz.test.ts.

const RUNS = Number(process.env.FUZZ_RUNS ?? 150);
const SEED =
  process.env.FUZZ_SEED === 'random' ? Math.floor(Math.random() * 2 ** 31) : Number(process.env.FUZZ_SEED ?? 20_261_127);

// The generated requests make hundreds of webhook endpoints in one account: the cap per account
// (WEBHOOK_MAX_ENDPOINTS, a refusal of the resource, not of the body: endpoint-cap.test.ts) is lifted.
const ctx = await createTestContext({ env: { CAPI_SYNC_WAIT_MS: '0', WEBHOOK_MAX_ENDPOINTS: '10000' } });
afterAll(() => ctx.close());
const { app } = ctx;
const doc = (await app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();

const storeId = await makeStore(app, ctx.a.live, {
  name: 'Agreement main',
  shopifyWebhookSecret: WEBHOOK_SECRET,
  woocommerceWebhookSecret: WEBHOOK_SECRET,
});
const patchStoreId = await makeStore(app, ctx.a.live, { name: 'Agreement patch' });
// A webhook endpoint for PATCH /v1/webhooks/{id} (on a name that never resolves: nothing is sent).
const created = await call(app, 'POST', '/v1/webhooks', {
  key: ctx.a.live,
  body: { url: 'https://agreement.invalid/hooks', events: ['refund.recorded'] },
});
if (created.status !== 201) throw new Error(`creating a webhook endpoint: ${JSON.stringify(created.body)}`);
const webhookId = created.body.data.id as string;
// Google Ads has four secrets: a generated first body rarely has them all (x-rules:
// required-once), so the store starts configured and bodies that leave them out keep them.
// Meta and TikTok (one secret each) start unconfigured, so both sides of the rule are met.
const googleAds = await call(app, 'PUT', `/v1/stores/${storeId}/destinations/google_ads`, {
  key: ctx.a.live,
  body: {
    customerId: '1234567890',
    conversionAction: 'customers/1234567890/conversionActions/1',
    api: 'google_ads_api',
    developerToken: 'dev-token',
    oauth: { clientId: 'client', clientSecret: 'secret', refreshToken: 'refresh' },
  },
});
if (googleAds.status !== 200) throw new Error(`configuring Google Ads: ${JSON.stringify(googleAds.body)}`);

const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true });
addFormats.default(ajv);

const DAY = 86_400_000;
const MINUTE = 60_000;
const CURRENCIES = Intl.supportedValuesOf('currency');
const TIME_ZONES = ['UTC', ...Intl.supportedValuesOf('timeZone').filter((z) => z.includes('/'))];

/** A value that keeps a rule the document states with `x-rules` (docs/api.md lists them). */
function ruleArbitrary(rules: string[]): fc.Arbitrary<unknown> | undefined {
  const now = Date.now();
  const time = (from: number, to: number) => fc.integer({ min: from, max: to }).map((t) => new Date(t).toISOString());
  const rule = rules.includes('not-in-future') ? 'not-in-future' : rules[0];
  switch (rule) {
    case 'iso-4217':
      return fc.tuple(fc.constantFrom(...CURRENCIES), fc.boolean()).map(([code, lower]) => (lower ? code.toLowerCase() : code));
    case 'not-in-future':
      return time(now - 80 * DAY, now + 4 * MINUTE);
    case 'iana-time-zone':
      return fc.constantFrom(...TIME_ZONES);
    case 'date-exists':
      return time(now - 400 * DAY, now + 400 * DAY).map((t) => t.slice(0, 10));
    case 'public-address':
      // Names under .invalid never resolve (RFC 6761), so never to a private address.
      return fc
        .tuple(fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/), fc.stringMatching(/^[A-Za-z0-9/_.-]{0,40}$/))
        .map(([host, rest]) => `https://${host}.invalid/${rest}`);
    default:
      return undefined;
  }
}

/** Whether a value keeps a rule: true, false, or undefined when the test cannot tell on its own. */
function keepsRule(rule: string, value: unknown): boolean | undefined {
  if (rule === 'required-once') return true; // given: it holds (requiredOnce judges one left out)
  if (rule === 'unique-entries' && Array.isArray(value)) {
    const keys = value.map((e) => JSON.stringify([e?.date, e?.platform ?? 'meta', e?.campaignId ?? '']));
    return new Set(keys).size === keys.length;
  }
  // Any currency's minor unit is at most 1 and at least 0.001 (KWD): between, it depends.
  if (rule === 'minor-unit' && typeof value === 'number') return value >= 1 ? true : value < 0.001 ? false : undefined;
  if (typeof value !== 'string') return undefined;
  const now = Date.now();
  switch (rule) {
    case 'iso-4217':
      return CURRENCIES.includes(value.toUpperCase());
    case 'not-in-future':
      return Date.parse(value) <= now + 5 * MINUTE - 10_000
        ? true
        : Date.parse(value) > now + 5 * MINUTE + 10_000
          ? false
          : undefined;
    case 'click-max-age':
      return Date.parse(value) >= now - 90 * DAY + 10_000
        ? true
        : Date.parse(value) < now - 90 * DAY - 10_000
          ? false
          : undefined;
    case 'iana-time-zone':
      return TIME_ZONES.includes(value) ? true : undefined;
    case 'public-address':
      return /^https:\/\/[a-z][a-z0-9-]{0,20}\.invalid\/[A-Za-z0-9/_.-]{0,40}$/.test(value) ? true : undefined;
    case 'date-exists': {
      const day = value.slice(0, 10);
      const date = new Date(`${day}T00:00:00Z`);
      return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === day;
    }
    default:
      return undefined;
  }
}

const rulesOf = (schema: Schema | undefined): string[] => (Array.isArray(schema?.['x-rules']) ? schema['x-rules'] : []);

/** A body valid by `schema`, keeping its `x-rules`, with the real store id where one is named. */
function validArbitrary(schema: Schema, name?: string): fc.Arbitrary<unknown> {
  if (name === 'storeId') return fc.constant(storeId);
  const rules = rulesOf(schema);
  if (rules.length > 0) {
    const keeping = ruleArbitrary(rules);
    if (keeping) return keeping;
  }
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(alternatives) && !schema.type) {
    return fc.oneof(...alternatives.map((s: Schema) => validArbitrary(s, name)));
  }
  if (schema.type === 'object' && schema.properties) {
    const model: Record<string, fc.Arbitrary<unknown>> = {};
    for (const [key, property] of Object.entries<Schema>(schema.properties)) model[key] = validArbitrary(property, key);
    return fc.record(model, { requiredKeys: schema.required ?? [] });
  }
  if (schema.type === 'array' && schema.items) {
    return fc.array(validArbitrary(schema.items), {
      minLength: schema.minItems ?? 0,
      maxLength: Math.min(schema.maxItems ?? 3, Math.max(schema.minItems ?? 0, 3)),
    });
  }
  return arbitraryFor(schema);
}

/** The schema of the value at `path`, through anyOf (the first alternative that is not null). */
function schemaAt(schema: Schema | undefined, path: Array<string | number>): Schema | undefined {
  let node = schema;
  for (const step of path) {
    if (node?.anyOf && !node.type) node = node.anyOf.find((s: Schema) => s.type !== 'null' && !('const' in s)) ?? node;
    node = typeof step === 'number' ? node?.items : node?.properties?.[step];
  }
  if (node?.anyOf && !node.type) node = node.anyOf.find((s: Schema) => s.type !== 'null' && !('const' in s)) ?? node;
  return node;
}

type Path = Array<string | number>;
function paths(value: unknown, path: Path = [], out: Path[] = []): Path[] {
  if (path.length > 0) out.push(path);
  if (Array.isArray(value)) for (const [i, v] of value.entries()) paths(v, [...path, i], out);
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) paths(v, [...path, k], out);
  return out;
}
const show = (path: Path) => path.reduce<string>((s, p) => (typeof p === 'number' ? `${s}[${p}]` : s ? `${s}.${p}` : p), '');

/** Near misses of a valid body: one value changed, removed or added. */
function mutated(body: Record<string, unknown>, schema: Schema): fc.Arbitrary<{ body: unknown; what: string }> {
  const all = paths(body);
  const known = Object.keys(schema.properties ?? {});
  return fc.tuple(fc.nat(), fc.nat(), fc.nat()).map(([p, k, v]) => {
    const copy = structuredClone(body);
    const path = all.length ? (all[p % all.length] as Path) : [];
    const parent = path.slice(0, -1).reduce<Record<string | number, unknown>>((o, s) => o[s] as never, copy as never);
    const last = path[path.length - 1] as string | number;
    const current = parent?.[last];
    const optional = (name?: string) => ['null', 'empty', 'spaces'].includes(name ?? '');
    const kinds: Array<[string, () => void]> = [
      ['null', () => (parent[last] = null)],
      ['empty', () => (parent[last] = '')],
      ['spaces', () => (parent[last] = typeof current === 'string' ? ` ${current} ` : current)],
      ['lower', () => (parent[last] = typeof current === 'string' ? current.toLowerCase() : current)],
      ['upper', () => (parent[last] = typeof current === 'string' ? current.toUpperCase() : current)],
      ['remove', () => delete parent[last]],
      ['otherType', () => (parent[last] = otherTypes(current)[v % otherTypes(current).length])],
      [
        'outOfBounds',
        () => {
          const bounds = outOfBounds(schemaAt(schema, path) ?? {});
          parent[last] = bounds[v % bounds.length];
        },
      ],
      ['unknownNull', () => ((copy as Record<string, unknown>)[`${known[v % Math.max(1, known.length)] ?? 'x'}X`] = null)],
      ['unknownEmpty', () => ((copy as Record<string, unknown>).colour = '')],
      ['absentOptional', () => ((copy as Record<string, unknown>)[known[v % Math.max(1, known.length)] ?? 'x'] = null)],
    ];
    const [name, apply] = kinds[k % kinds.length] as [string, () => void];
    if (path.length || !optional(name)) apply();
    return { body: copy, what: `${name} at ${show(path)}` };
  });
}

/** The x-rules a body breaks (or may break), as [field, verdict]. */
function ruleVerdicts(schema: Schema, body: unknown): Array<[string, boolean | undefined]> {
  const out: Array<[string, boolean | undefined]> = [];
  for (const path of paths(body)) {
    const value = path.reduce<unknown>((o, s) => (o as Record<string | number, unknown>)?.[s], body);
    // null and "" are the property left out (docs/api.md "Requests"): no rule applies to them.
    if (value === null || value === '') continue;
    for (const rule of rulesOf(schemaAt(schema, path))) out.push([show(path), keepsRule(rule, value)]);
  }
  return out;
}

/**
 * x-rules: required-once — a destination's secret (and Google's `oauth`) left out keeps the
 * stored one, so it is required only while none is stored: the field at `field` (a.b) says so.
 */
function requiredOnce(schema: Schema, field: string): boolean {
  let node: Schema | undefined = schema;
  for (const step of field.split('.')) {
    if (node?.anyOf) node = node.anyOf.find((s: Schema) => s.type === 'object') ?? node;
    node = node?.properties?.[step];
  }
  return [node, ...(node?.anyOf ?? [])].some((s: Schema) => rulesOf(s).includes('required-once'));
}

const CLICK_IDS = ['fbclid', 'gclid', 'gbraid', 'wbraid', 'ttclid', 'msclkid', 'epik', 'ScCid', 'rdt_cid', 'li_fat_id'];

/** A click body with no click id, neither in the body nor in landingPage's query. */
function lacksClickId(body: Record<string, unknown>): boolean {
  if (CLICK_IDS.some((id) => typeof body[id] === 'string' && body[id] !== '')) return false;
  try {
    const query = new URL(String(body.landingPage)).searchParams;
    return !CLICK_IDS.some((id) => (query.get(id) ?? '') !== '');
  } catch {
    return true;
  }
}

/** x-rules one-browser-id, one-identity (POST /v1/track/identify): the field named when none of a group is given. */
function lacksIdentifyGroup(body: Record<string, unknown>): string | undefined {
  const given = (field: string) => typeof body[field] === 'string' && body[field] !== '';
  if (!['visitorId', 'fbp', 'ttp'].some(given)) return 'visitorId';
  if (!['email', 'phone'].some(given)) return 'email';
  return undefined;
}

const operations: Array<{ name: string; method: 'POST' | 'PATCH'; url: string; schema: Schema }> = [];
for (const [path, methods] of Object.entries<Record<string, Schema>>(doc.paths)) {
  for (const [method, operation] of Object.entries<Schema>(methods)) {
    const schema = operation.requestBody?.content?.['application/json']?.schema;
    if (!schema) continue;
    // The batch answers 200 with an entry per event, each judged as its own endpoint judges it:
    // batch.test.ts proves every event's answer equals the single endpoint's, which this file
    // holds to the document.
    if (path === '/v1/track/batch') continue;
    const id = path.startsWith('/v1/webhooks/{id}') ? webhookId : method === 'patch' ? patchStoreId : storeId;
    const url = path.replace('{id}', id).replace('{storeId}', storeId);
    operations.push({ name: `${method.toUpperCase()} ${path}`, method: method.toUpperCase() as 'POST', url, schema });
  }
}

describe(`the document and the server agree on request bodies (${ENGINE}, seed ${SEED})`, () => {
  it('finds every operation with a body', () => {
    expect(operations.map((o) => o.name)).toEqual(
      expect.arrayContaining(['POST /v1/track/click', 'POST /v1/track/conversion', 'POST /v1/stores', 'PATCH /v1/stores/{id}']),
    );
  });

  for (const op of operations) {
    it(op.name, async () => {
      const validate = ajv.compile(op.schema);
      const counts = { valid: 0, invalid: 0, ruled: 0 };
      const cases = validArbitrary(op.schema).chain((base) =>
        fc.oneof(
          { weight: 1, arbitrary: fc.constant({ body: base, what: 'generated' }) },
          { weight: 3, arbitrary: mutated(base as Record<string, unknown>, op.schema) },
        ),
      );
      await fc.assert(
        fc.asyncProperty(cases, async ({ body, what }) => {
          // Shop webhooks (x-raw-body: the shop's own JSON, not validated by the schema): signed
          // with the store's secret on a handled topic, any object is recorded (200) or refused
          // as unmappable (422 naming the field), never a 400 or worse.
          if (isWebhook(op.url)) {
            const res = await call(app, op.method, op.url, signedWebhook(op.url, JSON.stringify(body)));
            const context = `${what}\n  body: ${JSON.stringify(body).slice(0, 600)}\n  answer: ${res.status} ${JSON.stringify(res.body)}`;
            expect([200, 422], context).toContain(res.status);
            if (res.status === 422) expect(typeof res.body.error.details.field, context).toBe('string');
            counts.valid++;
            return;
          }
          const res = await call(app, op.method, op.url, { key: ctx.a.live, body });
          const valid = validate(body);
          const verdicts = ruleVerdicts(op.schema, body);
          const broken = verdicts.filter(([, keeps]) => keeps !== true);
          const context = `${what}\n  body: ${JSON.stringify(body).slice(0, 600)}\n  document: ${valid ? 'valid' : JSON.stringify(validate.errors?.[0])}\n  answer: ${res.status} ${JSON.stringify(res.body?.error ?? '')}`;
          // x-rules: one-click-id on the click body (no JSON Schema states "one of six, in the body or the URL").
          if (valid && op.name === 'POST /v1/track/click' && lacksClickId(body as Record<string, unknown>)) {
            counts.ruled++;
            expect(res.status, context).toBe(400);
            expect(res.body.error.details, context).toMatchObject({ field: 'fbclid', reason: 'required_field_missing' });
            return;
          }
          // x-rules: one-browser-id, one-identity on the identify body (no JSON Schema states "one of these, not null nor empty").
          const lacking = op.name === 'POST /v1/track/identify' ? lacksIdentifyGroup(body as Record<string, unknown>) : undefined;
          if (valid && lacking) {
            counts.ruled++;
            expect(res.status, context).toBe(400);
            expect(res.body.error.details, context).toMatchObject({ field: lacking, reason: 'required_field_missing' });
            return;
          }
          // x-rules: required-once on a destination's secrets (nothing stored yet, or stored now).
          const details = res.body?.error?.details;
          if (
            valid &&
            res.status === 400 &&
            details?.reason === 'required_field_missing' &&
            requiredOnce(op.schema, details.field)
          ) {
            counts.ruled++;
            const left = String(details.field)
              .split('.')
              .reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], body);
            expect(left === undefined || left === null || left === '', context).toBe(true);
            return;
          }
          if (!valid) {
            counts.invalid++;
            expect(
              res.status,
              `invalid by the document, yet not refused (document looser than the server? no: stricter):\n${context}`,
            ).toBe(400);
            return;
          }
          // The resource-level refusals of a valid body: a store id that is not one of the
          // account's, and a refund of an order with no conversion (generated orders do not exist).
          const named = (body as { storeId?: unknown }).storeId;
          if (named !== undefined && named !== storeId && res.status === 404) {
            expect(res.body.error.code, context).toBe('store_not_found');
            counts.valid++; // accepted by validation, refused for the resource it names
            return;
          }
          if (op.name === 'POST /v1/track/refund' && (res.status === 404 || res.status === 400)) {
            // The order named may not exist, or (a conversion generated earlier in this file
            // with the same orderId) may be in another currency or have less left to refund.
            const details = res.body.error.details ?? {};
            if (res.status === 404) expect(res.body.error.code, context).toBe('conversion_not_found');
            else
              expect(['currency_mismatch', 'ambiguous_order'].includes(details.reason) || 'remaining' in details, context).toBe(
                true,
              );
            counts.valid++; // accepted by validation, refused for the order it names
            return;
          }
          if (broken.length > 0) {
            counts.ruled++;
            const fields = broken.map(([field]) => field);
            const at = String(res.body?.error?.details?.field);
            if (res.status === 400)
              expect(
                fields.some((f) => at === f || at.startsWith(`${f}[`)),
                `refused for another reason than its x-rules:\n${context}`,
              ).toBe(true);
            else if (broken.some(([, keeps]) => keeps === false))
              expect.fail(`a body breaking an x-rule was accepted:\n${context}`);
            return;
          }
          counts.valid++;
          expect(res.status, `valid by the document, yet refused (document looser than the server):\n${context}`).toBeLessThan(
            300,
          );
        }),
        { numRuns: RUNS, seed: SEED, endOnFailure: true },
      );
      console.log(`${op.name}: ${counts.valid} valid accepted, ${counts.invalid} invalid refused, ${counts.ruled} under x-rules`);
      expect(counts.valid).toBeGreaterThan(RUNS / 10);
      // A webhook's document body is any object (x-raw-body): no body is invalid by it.
      if (!isWebhook(op.url)) expect(counts.invalid).toBeGreaterThan(RUNS / 10);
    }, 120_000);
  }
});
