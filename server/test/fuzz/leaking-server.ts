import Fastify from 'fastify';
import { HEAP_POLICY, MemoryWatch } from './memory.js';

/**
 * Run as a process of its own by memory.test.ts (node --import tsx): a server that keeps 256 KiB
 * of every request, watched by the fuzzer's memory check; prints what the check measured and
 * its verdict as one JSON line. In a fresh process the check's full GCs walk this server's heap
 * only: in a test worker they walked everything the earlier test files left (isolate: false),
 * seconds each on a busy machine.
 */
const kept: unknown[] = [];
const app = Fastify();
app.addHook('onRequest', async () => {
  // A body-sized Buffer and a string on the heap, never released.
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
console.log(JSON.stringify({ measure: watch.measure, verdict: watch.verdict() ?? null, kept: kept.length }));
