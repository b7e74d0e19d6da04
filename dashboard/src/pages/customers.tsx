// Customers (api.md §11): first-purchase cohorts by month (and channel), what each customer
// brought in net of refunds after 0–365 days, what acquiring one cost, and when that paid back.
import { api, query } from '../api.js';
import { useApp } from '../app-state.js';
import { CsvDownload } from '../components/csv-download.js';
import { PageTitle } from '../components/page-title.js';
import { Empty, ErrorMessage, Loading } from '../components/status.js';
import { StoreSelect } from '../components/store-select.js';
import type { CsvColumn } from '../csv.js';
import { addDays, formatInteger, formatMoney, todayIn } from '../format.js';
import { BASE, Link, setQuery, useLocation } from '../router.js';
import { loadAllStores } from '../stores.js';
import type { Store } from '../types.js';
import { useApi } from '../use-api.js';
import { CHANNEL_NAMES } from './channels.js';

const OFFSETS = ['d0', 'd30', 'd60', 'd90', 'd180', 'd365'] as const;
type Offset = (typeof OFFSETS)[number];

export interface Cohort {
  cohort: string;
  channel?: string;
  customers: number;
  spend?: number | null;
  cac?: number | null;
  netRevenuePerCustomer: Partial<Record<Offset, number>>;
  paybackDays?: number | null;
}

const CSV_COLUMNS: CsvColumn<Cohort>[] = [
  { label: 'Cohort', value: (c) => c.cohort },
  { label: 'Channel', value: (c) => c.channel },
  { label: 'Customers', value: (c) => c.customers },
  { label: 'Spend', value: (c) => c.spend },
  { label: 'CAC', value: (c) => c.cac },
  ...OFFSETS.map((offset) => ({
    label: `Net revenue per customer ${offset}`,
    value: (c: Cohort) => c.netRevenuePerCustomer[offset],
  })),
  { label: 'Payback days', value: (c) => c.paybackDays },
];

function CohortTable({ cohorts, byChannel, currency }: { cohorts: Cohort[]; byChannel: boolean; currency: string }) {
  const money = (value: number | null | undefined) =>
    value === null || value === undefined ? '—' : formatMoney(value, currency);
  return (
    <div class="table-wrap">
      <table class="cohorts-table">
        <caption class="visually-hidden">Net revenue per customer by days since the first purchase, per cohort</caption>
        <thead>
          <tr>
            <th scope="col">Cohort</th>
            {byChannel && <th scope="col">Channel</th>}
            <th scope="col" class="number">
              Customers
            </th>
            <th scope="col" class="number">
              <abbr title="Customer acquisition cost: the month's ad spend ÷ new customers">CAC</abbr>
            </th>
            {OFFSETS.map((offset) => (
              <th scope="col" class="number" key={offset}>
                Day {offset.slice(1)}
              </th>
            ))}
            <th scope="col" class="number">
              Payback
            </th>
          </tr>
        </thead>
        <tbody>
          {cohorts.map((c) => (
            <tr key={`${c.cohort} ${c.channel ?? ''}`}>
              <th scope="row">{c.cohort}</th>
              {byChannel && <td>{CHANNEL_NAMES[c.channel ?? ''] ?? c.channel}</td>}
              <td class="number">{formatInteger(c.customers)}</td>
              <td class="number">{money(c.cac)}</td>
              {OFFSETS.map((offset) => (
                <td class="number" key={offset}>
                  {c.netRevenuePerCustomer[offset] === undefined ? (
                    <span title="The cohort is not that old yet">…</span>
                  ) : (
                    money(c.netRevenuePerCustomer[offset])
                  )}
                </td>
              ))}
              <td class="number">{c.paybackDays === null || c.paybackDays === undefined ? '—' : `${c.paybackDays} days`}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function CohortReport({ store, from, to, by }: { store: Store; from: string; to: string; by: string }) {
  const { mode } = useApp();
  const path = `/analytics/cohorts${query({ storeId: store.id, startDate: from, endDate: to, by })}`;
  const loaded = useApi(`${mode} ${path}`, () => api.get<{ cohorts: Cohort[] }>(path));
  if (loaded.error) return <ErrorMessage error={loaded.error} retry={loaded.reload} />;
  if (!loaded.data) return <Loading label="Loading cohorts…" />;
  const { cohorts } = loaded.data;
  return (
    <div aria-busy={loaded.loading}>
      <div class="section-heading">
        <h2>First-purchase cohorts</h2>
        <CsvDownload filename={`cohorts-${store.id}-${from}-${to}-${by}`} columns={CSV_COLUMNS} rows={cohorts} />
      </div>
      {cohorts.length === 0 ? (
        <p class="hint">
          No first purchases with an email or phone in {mode} mode on these days. Send <code>customerData.email</code> with each
          conversion to see customers.
        </p>
      ) : (
        <CohortTable cohorts={cohorts} byChannel={by === 'channel'} currency={store.currency} />
      )}
    </div>
  );
}

export function Customers() {
  const { query: params } = useLocation();
  const stores = useApi('stores', loadAllStores);
  if (stores.error) return <ErrorMessage error={stores.error} retry={stores.reload} />;
  if (!stores.data) return <Loading />;
  if (stores.data.length === 0) {
    return (
      <section>
        <PageTitle>Customers</PageTitle>
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
  const from = params.get('from') || addDays(to, -364);
  const by = params.get('by') === 'channel' ? 'channel' : 'month';
  return (
    <section class="customers">
      <PageTitle>Customers</PageTitle>
      <p class="lead">
        Customers by the month of their first purchase: what each brought in after 0 to 365 days, net of refunds, against what the
        ads cost per new customer. A customer is known by the email (else phone) sent with the conversion.
      </p>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <StoreSelect
          id="customers-store"
          label="Store"
          stores={stores.data}
          value={store.id}
          onChange={(id) => setQuery({ store: id })}
        />
        <div class="field">
          <label for="customers-from">First purchases from</label>
          <input
            id="customers-from"
            type="date"
            value={from}
            max={to}
            onChange={(e) => setQuery({ from: e.currentTarget.value })}
          />
        </div>
        <div class="field">
          <label for="customers-to">To</label>
          <input id="customers-to" type="date" value={to} min={from} onChange={(e) => setQuery({ to: e.currentTarget.value })} />
        </div>
        <div class="field">
          <label for="customers-by">Group by</label>
          <select id="customers-by" value={by} onChange={(e) => setQuery({ by: e.currentTarget.value })}>
            <option value="month">Month</option>
            <option value="channel">Month and channel</option>
          </select>
        </div>
      </form>
      <CohortReport store={store} from={from} to={to} by={by} />
    </section>
  );
}
