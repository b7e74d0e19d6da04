import fc from 'fast-check';
import {
  arbitraryFor,
  brokenJson,
  type Hints,
  nastyString,
  nestedText,
  otherTypes,
  outOfBounds,
  percentEncode,
  type Schema,
  withDuplicateKey,
} from './arbitraries.js';
import type { Operation } from './operations.js';

/** The data the fuzzer points requests at: real keys of every kind, and ids that exist (and don't). */
export interface World {
  keys: {
    live: string;
    test: string;
    otherAccount: string;
    revoked: string;
    /** A live key of the right account with only `stores:read`. */
    narrow: string;
  };
  /** Active stores of the account, per purpose (PATCH gets its own, so it cannot deactivate the others). */
  storeId: string;
  patchStoreIds: string[];
  inactiveStoreId: string;
  otherAccountStoreId: string;
  /** A store with Meta configured (pixelId, token): the destination check has something to check there. */
  forwardingStoreId?: string;
  /** A store with every destination (its spend sources borrow their secrets), and one with a Meta spend source. */
  spendStoreId?: string;
  spendSyncStoreId?: string;
  clickId: string;
  otherAccountClickId: string;
  conversionId: string;
  otherAccountConversionId: string;
  fbclid: string;
  /** A Purchase's orderId in `storeId` (EUR, much left to refund): what a refund can name. */
  orderId: string;
  /** Cursors seen in responses, fed back into later requests. */
  cursors: string[];
}

export type AuthKind =
  | 'live'
  | 'test'
  | 'otherAccount'
  | 'revoked'
  | 'narrow'
  | 'none'
  | 'garbage'
  | 'basic'
  | 'lowercaseScheme'
  | 'noScheme'
  | 'huge';

/** One generated request, with what the oracle needs to know about how it was made. */
export interface FuzzCase {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string;
  auth: AuthKind;
  /** What was done to the valid request (`none` for a valid one). */
  mutations: string[];
  /** Valid by the document's schemas, with a good key and ids of existing resources: the server must accept it. */
  expectAccepted: boolean;
  /** Only the path id is wrong (well-formed, of nothing): must be 404. */
  expectNotFound: boolean;
  /** A path id of the key's own account was replaced by another account's (tenancy: must be 404). */
  foreignId: boolean;
}

const DAY = 86_400_000;
const recentDate = (days: number) =>
  fc.integer({ min: -days, max: 0 }).map((offset) => new Date(Date.now() + offset * DAY).toISOString().slice(0, 10));

function hintsFor(world: World, op: Operation): Hints {
  const now = Date.now();
  const url = fc.oneof(
    fc.webUrl({ withQueryParameters: true }).filter((u) => u.length <= 2048),
    fc.constantFrom(
      'https://shop.acme.test/p/1?utm_source=facebook&utm_medium=cpc&utm_campaign=bf&campaign_id=1&adset_id=2&ad_id=3',
      'https://shop.acme.test/',
      'http://localhost:8080/landing?fbclid=abc',
    ),
  );
  const recentTime = fc.integer({ min: now - 20 * DAY, max: now }).map((t) => new Date(t).toISOString());
  const storeIds = op.method === 'PATCH' ? world.patchStoreIds : [world.storeId];
  return {
    storeId: fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom(...storeIds) },
      { weight: 1, arbitrary: fc.constant(world.otherAccountStoreId) },
    ),
    landingPage: url,
    referrer: url,
    eventSourceUrl: url,
    ipAddress: fc.oneof(fc.ipV4(), fc.ipV6()),
    userAgent: fc.constantFrom('Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0', 'curl/8.0', 'Googlebot/2.1'),
    timestamp: recentTime,
    startDate: recentDate(20),
    endDate: fc.constant(new Date(now).toISOString().slice(0, 10)),
    date: recentDate(60),
    currency: fc.constantFrom('USD', 'EUR', 'JPY', 'usd', 'GBP', 'KWD'),
    timezone: fc.constantFrom('UTC', 'America/New_York', 'Europe/Paris', 'Asia/Kolkata'),
    domain: fc.constantFrom('shop.acme.test', 'example.com', 'a.b.example.co.uk'),
    eventType: fc.constantFrom('Purchase', 'Lead', 'signup', 'AddToCart'),
    email: fc.emailAddress(),
    phone: fc.constantFrom('+1 (555) 010-0000', '5550100'),
    country: fc.constantFrom('US', 'de'),
    clickId: fc.constant(world.clickId),
    orderId: fc.oneof(
      { weight: 4, arbitrary: fc.constant(world.orderId) },
      { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 40 }) },
    ),
    fbclid: fc.oneof(fc.constant(world.fbclid), fc.stringMatching(/^[A-Za-z0-9_.-]{1,40}$/)),
    fbc: fc.constant(`fb.1.${now}.${world.fbclid}`),
    fbp: fc.constant(`fb.1.${now}.1116446470`),
    cursor: fc.nat().map((i) => (world.cursors.length ? world.cursors[i % world.cursors.length] : undefined)),
  };
}

/** The id of an existing resource for a path like `/v1/stores/{id}/ad-spend`, and another account's. */
function pathIds(world: World, op: Operation): { own: string[]; foreign: string } {
  if (op.path.startsWith('/v1/clicks/')) return { own: [world.clickId], foreign: world.otherAccountClickId };
  if (op.path.startsWith('/v1/conversions/')) return { own: [world.conversionId], foreign: world.otherAccountConversionId };
  if (op.method === 'PATCH') return { own: world.patchStoreIds, foreign: world.otherAccountStoreId };
  // The destination check (its `{kind}` is the document's first, meta): the store that has Meta.
  if (op.path.endsWith('/destinations/{kind}/test') && world.forwardingStoreId) {
    return { own: [world.forwardingStoreId], foreign: world.otherAccountStoreId };
  }
  if (op.path.endsWith('/spend-sources/{kind}/sync') && world.spendSyncStoreId) {
    return { own: [world.spendSyncStoreId], foreign: world.otherAccountStoreId };
  }
  if (op.path.includes('/spend-sources') && world.spendStoreId) {
    return { own: [world.spendStoreId], foreign: world.otherAccountStoreId };
  }
  return { own: [world.storeId], foreign: world.otherAccountStoreId };
}

const AUTH: Array<{ weight: number; arbitrary: fc.Arbitrary<AuthKind> }> = [
  { weight: 30, arbitrary: fc.constant('live') },
  { weight: 3, arbitrary: fc.constant('test') },
  { weight: 2, arbitrary: fc.constant('otherAccount') },
  { weight: 1, arbitrary: fc.constant('revoked') },
  { weight: 2, arbitrary: fc.constant('narrow') },
  { weight: 2, arbitrary: fc.constant('none') },
  { weight: 1, arbitrary: fc.constantFrom<AuthKind>('garbage', 'basic', 'noScheme', 'huge') },
  // The scheme is case-insensitive (RFC 9110 §11.1): `bearer` is a valid key too.
  { weight: 1, arbitrary: fc.constant<AuthKind>('lowercaseScheme') },
];

function authHeader(world: World, kind: AuthKind, junk: string): string | undefined {
  switch (kind) {
    case 'none':
      return undefined;
    case 'garbage':
      return `Bearer ${junk}`;
    case 'basic':
      return `Basic ${Buffer.from(`${world.keys.live}:`).toString('base64')}`;
    case 'lowercaseScheme':
      return `bearer ${world.keys.live}`;
    case 'noScheme':
      return world.keys.live;
    case 'huge':
      return `Bearer wt_live_${'A'.repeat(60_000)}`;
    default:
      return `Bearer ${world.keys[kind]}`;
  }
}

const CONTENT_TYPES = [
  'application/json; charset=utf-8',
  'application/json; charset=UTF-8',
  'application/json;charset="utf-8"',
  'Application/JSON',
  'application/json; charset=latin1',
  'application/json; charset=utf-16',
  'application/json; boundary=x; foo=bar',
  'text/plain',
  'text/json',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/vnd.api+json',
  'application/json-patch+json',
  'application/merge-patch+json',
  '*/*',
  '',
  'application/json, text/plain',
  `application/json; x=${'y'.repeat(8_000)}`,
];

const ACCEPTS = [
  '*/*',
  'application/json',
  'text/html',
  'application/xml',
  'text/plain;q=0',
  'application/json;q=0',
  '',
  'garbage/☃',
];

/** A header value Node would send: visible latin-1, no control characters. */
const headerText = fc
  .string({ unit: fc.integer({ min: 0x20, max: 0xff }).map((c) => String.fromCharCode(c === 0x7f ? 0x20 : c)), maxLength: 40 })
  .map((s) => s.trim());

const IDEMPOTENCY_KEYS = fc.oneof(
  { weight: 3, arbitrary: fc.uuid() },
  { weight: 2, arbitrary: fc.constantFrom('fuzz-reused-key', 'fuzz-reused-key-2') },
  { weight: 1, arbitrary: fc.constantFrom('', ' ', 'a'.repeat(255), 'a'.repeat(256), 'é'.repeat(100), '\t', 'a'.repeat(9_000)) },
  { weight: 1, arbitrary: headerText },
);

type Plan = {
  part: 'none' | 'body' | 'query' | 'path' | 'headers';
  kind: string;
  pick: number;
  pick2: number;
  nasty: string;
  json: unknown;
  depth: number;
};

const BODY_KINDS = [
  'dropRequired',
  'addUnknown',
  'addUnknownNested',
  'wrongType',
  'nasty',
  'boundary',
  'null',
  'emptyString',
  'deep',
  'duplicateKey',
  'rootType',
  'broken',
  'huge',
  'noBody',
  'protoKey',
] as const;
const QUERY_KINDS = [
  'dropRequired',
  'unknown',
  'nasty',
  'boundary',
  'duplicate',
  'empty',
  'raw',
  'bracket',
  'wrongCase',
] as const;
const PATH_KINDS = ['missing', 'foreign', 'nasty', 'long', 'badEncoding', 'encodedSlash'] as const;
const HEADER_KINDS = ['contentType', 'noContentType', 'contentEncoding', 'hugeHeader', 'accept', 'forwardedProto'] as const;

const planArb: fc.Arbitrary<Plan> = fc
  .record({
    part: fc.oneof(
      { weight: 4, arbitrary: fc.constant<'none'>('none') },
      { weight: 6, arbitrary: fc.constant<'body'>('body') },
      { weight: 3, arbitrary: fc.constant<'query'>('query') },
      { weight: 2, arbitrary: fc.constant<'path'>('path') },
      { weight: 2, arbitrary: fc.constant<'headers'>('headers') },
    ),
    kind: fc.nat(),
    pick: fc.nat(),
    pick2: fc.nat(),
    nasty: nastyString,
    json: fc.jsonValue({ maxDepth: 3 }),
    depth: fc.constantFrom(31, 33, 40, 200, 5_000),
  })
  .map((p) => {
    const kinds: readonly string[] =
      p.part === 'body' ? BODY_KINDS : p.part === 'query' ? QUERY_KINDS : p.part === 'path' ? PATH_KINDS : HEADER_KINDS;
    return { ...p, kind: p.part === 'none' ? 'none' : (kinds[p.kind % kinds.length] as string) };
  });

type Entry = { path: Array<string | number>; value: unknown; schema: Schema | undefined };

/** Every value inside a body with its path and (where known) its schema. */
function entries(value: unknown, schema: Schema | undefined, path: Array<string | number> = [], out: Entry[] = []): Entry[] {
  if (path.length) out.push({ path, value, schema });
  if (Array.isArray(value)) {
    value.forEach((v, i) => {
      entries(v, schema?.items, [...path, i], out);
    });
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) entries(v, schema?.properties?.[k], [...path, k], out);
  }
  return out;
}

function setAt(root: unknown, path: Array<string | number>, value: unknown, remove = false): void {
  let node = root as Record<string | number, unknown>;
  for (const part of path.slice(0, -1)) node = node[part] as Record<string | number, unknown>;
  const last = path[path.length - 1] as string | number;
  if (remove) delete node[last];
  else node[last] = value;
}

/** Every (object path, required key) pair in a body, from its schema. */
function requiredPaths(
  value: unknown,
  schema: Schema | undefined,
  path: Array<string | number> = [],
): Array<Array<string | number>> {
  const out: Array<Array<string | number>> = [];
  if (!schema || value === null || typeof value !== 'object') return out;
  if (Array.isArray(value)) {
    value.forEach((v, i) => {
      out.push(...requiredPaths(v, schema.items, [...path, i]));
    });
    return out;
  }
  for (const key of (schema.required ?? []) as string[]) if (key in value) out.push([...path, key]);
  for (const [k, v] of Object.entries(value)) out.push(...requiredPaths(v, schema.properties?.[k], [...path, k]));
  return out;
}

/** Object paths inside a body (root included), to add unknown keys to. */
function objectPaths(value: unknown, path: Array<string | number> = []): Array<Array<string | number>> {
  if (value === null || typeof value !== 'object') return [];
  const out = Array.isArray(value) ? [] : [path];
  for (const [k, v] of Object.entries(value)) out.push(...objectPaths(v, [...path, Array.isArray(value) ? Number(k) : k]));
  return out;
}

function decodeURIComponentSafe(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

const DEEP = '\u0001fuzz-deep\u0001';

const pick = <T>(items: readonly T[], n: number): T | undefined => (items.length ? items[n % items.length] : undefined);

function queryString(pairs: Array<[string, string]>): string {
  return pairs.map(([k, v]) => `${k}=${v}`).join('&');
}

/** The arbitrary of requests for one operation: a valid request, then at most one part of it broken. */
export function requestsFor(op: Operation, world: World): fc.Arbitrary<FuzzCase> {
  const hints = hintsFor(world, op);
  const queryParams = op.parameters.filter((p) => p.in === 'query');
  const queryModel: Record<string, fc.Arbitrary<unknown>> = {};
  for (const p of queryParams) {
    const fromSchema = arbitraryFor(p.schema, hints);
    const hint = hints[p.name];
    // Optional parameters are left out half the time, as clients do.
    const value = hint ? fc.oneof({ weight: 4, arbitrary: hint }, { weight: 1, arbitrary: fromSchema }) : fromSchema;
    queryModel[p.name] = p.required ? value : fc.option(value, { nil: undefined, freq: 2 });
  }
  const ids = pathIds(world, op);
  const body = op.body ? arbitraryFor(op.body.schema, hints) : fc.constant(undefined);
  return fc
    .record({
      query: fc.record(queryModel),
      pathId: fc.constantFrom(...ids.own),
      body,
      auth: fc.oneof(...AUTH),
      junk: fc.oneof(fc.constantFrom(`wt_live_${'x'.repeat(40)}`, 'wt_test_', ''), headerText),
      idempotencyKey: fc.option(IDEMPOTENCY_KEYS, { freq: 5, nil: undefined }),
      contentType: fc.constantFrom(...CONTENT_TYPES),
      accept: fc.option(fc.constantFrom(...ACCEPTS), { freq: 4, nil: undefined }),
      plan: planArb,
    })
    .map((g) => build(op, world, ids, g));
}

function build(
  op: Operation,
  world: World,
  ids: { own: string[]; foreign: string },
  g: {
    query: Record<string, unknown>;
    pathId: string;
    body: unknown;
    auth: AuthKind;
    junk: string;
    idempotencyKey: string | undefined;
    contentType: string;
    accept: string | undefined;
    plan: Plan;
  },
): FuzzCase {
  const { plan } = g;
  const mutations: string[] = [];
  let schemaValid = true;
  let foreignId = false;
  let missingId = false;

  // --- path
  let pathId = percentEncode(g.pathId);
  if (plan.part === 'path' && op.path.includes('{')) {
    mutations.push(`path:${plan.kind}`);
    schemaValid = false;
    switch (plan.kind) {
      case 'missing':
        pathId = `${g.pathId.split('_')[0]}_01zzzzzzzzzzzzzzzzzzzzzzzz`;
        missingId = true;
        schemaValid = true;
        break;
      case 'foreign':
        pathId = ids.foreign;
        schemaValid = true;
        break;
      case 'nasty':
        // Not empty: `/v1/stores/` is another route (the list), by the trailing-slash rule.
        pathId = percentEncode(plan.nasty) || '%00';
        break;
      case 'long':
        pathId = 'a'.repeat(pick([65, 101, 1_000, 10_000], plan.pick) as number);
        break;
      case 'badEncoding':
        pathId = pick(['%FF', '%', '%E0%A4', '%ED%A0%80', '%C0%AF', 'a%2'], plan.pick) as string;
        break;
      default:
        // No dot segments: URL parsing (light-my-request's, and most clients') resolves them to another route.
        pathId = pick(['a%2Fb', '%2E%2Ex', 'x.', 'a%00b', '%20', 'a;b', 'a%23b', 'a%3Fb'], plan.pick) as string;
    }
  }
  // The id is what is fuzzed; a path's other parameter (a destination's `{kind}`) takes a value
  // the document allows, so the request reaches the id's checks.
  const allowed = (name: string) => {
    const schema = op.parameters.find((p) => p.in === 'path' && p.name === name)?.schema as { enum?: unknown[] } | undefined;
    return name !== 'id' && Array.isArray(schema?.enum) && schema.enum.length > 0 ? String(schema.enum[0]) : undefined;
  };
  const path = op.path.replace(/\{([^}]+)\}/g, (_, name: string) => allowed(name) ?? pathId);

  // --- query
  const pairs: Array<[string, string]> = [];
  const typedQuery: Record<string, unknown> = {};
  for (const p of op.parameters.filter((q) => q.in === 'query')) {
    const v = g.query[p.name];
    if (v === undefined) continue;
    typedQuery[p.name] = v;
    pairs.push([p.name, percentEncode(String(v))]);
  }
  if (plan.part === 'query') {
    mutations.push(`query:${plan.kind}`);
    const names = op.parameters.filter((q) => q.in === 'query');
    const target = pick(names, plan.pick);
    const at = pairs.findIndex(([k]) => k === target?.name);
    schemaValid = false;
    switch (plan.kind) {
      case 'dropRequired': {
        const required = names.filter((q) => q.required);
        const drop = pick(required, plan.pick)?.name;
        const index = pairs.findIndex(([k]) => k === drop);
        if (index >= 0) pairs.splice(index, 1);
        break;
      }
      case 'unknown':
        pairs.push([pick(['foo', 'storeid', 'limit ', '__proto__', 'constructor', 'a.b', 'x[]'], plan.pick2) as string, 'x']);
        break;
      case 'nasty':
        if (target) pairs.push([target.name, percentEncode(plan.nasty)]);
        if (at >= 0) pairs.splice(at, 1);
        break;
      case 'boundary':
        if (target) {
          if (at >= 0) pairs.splice(at, 1);
          pairs.push([target.name, percentEncode(String(pick(outOfBounds(target.schema), plan.pick2)))]);
        }
        break;
      case 'duplicate':
        if (target) pairs.push([target.name, pairs[at]?.[1] ?? '1'], [target.name, percentEncode(plan.nasty)]);
        break;
      case 'empty':
        if (target) {
          if (at >= 0) pairs.splice(at, 1);
          pairs.push([target.name, '']);
        }
        break;
      case 'raw':
        pairs.push([
          target?.name ?? 'x',
          pick(['%', '%ZZ', 'a b', '#frag', '&&', '==', '%00', '\u00e9', ';'], plan.pick2) as string,
        ]);
        break;
      case 'bracket':
        pairs.push([`${target?.name ?? 'x'}[]`, '1'], [`${target?.name ?? 'x'}[a]`, '2']);
        break;
      default:
        if (target && at >= 0) pairs[at] = [target.name.toUpperCase(), pairs[at]?.[1] ?? ''];
    }
  }
  const qs = queryString(pairs);
  const url = qs ? `${path}?${qs}` : path;

  // --- body
  const headers: Record<string, string> = {};
  let payload: string | undefined;
  let value = g.body === undefined ? undefined : structuredClone(g.body);
  if (op.body && value !== undefined && !op.body.validate(value)) schemaValid = false;
  if (op.body) {
    headers['content-type'] = 'application/json';
    if (plan.part === 'body') {
      mutations.push(`body:${plan.kind}`);
      schemaValid = false;
      const all = entries(value, op.body.schema);
      const target = pick(all, plan.pick);
      switch (plan.kind) {
        case 'dropRequired': {
          const target = pick(requiredPaths(value, op.body.schema), plan.pick);
          if (target) setAt(value, target, undefined, true);
          break;
        }
        case 'addUnknown':
        case 'addUnknownNested': {
          const at = plan.kind === 'addUnknown' ? [] : (pick(objectPaths(value), plan.pick) ?? []);
          const key = pick(
            ['unknownField', 'storeid', 'STOREID', '', ' ', '\u0000', 'a'.repeat(300), plan.nasty],
            plan.pick2,
          ) as string;
          setAt(value, [...at, key], plan.json);
          break;
        }
        case 'wrongType':
          if (target) setAt(value, target.path, pick(otherTypes(target.value), plan.pick2));
          break;
        case 'nasty':
          if (target) setAt(value, target.path, plan.nasty);
          break;
        case 'boundary':
          if (target) setAt(value, target.path, pick(outOfBounds(target.schema ?? {}), plan.pick2));
          break;
        case 'null':
          if (target) setAt(value, target.path, null);
          break;
        case 'emptyString':
          if (target) setAt(value, target.path, '');
          break;
        case 'deep':
          // Written as text: JSON.stringify itself overflows the stack on thousands of levels.
          setAt(value, target?.path ?? ['deep'], DEEP);
          break;
        case 'rootType':
          value = pick([[], [value], 'x', 42, true, null], plan.pick2);
          break;
        case 'protoKey':
          payload = withDuplicateKey(value as Record<string, unknown>, pick(['__proto__', 'constructor'], plan.pick2) as string, {
            polluted: true,
            prototype: { polluted: true },
          });
          break;
        default:
          break;
      }
      if (plan.kind === 'duplicateKey') {
        const key = pick(Object.keys(value as object), plan.pick2) ?? 'storeId';
        payload = withDuplicateKey(value as Record<string, unknown>, key, plan.pick % 2 ? plan.nasty : plan.json);
      } else if (plan.kind === 'broken') {
        payload = pick(brokenJson(JSON.stringify(value)), plan.pick2);
      } else if (plan.kind === 'huge') {
        payload = JSON.stringify({ ...(value as object), padding: 'x'.repeat(1024 * 1024 + (plan.pick % 3) - 1) });
      } else if (plan.kind === 'noBody') {
        payload = undefined;
        if (plan.pick % 2) delete headers['content-type'];
      } else if (payload === undefined) payload = JSON.stringify(value);
      if (plan.kind === 'deep' && payload)
        payload = payload.replace(JSON.stringify(DEEP), nestedText(plan.json, plan.depth, plan.pick2 % 2 === 0));
    } else payload = JSON.stringify(value);
  }

  // --- headers
  const authorization = authHeader(world, g.auth, g.junk);
  if (authorization !== undefined) headers.authorization = authorization;
  if (g.accept !== undefined) headers.accept = g.accept;
  if (g.idempotencyKey !== undefined && (op.method === 'POST' || op.method === 'PATCH')) {
    headers['idempotency-key'] = g.idempotencyKey;
    mutations.push('idempotency-key');
  }
  if (plan.part === 'headers') {
    mutations.push(`headers:${plan.kind}`);
    switch (plan.kind) {
      case 'contentType':
        headers['content-type'] = g.contentType;
        break;
      case 'noContentType':
        delete headers['content-type'];
        break;
      case 'contentEncoding':
        headers['content-encoding'] = pick(['gzip', 'br', 'identity', 'GZIP', 'x', ''], plan.pick) as string;
        break;
      case 'hugeHeader':
        headers['x-fuzz'] = 'h'.repeat(pick([8_000, 17_000, 100_000], plan.pick) as number);
        break;
      case 'accept':
        headers.accept = pick(ACCEPTS, plan.pick) as string;
        break;
      default:
        headers['x-forwarded-proto'] = 'http';
    }
    // Accept, x-fuzz, identity encoding and forwarded headers (TRUST_PROXY is off) change nothing that matters.
    if (!['accept', 'hugeHeader', 'forwardedProto'].includes(plan.kind)) schemaValid = false;
    if (plan.kind === 'contentEncoding' && headers['content-encoding'] === 'identity') schemaValid = true;
    if (plan.kind === 'contentType' && /^application\/json(;\s*charset="?utf-8"?)?$/i.test(g.contentType)) schemaValid = true;
    if (!op.body && (plan.kind === 'contentType' || plan.kind === 'noContentType')) schemaValid = true;
  }
  if (mutations.length === 0) mutations.push('none');

  // Query values generated from the schema are valid by construction; hints may not be (a cursor not yet seen).
  for (const p of op.parameters.filter((q) => q.in === 'query')) {
    if (p.required && typedQuery[p.name] === undefined) schemaValid = false;
  }
  // Tenancy: an id of the other account than the key's must never be served.
  const named = [typedQuery.storeId, (value as { storeId?: unknown } | undefined)?.storeId];
  if (op.path.includes('{')) named.push(decodeURIComponentSafe(pathId));
  const accountB = [world.otherAccountStoreId, world.otherAccountClickId, world.otherAccountConversionId];
  const accountA = [world.storeId, ...world.patchStoreIds, world.inactiveStoreId, world.clickId, world.conversionId];
  const foreign = g.auth === 'otherAccount' ? accountA : accountB;
  foreignId = named.some((id) => typeof id === 'string' && foreign.includes(id));
  const wellFormed =
    schemaValid &&
    g.auth === 'live' &&
    !foreignId &&
    (g.idempotencyKey === undefined || !['POST', 'PATCH'].includes(op.method)) &&
    usesOwnIds(op, typedQuery, value, world);
  // Only the id is wrong (of the right shape, of nothing): the answer must be 404.
  const expectNotFound = wellFormed && missingId;
  const expectAccepted = wellFormed && !missingId;
  const c: FuzzCase = {
    method: op.method,
    url,
    headers,
    payload,
    auth: g.auth,
    mutations,
    expectAccepted,
    expectNotFound,
    foreignId,
  };
  // fast-check prints counterexamples with this: the request as sent, huge values cut short.
  Object.defineProperty(c, fc.toStringMethod, { value: () => `\n${describeCase(c)}`, enumerable: false });
  return c;
}

/** Every store id the request names is one of the account's active stores (else 404 is the right answer). */
function usesOwnIds(op: Operation, query: Record<string, unknown>, body: unknown, world: World): boolean {
  const own = new Set([world.storeId, ...world.patchStoreIds]);
  if ('storeId' in query && !own.has(String(query.storeId))) return false;
  if (query.cursor !== undefined) return false;
  const storeId = (body as { storeId?: unknown } | undefined)?.storeId;
  if (op.body && body && typeof body === 'object' && 'storeId' in body && !own.has(String(storeId))) return false;
  if (
    (body as { clickId?: unknown } | undefined)?.clickId !== undefined &&
    (body as { clickId?: unknown }).clickId !== world.clickId
  ) {
    return false;
  }
  return true;
}

const show = (value: string | undefined): string => {
  if (value === undefined) return '(none)';
  const escaped = JSON.stringify(value);
  return escaped.length > 2_000 ? `${escaped.slice(0, 2_000)}… (${value.length} characters in all)` : escaped;
};

/** The request, written out so it can be replayed by hand. */
export function describeCase(c: FuzzCase): string {
  const headers = Object.entries(c.headers)
    .map(([k, v]) => `    ${k}: ${show(v)}`)
    .join('\n');
  return [
    `  ${c.method} ${show(c.url)}`,
    `  auth: ${c.auth}; mutations: ${c.mutations.join(', ')}; expectAccepted: ${c.expectAccepted}`,
    '  headers:',
    headers,
    `  body: ${show(c.payload)}`,
  ].join('\n');
}
