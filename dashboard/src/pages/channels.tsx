// Channels (api.md §11): which platform and which campaign pays for itself. One row per channel
// with its campaigns expandable, spend against net revenue per day, MER, the spend sources'
// state and the tracking-health items that would make the figures wrong.
import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { api, query } from '../api.js';
import { useApp } from '../app-state.js';
import { CsvDownload } from '../components/csv-download.js';
import { PageTitle } from '../components/page-title.js';
import { SpendChart, spendDays } from '../components/spend-chart.js';
import { SpendSourcesStatus } from '../components/spend-sources-status.js';
import { Empty, ErrorMessage, Loading } from '../components/status.js';
import { StoreSelect } from '../components/store-select.js';
import { TrackingHealthList } from '../components/tracking-health.js';
import type { CsvColumn } from '../csv.js';
import { addDays, formatInteger, formatMoney, formatRoas, todayIn } from '../format.js';
import { BASE, Link, setQuery, useLocation } from '../router.js';
import { loadAllStores } from '../stores.js';
import type { Store, Timeseries } from '../types.js';
import { useApi } from '../use-api.js';

export const MODELS = [
  { value: 'last_click', label: 'Last click' },
  { value: 'first_click', label: 'First click' },
  { value: 'linear', label: 'Linear' },
  { value: 'time_decay', label: 'Time decay' },
  { value: 'position_based', label: 'Position based' },
];

export const CHANNEL_NAMES: Record<string, string> = {
  meta: 'Meta',
  google_ads: 'Google Ads',
  tiktok: 'TikTok',
  microsoft: 'Microsoft Advertising',
  pinterest: 'Pinterest',
  snapchat: 'Snapchat',
  reddit: 'Reddit',
  linkedin: 'LinkedIn',
  unattributed: 'Not attributed to an ad',
};

interface Figures {
  spend: number;
  clicks: number;
  conversions: number;
  revenue: number;
  refunds: number;
  netRevenue: number;
  roas: number | null;
  cpa: number | null;
  newCustomers: number;
}
export interface CampaignRow extends Figures {
  campaignId: string;
  campaignName: string | null;
}
export interface ChannelRow extends Figures {
  channel: string;
  campaigns: CampaignRow[];
}
interface Warning {
  code: string;
  message: string;
}
interface ChannelReport {
  channels: ChannelRow[];
  totals: { spend: number; netRevenue: number; mer: number | null };
  warnings: Warning[];
}

/** One CSV row per campaign, and one per channel (its campaign columns empty). */
type CsvRow = Figures & { channel: string; campaignId?: string; campaignName?: string | null };
const FIGURE_COLUMNS: CsvColumn<CsvRow>[] = [
  { label: 'Spend', value: (r) => r.spend },
  { label: 'Clicks', value: (r) => r.clicks },
  { label: 'Conversions', value: (r) => r.conversions },
  { label: 'Revenue', value: (r) => r.revenue },
  { label: 'Refunds', value: (r) => r.refunds },
  { label: 'Net revenue', value: (r) => r.netRevenue },
  { label: 'ROAS', value: (r) => r.roas },
  { label: 'CPA', value: (r) => r.cpa },
  { label: 'New customers', value: (r) => r.newCustomers },
];
const CSV_COLUMNS: CsvColumn<CsvRow>[] = [
  { label: 'Channel', value: (r) => r.channel },
  { label: 'Campaign ID', value: (r) => r.campaignId },
  { label: 'Campaign', value: (r) => r.campaignName },
  ...FIGURE_COLUMNS,
];

export function csvRowsOf(channels: ChannelRow[]): CsvRow[] {
  return channels.flatMap(({ campaigns, ...channel }) => [
    channel,
    ...campaigns.map((c) => ({ ...c, channel: channel.channel })),
  ]);
}

function FigureCells({ row, currency }: { row: Figures; currency: string }) {
  const money = (value: number | null) => (value === null ? '—' : formatMoney(value, currency));
  return (
    <>
      <td class="number">{money(row.spend)}</td>
      <td class="number">{formatInteger(row.clicks)}</td>
      <td class="number">{formatInteger(row.conversions)}</td>
      <td class="number">{money(row.netRevenue)}</td>
      <td class="number">{formatRoas(row.roas)}</td>
      <td class="number">{money(row.cpa)}</td>
      <td class="number">{formatInteger(row.newCustomers)}</td>
    </>
  );
}

function ChannelTable({ report, currency }: { report: ChannelReport; currency: string }) {
  const [open, setOpen] = useState<Set<string>>(new Set());
  const toggle = (channel: string) =>
    setOpen((current) => {
      const next = new Set(current);
      if (next.has(channel)) next.delete(channel);
      else next.add(channel);
      return next;
    });
  return (
    <div class="table-wrap">
      <table class="channels-table">
        <caption class="visually-hidden">Spend, conversions and net revenue per channel and campaign</caption>
        <thead>
          <tr>
            <th scope="col">Channel</th>
            {['Spend', 'Clicks', 'Conversions', 'Net revenue', 'ROAS', 'CPA', 'New customers'].map((label) => (
              <th scope="col" class="number" key={label}>
                {label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {report.channels.map((row) => {
            const name = CHANNEL_NAMES[row.channel] ?? row.channel;
            const expanded = open.has(row.channel);
            return (
              <Fragment key={row.channel}>
                <tr class="channel-row">
                  <th scope="row">
                    {row.campaigns.length > 0 ? (
                      <button
                        type="button"
                        class="link expand"
                        aria-expanded={expanded}
                        aria-controls={`campaigns-${row.channel}`}
                        onClick={() => toggle(row.channel)}
                      >
                        <span aria-hidden="true">{expanded ? '▾' : '▸'}</span> {name}
                        <span class="visually-hidden">
                          : {expanded ? 'hide' : 'show'} its {row.campaigns.length} campaigns
                        </span>
                      </button>
                    ) : (
                      name
                    )}
                  </th>
                  <FigureCells row={row} currency={currency} />
                </tr>
                {expanded &&
                  row.campaigns.map((campaign, i) => (
                    <tr class="campaign-row" key={campaign.campaignId} id={i === 0 ? `campaigns-${row.channel}` : undefined}>
                      <th scope="row" class="campaign">
                        {campaign.campaignName ?? 'Unnamed campaign'} <code>{campaign.campaignId}</code>
                      </th>
                      <FigureCells row={campaign} currency={currency} />
                    </tr>
                  ))}
              </Fragment>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

function Report({ store, from, to, model }: { store: Store; from: string; to: string; model: string }) {
  const { mode } = useApp();
  const range = query({ storeId: store.id, startDate: from, endDate: to });
  const loaded = useApi(`${mode} channels ${range} ${model}`, () =>
    Promise.all([
      api.get<ChannelReport>(`/analytics/channels${range}&model=${encodeURIComponent(model)}`),
      api.get<Timeseries>(`/analytics/timeseries${range}&interval=day`),
    ]),
  );
  if (loaded.error) return <ErrorMessage error={loaded.error} retry={loaded.reload} />;
  if (!loaded.data) return <Loading label="Loading channels…" />;
  const [report, series] = loaded.data;
  const currency = store.currency;
  const money = (value: number) => formatMoney(value, currency);
  return (
    <div aria-busy={loaded.loading}>
      <dl class="figures">
        <div>
          <dt>Ad spend</dt>
          <dd>{money(report.totals.spend)}</dd>
        </div>
        <div>
          <dt>Net revenue</dt>
          <dd>{money(report.totals.netRevenue)}</dd>
        </div>
        <div>
          <dt>
            <abbr title="Marketing efficiency ratio: net revenue ÷ ad spend">MER</abbr>
          </dt>
          <dd>{formatRoas(report.totals.mer)}</dd>
        </div>
      </dl>
      {report.warnings.length > 0 && (
        <ul class="warnings" aria-label="Warnings">
          {report.warnings.map((w) => (
            <li key={w.code + w.message}>{w.message}</li>
          ))}
        </ul>
      )}
      <h2>Spend and net revenue per day</h2>
      <SpendChart days={spendDays(series.buckets, series.currency)} currency={series.currency} />
      <div class="section-heading">
        <h2>Channels and campaigns</h2>
        <CsvDownload
          filename={`channels-${store.id}-${from}-${to}-${model}`}
          columns={CSV_COLUMNS}
          rows={csvRowsOf(report.channels)}
        />
      </div>
      {report.channels.length === 0 ? (
        <p class="hint">No clicks, conversions or spend in {mode} mode on these days.</p>
      ) : (
        <ChannelTable report={report} currency={currency} />
      )}
    </div>
  );
}

export function Channels() {
  const { query: params } = useLocation();
  const stores = useApi('stores', loadAllStores);
  if (stores.error) return <ErrorMessage error={stores.error} retry={stores.reload} />;
  if (!stores.data) return <Loading />;
  if (stores.data.length === 0) {
    return (
      <section>
        <PageTitle>Channels</PageTitle>
        <Empty title="No stores yet">
          <p>
            <Link href={`${BASE}/stores`}>Create a store</Link> first.
          </p>
        </Empty>
      </section>
    );
  }
  const store = stores.data.find((s) => s.id === params.get('store')) ?? (stores.data[0] as Store);
  const to = params.get('to') || todayIn(store.timezone);
  const from = params.get('from') || addDays(to, -29);
  const model = params.get('model') || 'last_click';
  return (
    <section class="channels">
      <PageTitle>Channels</PageTitle>
      <p class="lead">
        What each ad platform and campaign cost and what it brought in, net of refunds. Spend is pulled from the platforms you
        connect on the <Link href={`${BASE}/stores/${store.id}`}>store's page</Link>.
      </p>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <StoreSelect
          id="channels-store"
          label="Store"
          stores={stores.data}
          value={store.id}
          onChange={(id) => setQuery({ store: id })}
        />
        <div class="field">
          <label for="channels-from">From</label>
          <input
            id="channels-from"
            type="date"
            value={from}
            max={to}
            onChange={(e) => setQuery({ from: e.currentTarget.value })}
          />
        </div>
        <div class="field">
          <label for="channels-to">To</label>
          <input id="channels-to" type="date" value={to} min={from} onChange={(e) => setQuery({ to: e.currentTarget.value })} />
        </div>
        <div class="field">
          <label for="channels-model">Attribution model</label>
          <select id="channels-model" value={model} onChange={(e) => setQuery({ model: e.currentTarget.value })}>
            {MODELS.map((m) => (
              <option value={m.value} key={m.value}>
                {m.label}
              </option>
            ))}
          </select>
        </div>
      </form>
      <Report store={store} from={from} to={to} model={model} />
      <SpendSourcesStatus store={store} />
      <TrackingHealthList store={store} from={from} to={to} />
    </section>
  );
}
