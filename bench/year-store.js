// A year's bench store (bench/year.js; issue 40 point 9, issue 41 point 1): `clicks` clicks and a
// tenth as many conversions over the last 365 days, written through the engine's bulk path
// (bench/bulk-load.js) as the service would have written them, event by event:
//   - clicks of Meta (fbclid), Google Ads (gclid, gbraid, wbraid), TikTok (ttclid) and Microsoft
//     (msclkid), each id in its own column and, but the fbclid, a `click_ids` row; 90 % carry
//     their campaign id (the channel report's `channel_campaign` dimension); 2 % bots; consent mixes;
//   - 200 campaigns of Meta, Google Ads and TikTok with spend every day (`ad_spend`, source sync);
//   - conversions (80 % Purchase), 60 % attributed with 1–3 touchpoints, the credited click's ids
//     (`attributed_click_ids`), email hashes from a pool so customers buy again (`customer_key`,
//     and `customers`: each customer's first conversion by event time and its channel), 2 % in
//     EUR with the converted value, match quality per destination;
//   - each conversion's destination jobs: Meta's for all (sent, failed, skipped, pending), Google
//     Ads' for those credited to a click with a Google id, TikTok's for a ttclid (the
//     `forwarding` entries to match); pending jobs are never due (the bench's server sends nothing);
//   - refunds of 5 % of Purchases (partial or whole), `refunded_minor` to match;
//   - every event and refund queued for the rollups (folded on the server's first read), the
//     ambiguity rows written with the clicks, the Google Ads destination failing (tracking health).
import { createHash } from 'node:crypto';
import { postgresSink, SPEND_MONTHS, sqliteSink } from './bulk-load.js';
import { source } from './lib.js';
import {
  CHANNEL_WEIGHTS,
  CHANNELS,
  CONSENT_WEIGHTS,
  CONSENTS,
  campaignId,
  clickIdValue,
  clickKey,
  DAY_MS,
  idOf,
  matchQuality,
  pickIndex,
  rng,
  YEAR_TABLES,
} from './year-shape.js';

const DAYS = 365;
const PAGES = Array.from({ length: 20 }, (_, i) => `https://year.example.com/products/item-${i}`);
const AGENT = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148';
const BOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
const sha = (text) => createHash('sha256').update(text).digest('hex');

/** Rows the service derives after the load: the rollup queue, the spend months (and PostgreSQL's key tables). */
const AFTER = [
  `insert into rollup_queue (id, store_id, kind, version)
    select id, store_id, 'click', 0 from clicks union all select id, store_id, 'conversion', 0 from conversions
    union all select id, store_id, 'refund', 0 from refunds`,
  SPEND_MONTHS,
];

export async function generateYear(target, { clicks }) {
  const conversions = Math.floor(clicks / 10);
  const { openDatabase } = await source('db/open.ts');
  const { createAccount } = await source('accounts/accounts.ts');
  const { createStore } = await source('stores/stores.ts');
  const { ambiguityRows } = await source('ambiguity-keys.ts');
  const now = Date.now();
  const start = now - DAYS * DAY_MS + 3_600_000;
  let database = openDatabase({ databaseUrl: target.database?.url, dataDir: target.dataDir });
  await database.migrate();
  if (target.database) {
    // The year's monthly partitions (the service creates this month's and the next ones').
    const { createPartitions } = await source('db/postgres/partitions.ts');
    await database.write((trx) => createPartitions(trx, start - DAY_MS, now));
  }
  const account = await createAccount(database, { email: 'year@example.com' });
  const tenant = { accountId: account.accountId, livemode: true };
  const store = await createStore(database, tenant, {
    name: 'A year',
    domain: 'year.example.com',
    platform: 'custom',
    timezone: 'America/New_York',
    currency: 'USD',
  });
  await database.close();
  const accountId = tenant.accountId;
  const storeId = store.id;

  const sink = target.database
    ? await postgresSink(target.database, { tables: YEAR_TABLES, after: AFTER })
    : sqliteSink(target.dataDir, { tables: YEAR_TABLES, after: AFTER });
  const add = async (table, values) => {
    const flushing = sink.add(table, values);
    if (flushing) await flushing;
  };
  const random = rng(clicks + 365);

  // Clicks, in time order. Kept per click: time, channel, kind, campaign (-1: untagged), bot.
  const times = new Float64Array(clicks);
  for (let i = 0; i < clicks; i++) times[i] = start + Math.floor(random() * (now - start - 60_000));
  times.sort();
  const channelOf = new Uint8Array(clicks);
  const kindOf = new Uint8Array(clicks);
  const campaignOf = new Int16Array(clicks);
  const bots = new Uint8Array(clicks);
  const kindIndex = new Map(YEAR_TABLES.clicks.map((c, i) => [c, i]));
  const clickId = (i) => idOf('clk', times[i], i);
  for (let i = 0; i < clicks; i++) {
    const time = times[i];
    const c = CHANNELS[pickIndex(random, CHANNEL_WEIGHTS)];
    const [kind] = c.kinds[pickIndex(random, c.kindWeights)];
    const tagged = random() < 0.9;
    const campaign = tagged ? pickIndex(random, c.campaignWeights) : -1;
    const bot = random() < 0.02;
    channelOf[i] = c.index;
    kindOf[i] = c.kinds.findIndex(([k]) => k === kind);
    campaignOf[i] = campaign;
    bots[i] = bot ? 1 : 0;
    const value = clickIdValue(kind, i);
    const ip = `10.${(i >>> 16) & 255}.${(i >>> 8) & 255}.${i & 255}`;
    const ua = bot ? BOT : AGENT;
    const cid = tagged ? campaignId(c.index, campaign) : null;
    const params = new URLSearchParams(
      tagged
        ? { utm_source: c.source, utm_medium: c.medium, utm_campaign: `campaign_${campaign}`, campaign_id: cid, [kind]: value }
        : { [kind]: value },
    );
    const row = [
      clickId(i),
      accountId,
      storeId,
      1,
      clickKey(kind, value),
      time,
      time,
      `${PAGES[i % PAGES.length]}?${params}`,
      null,
      ip,
      ua,
      sha(`fp${i % 500_000}`).slice(0, 16),
      sha(`${ip}|${ua}`),
      null,
      kind === 'fbclid' ? `fb.1.${time}.${value}` : '',
      tagged ? c.source : null,
      tagged ? c.medium : null,
      tagged ? `campaign_${campaign}` : null,
      null,
      null,
      cid,
      null,
      null,
      bot ? 1 : 0,
      null,
      null,
      null,
      null,
      null,
      CONSENTS[pickIndex(random, CONSENT_WEIGHTS)][0],
    ];
    if (kind !== 'fbclid') {
      row[kindIndex.get(kind)] = value;
      await add('click_ids', [storeId, 1, kind, value, row[0], time]);
    }
    await add('clicks', row);
    // The ambiguity counts' rows (api.md §13) the server writes with each click. A bench click has
    // no browser id, so each is a browser of its own and no row repeats (a repeat would fail the load).
    const click = { id: row[0], store_id: storeId, livemode: 1, click_time: time, is_bot: bots[i] };
    const keys = ambiguityRows({ ...click, ip_address: ip, user_agent: ua, fingerprint: row[11], fbp: null });
    for (const r of keys) await add('attribution_keys', [r.day, r.k, r.browser]);
  }

  // Conversions, in event-time order.
  const events = [];
  for (let n = 0; n < conversions; n++) {
    const attributed = random() < 0.6;
    let index = Math.floor(random() * clicks);
    while (bots[index]) index = (index + 1) % clicks;
    const time = attributed
      ? Math.min(now - 60_000, times[index] + Math.floor(random() * 3 * DAY_MS))
      : start + Math.floor(random() * (now - start - 60_000));
    events.push({ attributed, index, time });
  }
  events.sort((a, b) => a.time - b.time);
  const pool = Math.floor(conversions * 0.55); // buyers: some buy again
  const seen = new Uint8Array(pool + 1);
  let refunds = 0;
  let customers = 0;
  for (let n = 0; n < events.length; n++) {
    const e = events[n];
    const click = e.index;
    const c = CHANNELS[channelOf[click]];
    const kind = c.kinds[kindOf[click]][0];
    const value = clickIdValue(kind, click);
    const eventType = ['Purchase', 'Lead', 'AddToCart'][pickIndex(random, [80, 95, 100])];
    const eur = random() < 0.02;
    const valueMinor = eventType === 'Purchase' ? 500 + Math.floor(random() * 30_000) : 0;
    const id = idOf('conv', e.time, n);
    const buyer = random() < 0.92 ? Math.floor(random() * pool) : -1;
    const emailHash = buyer >= 0 ? sha(`buyer${buyer}@example.com`) : null;
    const phoneHash = buyer < 0 && random() < 0.5 ? sha(`+1555${n}`) : null;
    const customerKey = emailHash ? `em:${emailHash}` : phoneHash ? `ph:${phoneHash}` : null;
    const ids = e.attributed ? { [kind]: value } : null;
    const age = now - e.time;
    // Meta's job: older ones delivered or failed; the last two days hold some pending ones.
    const roll = random();
    const metaStatus = roll < 0.04 ? 'failed' : age < 2 * DAY_MS && roll < 0.07 ? 'pending' : 'sent';
    const jobs = [['meta', metaStatus]];
    const forwarding = {};
    if (e.attributed && c.channel === 'google_ads') jobs.push(['google_ads', random() < 0.1 ? 'failed' : 'sent']);
    if (e.attributed && c.channel === 'tiktok') jobs.push(['tiktok', random() < 0.05 ? 'skipped' : 'sent']);
    for (const [destination, status] of jobs.slice(1)) {
      forwarding[destination] = {
        status,
        attempts: status === 'skipped' ? 0 : 1,
        ...(status === 'failed' && { lastError: 'The platform answered 400: invalid click id' }),
        ...(status === 'sent' && { sentAt: new Date(e.time + 1000).toISOString() }),
        ...(status === 'skipped' && { reason: 'consent_denied' }),
      };
    }
    let refunded = 0;
    const refund = eventType === 'Purchase' && random() < 0.05;
    const refundTime = Math.min(now - 30_000, e.time + Math.floor(random() * 20 * DAY_MS));
    if (refund) refunded = random() < 0.5 ? valueMinor : Math.floor(valueMinor / 3);
    // in CONVERSION_COLUMNS order
    await add('conversions', [
      id,
      accountId,
      storeId,
      1,
      eventType,
      `order_${n}`,
      `order_${n}`,
      e.time,
      e.time,
      valueMinor,
      eur ? 'EUR' : 'USD',
      '[]',
      '{}',
      emailHash,
      phoneHash,
      `10.${(click >>> 16) & 255}.${(click >>> 8) & 255}.${click & 255}`,
      AGENT,
      null,
      null,
      e.attributed && kind === 'fbclid' ? value : null,
      null,
      null,
      null,
      e.attributed ? 1 : 0,
      e.attributed ? clickId(click) : null,
      e.attributed ? clickKey(kind, value) : null,
      e.attributed ? 100 : null,
      e.attributed ? 'explicit' : null,
      metaStatus,
      metaStatus === 'pending' ? 0 : 1,
      metaStatus === 'failed' ? 'Meta answered 400: Invalid parameter' : null,
      metaStatus === 'sent' ? e.time + 1000 : null,
      e.attributed && kind !== 'fbclid' ? JSON.stringify(ids) : null,
      Object.keys(forwarding).length > 0 ? JSON.stringify(forwarding) : null,
      refunded,
      CONSENTS[pickIndex(random, CONSENT_WEIGHTS)][0],
      eur ? 'USD' : null,
      eur ? new Date(e.time).toISOString().slice(0, 10) : null,
      eur ? '1.08' : null,
      eur ? Math.round(valueMinor * 1.08) : null,
      matchQuality(
        jobs.map(([d]) => [d, e.attributed]),
        { email: !!emailHash, phone: !!phoneHash },
      ),
      ids ? JSON.stringify(ids) : null,
      customerKey,
    ]);
    for (const [destination, status] of jobs) {
      const due = status === 'pending' ? now + 400 * DAY_MS : e.time + 1000; // pending: never due in a bench
      await add('destination_jobs', [
        id,
        destination,
        '',
        'conversion',
        accountId,
        storeId,
        1,
        destination === 'meta' ? 'bench-pixel:' : '',
        '{}',
        status,
        status === 'pending' || status === 'skipped' ? 0 : 1,
        due,
        status === 'pending' ? now + 400 * DAY_MS : e.time + 7 * DAY_MS,
        null,
        status === 'failed' ? 'The platform answered 400' : null,
        status === 'sent' ? `trace_${n}` : null,
        e.time,
        e.time + 1000,
        status === 'sent' ? e.time + 1000 : null,
      ]);
    }
    if (refund) {
      refunds++;
      await add('refunds', [
        idOf('rfd', refundTime, n),
        storeId,
        1,
        `re_${n}`,
        accountId,
        id,
        e.time,
        `order_${n}`,
        refunded,
        eur ? 'EUR' : 'USD',
        refunded,
        refundTime,
        refundTime,
        null,
      ]);
    }
    if (customerKey && (buyer < 0 || !seen[buyer])) {
      if (buyer >= 0) seen[buyer] = 1;
      customers++;
      await add('customers', [storeId, 1, customerKey, accountId, id, e.time, e.attributed ? c.channel : 'unattributed']);
    }
    if (!e.attributed) continue;
    await add('touchpoints', [id, clickId(click), 'explicit', 100, times[click]]);
    const extra = Math.floor(random() * 3); // up to two earlier clicks of the last week
    for (let k = 1; k <= extra; k++) {
      const other = click - k * 97;
      if (other < 0 || bots[other] || e.time - times[other] > 7 * DAY_MS) continue;
      await add('touchpoints', [id, clickId(other), 'ip', 60, times[other]]);
    }
  }

  // Spend of the 200 campaigns every day, more for the popular ones.
  let spendRows = 0;
  for (let d = 0; d <= DAYS; d++) {
    const date = new Date(now - d * DAY_MS).toISOString().slice(0, 10);
    for (const c of CHANNELS.filter((ch) => ch.spends)) {
      for (let i = 0; i < c.campaigns; i++) {
        spendRows++;
        await add('ad_spend', [
          idOf('spend', now, spendRows),
          accountId,
          storeId,
          1,
          date,
          c.channel,
          campaignId(c.index, i),
          `campaign_${i}`,
          2_000 + Math.floor(80_000 / (i + 1)),
          'USD',
          now,
          now,
          'sync',
        ]);
      }
    }
  }
  await sink.finish();

  database = openDatabase({ databaseUrl: target.database?.url, dataDir: target.dataDir });
  // The Google Ads destination failing, as destinations/health.ts records it (tracking health reports it).
  await database.write((trx) =>
    trx
      .insertInto('destination_health')
      .values([
        {
          store_id: storeId,
          kind: 'meta',
          account_id: accountId,
          status: 'ok',
          consecutive_failures: 0,
          last_success_at: now - 60_000,
          last_failure_at: null,
          last_error: null,
          failing_reason: null,
          failing_since: null,
          updated_at: now,
        },
        {
          store_id: storeId,
          kind: 'google_ads',
          account_id: accountId,
          status: 'failing',
          consecutive_failures: 12,
          last_success_at: now - 3 * DAY_MS,
          last_failure_at: now - 60_000,
          last_error: 'Google Ads answered 401: the refresh token was revoked',
          failing_reason: 'failures',
          failing_since: now - 2 * DAY_MS,
          updated_at: now,
        },
      ])
      .execute(),
  );
  await database.close();
  return {
    key: account.keys.live,
    accountId,
    storeId,
    builtAt: now,
    counts: { clicks, conversions, refunds, spendRows, customers },
  };
}
