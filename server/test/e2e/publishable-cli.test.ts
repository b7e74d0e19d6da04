import https from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, databaseForProcesses, request, type ServerProcess, serve } from './process.js';

describe('waytrack keys create --publishable (end to end)', () => {
  const testDb = databaseForProcesses('waytrack-pk-cli-');
  let server: ServerProcess;
  let accountId: string;
  let liveKey: string;
  let storeId: string;

  beforeAll(async () => {
    server = await serve(testDb.env);
    const account = JSON.parse(cli(['account', 'create', '--email', 'pk@example.com', '--json'], testDb.env).stdout);
    accountId = account.accountId;
    liveKey = account.keys.live;
    const store = await request(server, 'POST', '/v1/stores', {
      key: liveKey,
      body: { name: 'CLI Shop', domain: 'shop.example', platform: 'custom' },
    });
    expect(store.status).toBe(201);
    storeId = store.body.data.id;
  }, 120_000);

  afterAll(async () => {
    await server?.stop('SIGKILL');
  });

  /** POST /v1/track/click as a page at `origin` would send it. */
  function clickFrom(origin: string, key: string) {
    const body = JSON.stringify({
      fbclid: `cli-${Date.now()}-${Math.random().toString(36).slice(2)}`,
      landingPage: `${origin}/p`,
    });
    return new Promise<{ status: number; reason?: string }>((resolve, reject) => {
      const req = https.request(
        new URL('/v1/track/click', server.url),
        {
          method: 'POST',
          ca: server.ca,
          servername: 'localhost',
          headers: { authorization: `Bearer ${key}`, origin, 'content-type': 'application/json' },
        },
        (res) => {
          let data = '';
          res.on('data', (chunk) => {
            data += chunk;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, reason: JSON.parse(data).error?.details?.reason }));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  it('--json prints exactly {"keyId","key","mode","scopes","storeId","origins"}, live by default', async () => {
    const result = cli(
      [
        'keys',
        'create',
        '--publishable',
        '--store',
        storeId,
        '--origins',
        'https://Partner.example/, http://localhost:5173',
        '--json',
      ],
      testDb.env,
    );
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const key = JSON.parse(lines[0] as string);
    expect(Object.keys(key)).toEqual(['keyId', 'key', 'mode', 'scopes', 'storeId', 'origins']);
    expect(key).toMatchObject({
      mode: 'live',
      scopes: ['clicks:write'],
      storeId,
      origins: ['https://partner.example', 'http://localhost:5173'],
    });
    expect(key.keyId).toMatch(/^key_[0-9a-z]{26}$/);
    expect(key.key).toMatch(/^wt_pk_live_[0-9A-Za-z]{32,}$/);

    // The running server takes it from the store's pages and the extra origins, from nowhere else.
    expect(await clickFrom('https://shop.example', key.key)).toEqual({ status: 200 });
    expect(await clickFrom('https://www.shop.example', key.key)).toEqual({ status: 200 });
    expect(await clickFrom('https://partner.example', key.key)).toEqual({ status: 200 });
    expect(await clickFrom('https://evil.example', key.key)).toEqual({ status: 403, reason: 'origin_not_allowed' });
    const stores = await request(server, 'GET', '/v1/stores', { key: key.key });
    expect(stores.status).toBe(403);
    expect(stores.body.error.details).toEqual({ reason: 'publishable_key_not_allowed' });
  });

  it('--mode test makes a test key; keys list shows it as publishable, bound to the store', () => {
    const result = cli(['keys', 'create', '--publishable', '--store', storeId, '--mode', 'test', '--json'], testDb.env);
    expect(result.status).toBe(0);
    const key = JSON.parse(result.stdout);
    expect(key.key).toMatch(/^wt_pk_test_/);
    expect(key.origins).toEqual([]);
    const list = JSON.parse(cli(['keys', 'list', '--account', accountId, '--json'], testDb.env).stdout);
    expect(list.find((k: { keyId: string }) => k.keyId === key.keyId)).toMatchObject({
      kind: 'publishable',
      mode: 'test',
      storeId,
      scopes: ['clicks:write'],
    });
  });

  it('without --json: the key and the snippet to paste', () => {
    const result = cli(['keys', 'create', '--publishable', '--store', storeId], testDb.env);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/Publishable key key_\w+ \(live, store st_\w+\): wt_pk_live_\w+/);
    expect(result.stdout).toContain('<script async src="https://WAYTRACK_HOST/tag.js" data-key="wt_pk_live_');
  });

  it.each([
    ['an unknown store', ['--store', 'st_unknown'], /no store st_unknown/],
    ["another account's store named with --account", ['--store', 'STORE', '--account', 'acct_other'], /no store/],
    ['an http origin', ['--store', 'STORE', '--origins', 'http://partner.example'], /must use https/],
    ['an origin with a path', ['--store', 'STORE', '--origins', 'https://partner.example/shop'], /not an origin/],
    ['a bad mode', ['--store', 'STORE', '--mode', 'prod'], /--mode must be live or test/],
    ['scopes', ['--store', 'STORE', '--scopes', 'stores:read'], /clicks:write scope only/],
    ['no store', [], /--store is required/],
  ])('refuses %s: non-zero exit, a clear message, no key printed', (_name, args, message) => {
    const result = cli(['keys', 'create', '--publishable', ...args.map((a) => (a === 'STORE' ? storeId : a))], testDb.env);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(message);
    expect(result.stdout).not.toContain('wt_pk_');
  });

  it('--store and --origins without --publishable are a usage error', () => {
    const result = cli(['keys', 'create', '--account', accountId, '--mode', 'live', '--store', storeId], testDb.env);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain('--store and --origins need --publishable');
  });
});
