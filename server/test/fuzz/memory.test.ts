import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { HEAP_POLICY, leakVerdict, MemoryWatch } from './memory.js';

// The fuzzer's leak check must be able to fail: shown here on an app that keeps every request.

describe('the fuzzer memory check', () => {
  it('passes steady memory and fails steady growth', () => {
    const mb = 1024 * 1024;
    const steady = Array.from({ length: 12 }, (_, i) => ({ requests: i * 200, bytes: 80 * mb + (i % 3) * 2 * mb }));
    expect(leakVerdict(steady, HEAP_POLICY)).toBeUndefined();
    const leaking = Array.from({ length: 12 }, (_, i) => ({ requests: i * 200, bytes: 80 * mb + i * 8 * mb }));
    expect(leakVerdict(leaking, HEAP_POLICY)).toMatch(/memory grew/);
  });

  it('catches a server that keeps something of every request', async () => {
    const kept: unknown[] = [];
    const app = Fastify();
    app.addHook('onRequest', async () => {
      // 256 KiB per request, never released: a body-sized Buffer and a string on the heap.
      kept.push({ body: Buffer.alloc(192 * 1024, 1), text: `${'x'.repeat(64 * 1024)}${kept.length}` });
    });
    app.get('/x', async () => ({ ok: true }));
    await app.ready();
    const watch = new MemoryWatch({ ...HEAP_POLICY, warmup: 1 });
    let sent = 0;
    for (let batch = 0; batch < 5; batch++) {
      for (let i = 0; i < 100; i++, sent++) await app.inject({ method: 'GET', url: '/x' });
      watch.sample(sent);
    }
    await app.close();
    expect(watch.verdict(), `${watch.measure}: the leak went unnoticed`).toMatch(/memory grew/);
    kept.length = 0;
  });
});
