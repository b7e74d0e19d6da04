import { api, query } from '../api.js';
import { useApp } from '../app-state.js';
import type { CsvColumn } from '../csv.js';
import type { Store } from '../types.js';
import { useApi } from '../use-api.js';
import { CsvDownload } from './csv-download.js';
import { ErrorMessage, Loading } from './status.js';

/** One item of GET /v1/analytics/tracking-health: its type, a sentence to act on, and its figures. */
export interface HealthItem {
  type: string;
  message: string;
  [figure: string]: unknown;
}

const TYPE_NAMES: Record<string, string> = {
  spend_without_clicks: 'Spend without tracked clicks',
  untagged_clicks: 'Clicks without a campaign id',
  destination_failing: 'Destination failing',
  spend_source_failing: 'Spend source failing',
  conversions_pending: 'Conversions waiting to be sent',
};

const CSV_COLUMNS: CsvColumn<HealthItem>[] = [
  { label: 'Type', value: (i) => i.type },
  { label: 'Message', value: (i) => i.message },
  {
    label: 'Details',
    value: (i) => JSON.stringify(Object.fromEntries(Object.entries(i).filter(([k]) => k !== 'type' && k !== 'message'))),
  },
];

/** What would make the Channels figures wrong, each with what to do about it (api.md §11 "Tracking health"). */
export function TrackingHealthList({ store, from, to }: { store: Store; from: string; to: string }) {
  const { mode } = useApp();
  const path = `/analytics/tracking-health${query({ storeId: store.id, startDate: from, endDate: to })}`;
  const loaded = useApi(`${mode} ${path}`, () => api.get<{ items: HealthItem[] }>(path));
  const items = loaded.data?.items;
  return (
    <section class="panel" aria-labelledby="tracking-health-heading">
      <div class="section-heading">
        <h2 id="tracking-health-heading">Tracking health</h2>
        {items && <CsvDownload filename={`tracking-health-${store.id}-${from}-${to}`} columns={CSV_COLUMNS} rows={items} />}
      </div>
      {loaded.error && <ErrorMessage error={loaded.error} retry={loaded.reload} />}
      {!items && !loaded.error && <Loading label="Checking tracking…" />}
      {items && items.length === 0 && (
        <p class="notice">Nothing to fix: every campaign with spend has tracked clicks, and every destination delivers.</p>
      )}
      {items && items.length > 0 && (
        <ul class="tracking-health">
          {items.map((item, i) => (
            <li key={`${item.type}-${i}`} class={`health-item ${item.type}`}>
              <strong>{TYPE_NAMES[item.type] ?? item.type}</strong>
              <p>{item.message}</p>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
