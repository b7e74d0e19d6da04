// Reconciliation (api.md §10): per day and destination, what Waytrack received and what became
// of it, a page a merchant can print or send to their agency. Every count opens the
// conversions behind it.
import { api, query } from '../api.js';
import { useApp } from '../app-state.js';
import { CsvDownload } from '../components/csv-download.js';
import { PageTitle } from '../components/page-title.js';
import { Empty, ErrorMessage, Loading } from '../components/status.js';
import { StoreSelect } from '../components/store-select.js';
import type { CsvColumn } from '../csv.js';
import { BASE, Link, setQuery, useLocation } from '../router.js';
import { loadAllStores } from '../stores.js';
import { useApi } from '../use-api.js';

type Kind = 'meta' | 'google_ads' | 'tiktok' | 'microsoft' | 'pinterest' | 'snapchat' | 'reddit' | 'linkedin';
const KINDS: Kind[] = ['meta', 'google_ads', 'tiktok', 'microsoft', 'pinterest', 'snapchat', 'reddit', 'linkedin'];
const KIND_LABEL: Record<Kind, string> = {
  meta: 'Meta',
  google_ads: 'Google Ads',
  tiktok: 'TikTok',
  microsoft: 'Microsoft Advertising',
  reddit: 'Reddit',
  linkedin: 'LinkedIn',
  pinterest: 'Pinterest',
  snapchat: 'Snapchat',
};
const TRACE_LABEL: Record<Kind, string> = {
  meta: 'fbtrace_id',
  google_ads: 'job id',
  tiktok: 'request_id',
  microsoft: 'request id',
  reddit: 'request id',
  linkedin: 'x-li-uuid',
  pinterest: 'x-pinterest-rid',
  snapchat: 'request_id',
};

interface ByReason {
  total: number;
  byReason: Record<string, number>;
}
interface DestinationDay {
  eligible: number;
  sent: number;
  acknowledged: number;
  pending: number;
  failed: ByReason;
  skipped: ByReason;
  traceIds: string[];
  links: Record<'eligible' | 'sent' | 'acknowledged' | 'pending' | 'failed' | 'skipped', string> & {
    failedByReason: Record<string, string>;
    skippedByReason: Record<string, string>;
  };
}
interface Day {
  date: string;
  received: number;
  attributed: number;
  refunded: number;
  destinations: Partial<Record<Kind, DestinationDay>>;
  links: Record<'received' | 'attributed' | 'refunded', string>;
}
interface Report {
  storeId: string;
  startDate: string;
  endDate: string;
  timezone: string;
  days: Day[];
}

/** One CSV row per day and destination (the printed table, flat). */
type CsvRow = { day: Day; kind: string; destination: DestinationDay | undefined };
const CSV_COLUMNS: CsvColumn<CsvRow>[] = [
  { label: 'Day', value: (r) => r.day.date },
  { label: 'Received', value: (r) => r.day.received },
  { label: 'Attributed', value: (r) => r.day.attributed },
  { label: 'Refunded', value: (r) => r.day.refunded },
  { label: 'Destination', value: (r) => r.kind },
  { label: 'Eligible', value: (r) => r.destination?.eligible },
  { label: 'Sent', value: (r) => r.destination?.sent },
  { label: 'Acknowledged', value: (r) => r.destination?.acknowledged },
  { label: 'Pending', value: (r) => r.destination?.pending },
  { label: 'Failed', value: (r) => r.destination?.failed.total },
  { label: 'Skipped', value: (r) => r.destination?.skipped.total },
  { label: 'Trace ids', value: (r) => r.destination?.traceIds.join(' ') },
];
const csvRowsOf = (days: Day[]): CsvRow[] =>
  days.flatMap((day) => Object.entries(day.destinations).map(([kind, destination]) => ({ day, kind, destination })));

/** The dashboard's conversions page for an API list query (`/v1/conversions?storeId=…&…`). */
export function conversionsHref(link: string): string {
  const params = new URLSearchParams(link.slice(link.indexOf('?') + 1));
  const storeId = params.get('storeId');
  params.delete('storeId');
  if (storeId) params.set('store', storeId);
  return `${BASE}/conversions?${params.toString()}`;
}

function Count({ value, link, label }: { value: number; link: string; label: string }) {
  if (value === 0) return <span>0</span>;
  return (
    <Link href={conversionsHref(link)} aria-label={`${value} ${label}`}>
      {value}
    </Link>
  );
}

function Reasons({ bucket, links, label }: { bucket: ByReason; links: Record<string, string>; label: string }) {
  const entries = Object.entries(bucket.byReason);
  if (entries.length === 0) return null;
  return (
    <ul class="reasons">
      {entries.map(([reason, count]) => (
        <li key={reason}>
          {reason.replaceAll('_', ' ')}: <Count value={count} link={links[reason] ?? ''} label={`${label}: ${reason}`} />
        </li>
      ))}
    </ul>
  );
}

export function Reconciliation() {
  const { mode } = useApp();
  const { query: params } = useLocation();
  const stores = useApi('stores', loadAllStores);
  const storeId = params.get('store') || stores.data?.[0]?.id || '';
  const startDate = params.get('start') ?? '';
  const endDate = params.get('end') ?? '';
  const path = storeId ? `/stores/${encodeURIComponent(storeId)}/reconciliation${query({ startDate, endDate })}` : null;
  const report = useApi(path && `${mode} ${path}`, () => api.get<Report>(path as string));
  const store = stores.data?.find((s) => s.id === storeId);
  const data = report.data;

  return (
    <section class="reconciliation">
      <PageTitle>Reconciliation</PageTitle>
      <p class="lead">
        Per day, the conversions Waytrack received and what each ad platform got of them, with the platforms' own trace ids to
        quote to their support. Every number opens the conversions behind it.
      </p>
      <form class="filters no-print" onSubmit={(e) => e.preventDefault()}>
        <StoreSelect
          id="reconciliation-store"
          label="Store"
          stores={stores.data ?? []}
          value={storeId}
          onChange={(id) => setQuery({ store: id })}
        />
        <div class="field">
          <label for="reconciliation-start">From</label>
          <input
            id="reconciliation-start"
            type="date"
            value={startDate}
            onChange={(e) => setQuery({ start: e.currentTarget.value })}
          />
        </div>
        <div class="field">
          <label for="reconciliation-end">To</label>
          <input id="reconciliation-end" type="date" value={endDate} onChange={(e) => setQuery({ end: e.currentTarget.value })} />
        </div>
        <button type="button" class="secondary" onClick={() => window.print()}>
          Print
        </button>
      </form>
      {stores.data?.length === 0 && (
        <Empty title="No stores yet">
          <p>
            Create a store under <Link href={`${BASE}/stores`}>Stores</Link> first.
          </p>
        </Empty>
      )}
      {report.error && <ErrorMessage error={report.error} retry={report.reload} />}
      {path && !data && !report.error && <Loading />}
      {data && (
        <>
          <p class="report-scope">
            {store?.name ?? data.storeId} · {data.startDate} to {data.endDate} · days in {data.timezone} · {mode} data
          </p>
          <CsvDownload
            filename={`reconciliation-${data.storeId}-${data.startDate}-${data.endDate}`}
            columns={CSV_COLUMNS}
            rows={csvRowsOf(data.days)}
          />
          <div class="table-wrap" aria-busy={report.loading}>
            <table class="reconciliation-table">
              <caption class="visually-hidden">Conversions per day and what each destination received</caption>
              <thead>
                <tr>
                  <th scope="col">Day</th>
                  <th scope="col" class="number">
                    Received
                  </th>
                  <th scope="col" class="number">
                    Attributed
                  </th>
                  <th scope="col" class="number">
                    Refunded
                  </th>
                  {KINDS.map((kind) => (
                    <th scope="col" key={kind}>
                      {KIND_LABEL[kind]}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {[...data.days].reverse().map((day) => (
                  <tr key={day.date}>
                    <th scope="row">{day.date}</th>
                    <td class="number">
                      <Count value={day.received} link={day.links.received} label="received" />
                    </td>
                    <td class="number">
                      <Count value={day.attributed} link={day.links.attributed} label="attributed" />
                    </td>
                    <td class="number">
                      <Count value={day.refunded} link={day.links.refunded} label="refunded" />
                    </td>
                    {KINDS.map((kind) => {
                      const d = day.destinations[kind];
                      if (!d || d.eligible === 0) return <td key={kind}>–</td>;
                      const label = `${KIND_LABEL[kind]} ${day.date}`;
                      return (
                        <td key={kind} class="destination">
                          <dl>
                            <dt>Eligible</dt>
                            <dd>
                              <Count value={d.eligible} link={d.links.eligible} label={`eligible, ${label}`} />
                            </dd>
                            <dt>Sent</dt>
                            <dd>
                              <Count value={d.sent} link={d.links.sent} label={`sent, ${label}`} /> (acknowledged{' '}
                              <Count value={d.acknowledged} link={d.links.acknowledged} label={`acknowledged, ${label}`} />)
                            </dd>
                            <dt>Pending</dt>
                            <dd>
                              <Count value={d.pending} link={d.links.pending} label={`pending, ${label}`} />
                            </dd>
                            <dt>Failed</dt>
                            <dd>
                              <Count value={d.failed.total} link={d.links.failed} label={`failed, ${label}`} />
                              <Reasons bucket={d.failed} links={d.links.failedByReason} label={`failed, ${label}`} />
                            </dd>
                            <dt>Skipped</dt>
                            <dd>
                              <Count value={d.skipped.total} link={d.links.skipped} label={`skipped, ${label}`} />
                              <Reasons bucket={d.skipped} links={d.links.skippedByReason} label={`skipped, ${label}`} />
                            </dd>
                          </dl>
                          {d.traceIds.length > 0 && (
                            <p class="traces">
                              {TRACE_LABEL[kind]}:{' '}
                              {d.traceIds.map((t) => (
                                <code key={t}>{t}</code>
                              ))}
                            </p>
                          )}
                        </td>
                      );
                    })}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <p class="note">
            Eligible = sent + pending + failed + skipped: the conversions a platform receives. A platform does not receive
            conversions without its click id (Google Ads, TikTok, Microsoft Advertising), nor any recorded before it was set up.
          </p>
        </>
      )}
    </section>
  );
}
