import { api, query } from '../api.js';
import { useApp } from '../app-state.js';
import { DailyChart } from '../components/daily-chart.js';
import { FailingDestinationsBanner } from '../components/destination-health.js';
import { PageTitle } from '../components/page-title.js';
import { Empty, ErrorMessage, Loading } from '../components/status.js';
import { StoreSelect } from '../components/store-select.js';
import { addDays, formatInteger, formatMoney, formatPercent, formatRoas, todayIn } from '../format.js';
import { BASE, Link, setQuery, useLocation } from '../router.js';
import { loadAllStores } from '../stores.js';
import type { Metrics, Store, Timeseries } from '../types.js';
import { useApi } from '../use-api.js';

/**
 * The figures of GET /v1/analytics/metrics, labelled as api.md §5 names them, with refunds and net
 * revenue (§9). Amounts are shown as the API computed them (exactly, in minor units): no sums here.
 */
function Figures({ metrics }: { metrics: Metrics }) {
  const money = (value: number) => formatMoney(value, metrics.currency);
  const others = Object.entries(metrics.revenueByCurrency);
  return (
    <>
      <dl class="figures">
        <div>
          <dt>Clicks</dt>
          <dd>{formatInteger(metrics.totalClicks)}</dd>
        </div>
        <div>
          <dt>Conversions</dt>
          <dd>{formatInteger(metrics.totalConversions)}</dd>
        </div>
        <div>
          <dt>Revenue</dt>
          <dd>{money(metrics.totalRevenue)}</dd>
        </div>
        <div>
          <dt>Refunds</dt>
          <dd>{money(metrics.refunds)}</dd>
        </div>
        <div>
          <dt>Net revenue</dt>
          <dd>{money(metrics.netRevenue)}</dd>
        </div>
        <div>
          <dt>Conversion rate</dt>
          <dd>{formatPercent(metrics.conversionRate)}</dd>
        </div>
        <div>
          <dt>Average order value</dt>
          <dd>{money(metrics.averageOrderValue)}</dd>
        </div>
        <div>
          <dt>ROAS</dt>
          <dd>{formatRoas(metrics.roas)}</dd>
        </div>
      </dl>
      <p class="hint">
        Attributed to a click: {formatInteger(metrics.attributedConversions)} of {formatInteger(metrics.totalConversions)}{' '}
        conversions, {money(metrics.attributedRevenue)} of revenue.{' '}
        {metrics.roas === null
          ? 'ROAS shows — because no ad spend is recorded for these days (POST /v1/stores/:id/ad-spend).'
          : `Ad spend ${money(metrics.adSpend)}; ROAS is net of the refunds of attributed conversions.`}
        {others.length > 0 &&
          ` Purchases in other currencies, not included in Revenue: ${others.map(([code, value]) => formatMoney(value, code)).join(', ')}.`}
      </p>
    </>
  );
}

function StoreFigures({ store, from, to }: { store: Store; from: string; to: string }) {
  const { mode } = useApp();
  const params = query({ storeId: store.id, startDate: from, endDate: to });
  const loaded = useApi(`${mode} ${params}`, () =>
    Promise.all([
      api.get<Metrics>(`/analytics/metrics${params}`),
      api.get<Timeseries>(`/analytics/timeseries${params}&interval=day`),
    ]),
  );
  if (loaded.error) return <ErrorMessage error={loaded.error} retry={loaded.reload} />;
  if (!loaded.data) return <Loading label="Loading figures…" />;
  const [metrics, series] = loaded.data;
  const nothing = metrics.totalClicks === 0 && metrics.totalConversions === 0;
  return (
    <div aria-busy={loaded.loading}>
      <Figures metrics={metrics} />
      <h2>Daily</h2>
      <DailyChart buckets={series.buckets} currency={series.currency} />
      {nothing && (
        <p class="hint">
          Nothing recorded for {store.name} in {mode} mode on these days. Add the browser tag from the{' '}
          <Link href={`${BASE}/stores/${store.id}`}>store's page</Link> to record clicks, and send conversions with{' '}
          <code>POST /v1/track/conversion</code>.
        </p>
      )}
    </div>
  );
}

export function Overview() {
  const { query: params } = useLocation();
  const stores = useApi('stores', loadAllStores);
  if (stores.error) return <ErrorMessage error={stores.error} retry={stores.reload} />;
  if (!stores.data) return <Loading />;
  if (stores.data.length === 0) {
    return (
      <section>
        <PageTitle>Overview</PageTitle>
        <Empty title="No stores yet">
          <p>
            Figures appear here once a store records clicks and conversions.{' '}
            <Link href={`${BASE}/stores`}>Create your first store</Link> to get its browser tag.
          </p>
        </Empty>
      </section>
    );
  }
  const store = stores.data.find((s) => s.id === params.get('store')) ?? (stores.data[0] as Store);
  // Default: the last 30 days, ending today in the store's time zone (as the API does).
  const to = params.get('to') || todayIn(store.timezone);
  const from = params.get('from') || addDays(to, -29);
  return (
    <section>
      <PageTitle>Overview</PageTitle>
      <FailingDestinationsBanner stores={stores.data} />
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <StoreSelect
          id="overview-store"
          label="Store"
          stores={stores.data}
          value={store.id}
          onChange={(id) => setQuery({ store: id })}
        />
        <div class="field">
          <label for="from">From</label>
          <input
            id="from"
            type="date"
            value={from}
            max={to}
            required
            onChange={(e) => setQuery({ from: e.currentTarget.value })}
          />
        </div>
        <div class="field">
          <label for="to">To</label>
          <input id="to" type="date" value={to} min={from} required onChange={(e) => setQuery({ to: e.currentTarget.value })} />
        </div>
      </form>
      <p class="hint">
        Days in the store's time zone ({store.timezone}); amounts in {store.currency}.
      </p>
      <StoreFigures store={store} from={from} to={to} />
    </section>
  );
}
