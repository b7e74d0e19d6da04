import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attributedClickOf } from '../../src/db/repositories/clicks.js';
import { call, clickBody, conversionBody, createTestContext, makeStore, type TestContext } from '../helpers.js';

// Recording a conversion, Meta's event, the other destinations' routing and match quality all use
// its attributed click: `attributedClickOf` reads it once for all of them.

let ctx: TestContext;
let storeId: string;
beforeAll(async () => {
  ctx = await createTestContext();
  storeId = await makeStore(ctx.app, ctx.a.live);
});
afterAll(async () => ctx.close());

async function recorded(body: Record<string, unknown>) {
  const res = await call(ctx.app, 'POST', '/v1/track/conversion', { key: ctx.a.live, body: conversionBody(storeId, body) });
  expect(res.status).toBe(200);
  const id = (res.body.data as { conversionId: string }).conversionId;
  return ctx.database.read.selectFrom('conversions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

describe('attributedClickOf', () => {
  it('reads the attributed click once, whoever asks and however often', async () => {
    const click = await call(ctx.app, 'POST', '/v1/track/click', {
      key: ctx.a.live,
      body: clickBody(storeId, { fbclid: 'IwAR-once' }),
    });
    const row = await recorded({ orderId: 'once-1', fbclid: 'IwAR-once' });
    expect(row.attributed_click_id).toBe((click.body.data as { clickId: string }).clickId);
    const attributedClick = attributedClickOf(ctx.database.read, row);
    const first = attributedClick();
    expect(attributedClick()).toBe(first);
    expect((await first)?.id).toBe(row.attributed_click_id);
    expect((await first)?.fbclid).toBe('IwAR-once');
  });

  it('answers no click for a conversion nothing attributed', async () => {
    const row = await recorded({ orderId: 'once-2' });
    expect(row.attributed_click_id).toBeNull();
    const attributedClick = attributedClickOf(ctx.database.read, row);
    expect(attributedClick()).toBe(attributedClick());
    expect(await attributedClick()).toBeUndefined();
  });
});
