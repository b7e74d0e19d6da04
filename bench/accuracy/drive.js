// Plays generated traffic (generate.js) into a Waytrack server, in time order: clicks and identify
// calls between two orders go out together (a few in flight), each order only once every earlier one is stored
// (its candidates and the ambiguity counts must hold them), orders one after the other (an earlier
// order's identity links a later one). Then each order's explanation is read: its candidates as
// they were scored. `send(method, path, body)` resolves `{ status, body }` (HTTP or inject).

/** At most this many requests in flight. */
const PARALLEL = 16;

async function inParallel(items, work) {
  let next = 0;
  const run = async () => {
    while (next < items.length) {
      const i = next++;
      await work(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL, items.length) }, run));
}

function check(response, what) {
  if (response.status !== 200) throw new Error(`${what}: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.data;
}

/**
 * Sends every event; resolves `{ clickIds: Map<ref, clickId>, orders: [{ event, result, candidates }] }`.
 */
export async function playTraffic(traffic, send, storeId) {
  const clickIds = new Map();
  const orders = [];
  let clicks = [];
  const flush = async () => {
    await inParallel(clicks, async (e) => {
      if (e.kind === 'identify') {
        check(await send('POST', '/v1/track/identify', { storeId, ...e.body }), `identify of person ${e.person}`);
        return;
      }
      const data = check(await send('POST', '/v1/track/click', { storeId, ...e.body }), `click ${e.ref}`);
      clickIds.set(e.ref, data.clickId);
    });
    clicks = [];
  };
  for (const e of traffic.events) {
    if (e.kind === 'click' || e.kind === 'identify') {
      clicks.push(e);
      continue;
    }
    await flush();
    const result = check(await send('POST', '/v1/track/conversion', { storeId, ...e.body }), `order ${e.body.orderId}`);
    orders.push({ event: e, result });
  }
  await flush();
  await inParallel(orders, async (order) => {
    const data = check(await send('GET', `/v1/conversions/${order.result.conversionId}`), 'explanation');
    order.candidates = data.attribution.candidates;
  });
  return { clickIds, orders };
}
