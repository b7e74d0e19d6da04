import { useState } from 'preact/hooks';
import { api, query } from '../api.js';
import { useApp } from '../app-state.js';
import { ClickId } from '../components/click-id.js';
import { CsvDownload } from '../components/csv-download.js';
import { DestinationBadges } from '../components/destinations-status.js';
import { PageTitle } from '../components/page-title.js';
import { Empty, ErrorMessage, Loading } from '../components/status.js';
import { StoreSelect } from '../components/store-select.js';
import type { CsvColumn } from '../csv.js';
import { formatDateTime, formatMoney } from '../format.js';
import { CAPI_STATUS } from '../labels.js';
import { BASE, Link, navigate, setQuery, useLocation } from '../router.js';
import { loadAllStores } from '../stores.js';
import type { Conversion, Page } from '../types.js';
import { useApi } from '../use-api.js';

const PAGE_SIZE = 25;

/** The list's columns as CSV: the exact values the API gave (value as a number, times in ISO 8601). */
function conversionColumns(storeName: (id: string) => string): CsvColumn<Conversion>[] {
  return [
    { label: 'Time', value: (c) => c.timestamp },
    { label: 'Conversion ID', value: (c) => c.conversionId },
    { label: 'Store', value: (c) => storeName(c.storeId) },
    { label: 'Event', value: (c) => c.eventType },
    { label: 'Order', value: (c) => c.orderId },
    { label: 'Value', value: (c) => c.eventValue },
    { label: 'Currency', value: (c) => c.currency },
    { label: 'Channel', value: (c) => c.attributedTo?.channel },
    { label: 'Click ID', value: (c) => c.attributedTo?.clickId },
    { label: 'Confidence', value: (c) => c.attributedTo?.confidenceScore },
    {
      label: 'Forwarding',
      value: (c) =>
        Object.entries(c.forwarding as Record<string, { status: string } | undefined>)
          .map(([kind, entry]) => `${kind}: ${entry?.status}`)
          .join('; '),
    },
  ];
}
const RECONCILIATION_FILTERS = [
  'startDate',
  'endDate',
  'destination',
  'forwardingStatus',
  'forwardingReason',
  'acknowledged',
  'refunded',
] as const;

export function Conversions() {
  const { mode } = useApp();
  const { query: params } = useLocation();
  const storeId = params.get('store') ?? '';
  const attributed = params.get('attributed') ?? '';
  // The filters a reconciliation count opens the list with (pages/reconciliation.tsx).
  const extra = Object.fromEntries(RECONCILIATION_FILTERS.map((name) => [name, params.get(name) ?? '']));
  const extraText = RECONCILIATION_FILTERS.filter((name) => extra[name]).map((name) => `${name} ${extra[name]}`);
  // The cursors of the pages before this one (Previous goes back without the API walking
  // backwards), for this mode and these filters only: a cursor belongs to one list.
  const listKey = `${mode} ${storeId} ${attributed} ${extraText.join(' ')}`;
  const [walk, setWalk] = useState<{ listKey: string; cursors: string[] }>({ listKey, cursors: [] });
  const cursors = walk.listKey === listKey ? walk.cursors : [];
  const setCursors = (next: string[]) => setWalk({ listKey, cursors: next });
  const cursor = cursors[cursors.length - 1];
  const filters = query({ storeId, attributed, ...extra, limit: PAGE_SIZE, cursor });
  const stores = useApi('stores', loadAllStores);
  const list = useApi(`${mode} ${filters}`, () => api.get<Page & { conversions: Conversion[] }>(`/conversions${filters}`));
  const storeName = (id: string) => stores.data?.find((s) => s.id === id)?.name ?? id;
  const filter = (values: Record<string, string>) => setQuery(values);
  const filtered = storeId !== '' || attributed !== '' || extraText.length > 0;

  return (
    <section>
      <PageTitle>Conversions</PageTitle>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <StoreSelect
          id="conversions-store"
          label="Store"
          allLabel="All stores"
          stores={stores.data ?? []}
          value={storeId}
          onChange={(id) => filter({ store: id })}
        />
        <div class="field">
          <label for="conversions-attributed">Attribution</label>
          <select id="conversions-attributed" value={attributed} onChange={(e) => filter({ attributed: e.currentTarget.value })}>
            <option value="">All conversions</option>
            <option value="true">Attributed</option>
            <option value="false">Not attributed</option>
          </select>
        </div>
      </form>
      {extraText.length > 0 && (
        <p class="active-filters">
          Also filtered by {extraText.join(', ')}.{' '}
          <Link href={`${BASE}/conversions${storeId ? `?store=${encodeURIComponent(storeId)}` : ''}`}>Clear these filters</Link>
        </p>
      )}
      {list.error && <ErrorMessage error={list.error} retry={list.reload} />}
      {!list.data && !list.error && <Loading />}
      {list.data?.conversions.length === 0 &&
        (filtered || cursor ? (
          <Empty title="No conversions match">
            <p>Try another store or attribution filter.</p>
          </Empty>
        ) : (
          <Empty title={`No ${mode} conversions yet`}>
            <p>
              Conversions appear here as your store's backend sends them with <code>POST /v1/track/conversion</code> and a{' '}
              <code>wt_{mode}_</code> key (see the <a href="/docs">API reference</a>; keys are under{' '}
              <Link href={`${BASE}/settings/api-keys`}>API keys</Link>).
            </p>
          </Empty>
        ))}
      {list.data && list.data.conversions.length > 0 && (
        <>
          <CsvDownload
            filename="conversions"
            columns={conversionColumns(storeName)}
            rows={list.data.conversions}
            label="Download this page as CSV"
          />
          <div class="table-wrap" aria-busy={list.loading}>
            <table class="rows-link">
              <caption class="visually-hidden">Conversions, newest first. Choose an order to see why it was attributed.</caption>
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Store</th>
                  <th scope="col">Event</th>
                  <th scope="col">Order</th>
                  <th scope="col" class="number">
                    Value
                  </th>
                  <th scope="col">Click</th>
                  <th scope="col">Forwarding</th>
                </tr>
              </thead>
              <tbody>
                {list.data.conversions.map((c) => (
                  <tr key={c.conversionId} onClick={() => navigate(`${BASE}/conversions/${c.conversionId}`)}>
                    <td>{formatDateTime(c.timestamp)}</td>
                    <td>{storeName(c.storeId)}</td>
                    <td>{c.eventType}</td>
                    <td>
                      <Link
                        href={`${BASE}/conversions/${c.conversionId}`}
                        class="clip"
                        title={c.orderId}
                        onClick={(e: MouseEvent) => e.stopPropagation()}
                      >
                        {c.orderId}
                      </Link>
                    </td>
                    <td class="number">{formatMoney(c.eventValue, c.currency)}</td>
                    <td>
                      {c.attributedTo ? (
                        <>
                          <ClickId attributedTo={c.attributedTo} /> · {c.attributedTo.confidenceScore}% confidence
                        </>
                      ) : (
                        'Not attributed'
                      )}
                    </td>
                    <td>
                      <span class={`badge ${c.capi.status}`}>{CAPI_STATUS[c.capi.status]}</span>{' '}
                      <DestinationBadges conversion={c} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <nav class="pager" aria-label="Pages">
            <button
              type="button"
              class="secondary"
              disabled={cursors.length === 0}
              onClick={() => setCursors(cursors.slice(0, -1))}
            >
              Previous page
            </button>
            <button
              type="button"
              class="secondary"
              disabled={!list.data.hasMore}
              onClick={() => list.data?.nextCursor && setCursors([...cursors, list.data.nextCursor])}
            >
              Next page
            </button>
          </nav>
        </>
      )}
    </section>
  );
}
