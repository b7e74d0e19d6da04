import { rmSync } from 'node:fs';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../../src/accounts/accounts.js';
import { buildApp } from '../../../src/app.js';
import { loadConfig } from '../../../src/config.js';
import { LOG_REDACT } from '../../../src/observability.js';
import { openTestDatabase } from '../../engine.js';
import { call, conversionBody, makeStore, tempDir } from '../../helpers.js';
import { FakeGraph } from './fake-graph.js';
import { FAST, PIXEL, TOKEN } from './setup.js';

describe('Conversions API delivery logs', () => {
  let fake: FakeGraph;
  beforeAll(async () => {
    fake = await FakeGraph.start();
  });
  afterAll(async () => fake.close());

  async function deliverOne(level: 'debug' | 'info') {
    const lines: Array<Record<string, unknown>> = [];
    const stream = new Writable({
      write(chunk, _enc, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    });
    const dataDir = tempDir();
    const config = loadConfig({ DATA_DIR: dataDir, META_GRAPH_URL: fake.url, CAPI_SYNC_WAIT_MS: '2000' });
    const testDb = await openTestDatabase(dataDir);
    await testDb.database.migrate();
    const app = await buildApp({
      config,
      database: testDb.database,
      logger: { level, redact: LOG_REDACT, stream },
      forwarding: FAST,
    });
    try {
      const key = (await createAccount(testDb.database, { email: 'deliverylog@example.com' })).keys.live;
      const storeId = await makeStore(app, key, { pixelId: PIXEL, capiAccessToken: TOKEN });
      const res = await call(app, 'POST', '/v1/track/conversion', {
        key,
        body: conversionBody(storeId, { customerData: { email: 'Jane.Doe@Example.com' } }),
      });
      expect(res.body.data.capiSent).toBe(true);
      return { lines, storeId };
    } finally {
      await app.close();
      await testDb.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }

  it('a delivered batch is one debug line with its counts, never the token or customer data', async () => {
    const { lines, storeId } = await deliverOne('debug');
    const delivered = lines.filter((l) => l.msg === 'Conversions API batch delivered');
    expect(delivered).toHaveLength(1);
    expect(delivered[0]).toMatchObject({ level: 20, storeId, pixelId: PIXEL, mode: 'live', events: 1, recorded: 1, attempts: 1 });
    const text = JSON.stringify(lines);
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain('Jane.Doe@Example.com');
  });

  it('is not written at the default level', async () => {
    const { lines } = await deliverOne('info');
    expect(lines.filter((l) => l.msg === 'Conversions API batch delivered')).toEqual([]);
  });
});
