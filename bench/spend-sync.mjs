// node --import tsx bench/spend-sync.mjs — the spend sync of a big account (api.md §11; issue 40
// point 9: "a sync of 200 campaigns × 30 days from the fakes completes in ≤ 5 s").
//
// Starts the real server (compiled, HTTPS) on a fresh database and the local report fakes of the
// tests (server/test/spend/fake-*.ts, speaking Meta's Insights API, Google Ads' searchStream with
// OAuth, TikTok's report/integrated/get, each paging as the platform does), each serving one
// account of BENCH_CAMPAIGNS campaigns (200) × BENCH_DAYS days (30) of spend. For each platform,
// then for all three on one store, it connects the spend source (PUT …/spend-sources/:kind with
// backfillDays = BENCH_DAYS) and times from the PUT's answer until the source reads `ok` with every
// row recorded (the store's ad spend counted through GET …/ad-spend). BENCH_ROUNDS (3) rounds,
// each on a new store; prints each time, the median, and the rows and requests per sync.
//
//   node --import tsx bench/spend-sync.mjs                      embedded SQLite
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node --import tsx bench/spend-sync.mjs
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startFakeGoogleAdsReports } from '../server/test/spend/fake-google-ads-reports.ts';
import { FakeMetaInsights } from '../server/test/spend/fake-meta-insights.ts';
import { startFakeTikTokReports } from '../server/test/spend/fake-tiktok-reports.ts';
import { benchEngine, bin, build, createBenchDatabase, machineContext, startServer } from './lib.js';

const CAMPAIGNS = Number(process.env.BENCH_CAMPAIGNS ?? 200);
const DAYS = Number(process.env.BENCH_DAYS ?? 30);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const today = new Date().toISOString().slice(0, 10);
const day = (offset) => new Date(Date.parse(`${today}T00:00:00Z`) + offset * 86_400_000).toISOString().slice(0, 10);

/** Every (campaign, day) of the account, amounts with cents and sub-cents as platforms send them. */
function rows(make) {
  const out = [];
  for (let c = 0; c < CAMPAIGNS; c++)
    for (let d = 0; d < DAYS; d++) out.push(make(`${7000 + c}`, `Campaign ${c}`, day(-d), c, d));
  return out;
}

async function main() {
  const engine = benchEngine();
  const code = build();
  process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0'; // the bench talks to its own self-signed server on 127.0.0.1
  const meta = await FakeMetaInsights.start();
  // Meta pages as asked (`limit`, 500 from Waytrack); the tests' fake pages by 2 to show paging.
  meta.pageSize = 500;
  meta.setSpend(
    'act_111',
    'USD',
    rows((campaignId, campaignName, date, c, d) => ({
      date,
      campaignId,
      campaignName,
      spend: `${c + 1}.${String(d).padStart(2, '0')}`,
    })),
  );
  const google = await startFakeGoogleAdsReports({ accounts: {} });
  google.setSpend('1234567890', {
    currency: 'USD',
    timeZone: 'America/New_York',
    rows: rows((campaignId, campaignName, date, c, d) => ({
      date,
      campaignId,
      campaignName,
      costMicros: String((c + 1) * 1_000_000 + d * 10_000),
    })),
  });
  const tiktok = await startFakeTikTokReports({ accounts: {} });
  tiktok.pageSizeCap = 1000;
  tiktok.setSpend('7001', {
    currency: 'USD',
    rows: rows((campaignId, campaignName, date, c, d) => ({
      date,
      campaignId,
      campaignName,
      spend: `${c + 1}.${String(d).padStart(2, '0')}`,
    })),
  });

  const dataDir = mkdtempSync(path.join(tmpdir(), 'waytrack-bench-spend-'));
  const database = engine.name === 'postgres' ? await createBenchDatabase(engine.adminUrl, 'spend') : undefined;
  const env = {
    DATA_DIR: dataDir,
    ...(database && { DATABASE_URL: database.url }),
    META_GRAPH_URL: meta.url,
    GOOGLE_ADS_API_URL: google.env().googleAdsApiUrl,
    GOOGLE_ADS_API_VERSION: google.env().googleAdsApiVersion,
    GOOGLE_OAUTH_TOKEN_URL: google.env().googleOauthTokenUrl,
    TIKTOK_API_URL: tiktok.url,
    RATE_LIMIT_RPS: '1000000',
    RATE_LIMIT_BURST: '1000000',
  };
  const server = await startServer(env);
  const results = [];
  try {
    const account = JSON.parse(
      execFileSync(process.execPath, [bin, 'account', 'create', '--email', 'spend-bench@example.com', '--json'], {
        env: { ...process.env, LOG_LEVEL: 'silent', ...env },
        encoding: 'utf8',
      }),
    );
    const headers = { authorization: `Bearer ${account.keys.live}`, 'content-type': 'application/json' };
    const api = async (method, url, body) => {
      const res = await fetch(`${server.url}${url}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
      return (await res.json()).data;
    };
    const bodies = {
      meta: { adAccountIds: ['act_111'], accessToken: meta.token, backfillDays: DAYS },
      google_ads: {
        customerIds: ['1234567890'],
        developerToken: google.developerToken,
        oauth: google.oauthClient,
        backfillDays: DAYS,
      },
      tiktok: { advertiserIds: ['7001'], accessToken: tiktok.accessToken, backfillDays: DAYS },
    };
    const recorded = async (storeId) => {
      let count = 0;
      let cursor;
      do {
        const page = await api(
          'GET',
          `/v1/stores/${storeId}/ad-spend?startDate=${day(-DAYS)}&endDate=${today}&limit=100${cursor ? `&cursor=${cursor}` : ''}`,
        );
        count += page.entries.length;
        cursor = page.nextCursor;
      } while (cursor);
      return count;
    };
    for (let round = 0; round < ROUNDS; round++) {
      for (const kinds of [['meta'], ['google_ads'], ['tiktok'], ['meta', 'google_ads', 'tiktok']]) {
        const store = await api('POST', '/v1/stores', {
          name: `Spend ${round}`,
          domain: 'spend.example.com',
          platform: 'custom',
          currency: 'USD',
          timezone: 'UTC',
        });
        const requestsBefore = meta.requests.length + google.requests.length + tiktok.requests.length;
        const started = performance.now();
        for (const kind of kinds) await api('PUT', `/v1/stores/${store.id}/spend-sources/${kind}`, bodies[kind]);
        let ms;
        for (;;) {
          const { spendSources } = await api('GET', `/v1/stores/${store.id}/spend-sources`);
          const mine = spendSources.filter((s) => kinds.includes(s.kind));
          if (mine.some((s) => s.status === 'failing')) throw new Error(JSON.stringify(mine));
          if (mine.every((s) => s.status === 'ok')) {
            ms = performance.now() - started;
            break;
          }
          if (performance.now() - started > 120_000) throw new Error(`not synced in 120 s: ${JSON.stringify(mine)}`);
          await new Promise((r) => setTimeout(r, 10));
        }
        const rowsRecorded = await recorded(store.id);
        const expected = kinds.length * CAMPAIGNS * DAYS;
        if (rowsRecorded !== expected) throw new Error(`${kinds}: ${rowsRecorded} rows recorded, ${expected} expected`);
        const requests = meta.requests.length + google.requests.length + tiktok.requests.length - requestsBefore;
        results.push({ kinds: kinds.join('+'), ms, rows: rowsRecorded, requests });
        console.log(
          `round ${round + 1} ${kinds.join('+').padEnd(22)} ${ms.toFixed(0).padStart(6)} ms  ${rowsRecorded} rows, ${requests} requests`,
        );
      }
    }
  } finally {
    await server.stop();
    await meta.close();
    await google.close();
    await tiktok.close();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  console.log(`\nserver: ${code}; ${machineContext()}; ${engine.label}; ${CAMPAIGNS} campaigns × ${DAYS} days per account`);
  const byKinds = new Map();
  for (const r of results) byKinds.set(r.kinds, [...(byKinds.get(r.kinds) ?? []), r]);
  console.log('| sources | median ms | runs ms | rows | requests |\n|---|---|---|---|---|');
  for (const [kinds, runs] of byKinds) {
    const sorted = runs.map((r) => r.ms).sort((a, b) => a - b);
    console.log(
      `| ${kinds} | ${sorted[Math.floor(sorted.length / 2)].toFixed(0)} | ${runs.map((r) => r.ms.toFixed(0)).join(', ')} | ${runs[0].rows} | ${runs[0].requests} |`,
    );
  }
}

await main();
