// Match quality (api.md §10): per destination, the average score of a store's conversions, the
// share missing each match key, and the one change that would raise the score most.
import { api, query } from '../api.js';
import { useApp } from '../app-state.js';
import { PageTitle } from '../components/page-title.js';
import { Empty, ErrorMessage, Loading } from '../components/status.js';
import { StoreSelect } from '../components/store-select.js';
import { addDays, formatInteger, formatPercent, todayIn } from '../format.js';
import { BASE, Link, setQuery, useLocation } from '../router.js';
import { loadAllStores } from '../stores.js';
import type { Store } from '../types.js';
import { useApi } from '../use-api.js';

/** GET /v1/analytics/match-quality `data.destinations.<kind>` (its own types: this page alone reads it). */
interface DestinationQuality {
  conversions: number;
  averageScore: number;
  missing: Record<string, number>;
  warnings: Record<string, number>;
  improvements: { key: string; scoreGain: number }[];
}

interface MatchQualityView {
  destinations: Partial<
    Record<'meta' | 'google_ads' | 'tiktok' | 'microsoft' | 'pinterest' | 'snapchat' | 'reddit' | 'linkedin', DestinationQuality>
  >;
}

const DESTINATIONS = {
  meta: 'Meta',
  google_ads: 'Google Ads',
  tiktok: 'TikTok',
  microsoft: 'Microsoft Advertising',
  reddit: 'Reddit',
  linkedin: 'LinkedIn',
  pinterest: 'Pinterest',
  snapchat: 'Snapchat',
} as const;

const KEYS: Record<string, string> = {
  clickId: 'click id',
  email: 'email',
  phone: 'phone',
  ipUserAgent: 'IP address and user agent',
  fbp: 'fbp browser id',
  ttp: 'ttp browser id',
  scid: 'scid browser id',
  address: 'name and address',
};

/** What to do so a conversion carries the key. */
const ADVICE: Record<string, string> = {
  clickId:
    'add the browser tag to every landing page (it records the click ids), or send fbc / gclid / ttclid / epik / ScCid with the conversion',
  email: "send the buyer's email in customerData.email",
  phone: "send the buyer's phone with its country code (+49…), or customerData.country",
  ipUserAgent: "send the buyer's ipAddress and userAgent from your server",
  fbp: 'send the _fbp cookie as fbp',
  ttp: 'send the _ttp cookie as ttp',
  scid: 'send the Snap Pixel’s _scid cookie as scid',
  address: 'send name, city, state, zip code and country in customerData',
};

const WARNINGS: Record<string, string> = {
  fbc_stale: 'fbc older than 7 days',
  fbc_malformed: 'fbclid not in fbc format',
  email_invalid: 'email not a valid address',
  phone_without_country_code: 'phone without country code',
  ip_user_agent_missing: 'no IP address and user agent',
  user_data_denied: 'consent denied: customer data not sent',
};

function Destination({ kind, quality }: { kind: keyof typeof DESTINATIONS; quality: DestinationQuality }) {
  const best = quality.improvements[0];
  const warnings = Object.entries(quality.warnings);
  const headingId = `mq-${kind}`;
  return (
    <section aria-labelledby={headingId}>
      <h2 id={headingId}>{DESTINATIONS[kind]}</h2>
      <dl class="figures">
        <div>
          <dt>Average score</dt>
          <dd>{quality.averageScore.toFixed(1)} / 10</dd>
        </div>
        <div>
          <dt>Conversions</dt>
          <dd>{formatInteger(quality.conversions)}</dd>
        </div>
      </dl>
      <p class="hint" data-testid={`best-${kind}`}>
        {best
          ? `Biggest gain: ${KEYS[best.key] ?? best.key} is missing on ${formatPercent((quality.missing[best.key] ?? 0) * 100)} of conversions; ${ADVICE[best.key] ?? ''} (+${best.scoreGain.toFixed(2)} points).`
          : 'Every conversion carries every match key this destination uses.'}
      </p>
      <div class="table-wrap">
        <table>
          <caption class="visually-hidden">{DESTINATIONS[kind]}: share of conversions missing each match key</caption>
          <thead>
            <tr>
              <th scope="col">Match key</th>
              <th scope="col">Missing on</th>
            </tr>
          </thead>
          <tbody>
            {Object.entries(quality.missing).map(([key, share]) => (
              <tr key={key}>
                <td>{KEYS[key] ?? key}</td>
                <td>{formatPercent(share * 100)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {warnings.length > 0 && (
        <ul class="hint">
          {warnings.map(([code, count]) => (
            <li key={code}>
              {WARNINGS[code] ?? code}: {formatInteger(count)} conversions
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function StoreQuality({ store, from, to }: { store: Store; from: string; to: string }) {
  const { mode } = useApp();
  const params = query({ storeId: store.id, startDate: from, endDate: to });
  const loaded = useApi(`${mode} ${params}`, () => api.get<MatchQualityView>(`/analytics/match-quality${params}`));
  if (loaded.error) return <ErrorMessage error={loaded.error} retry={loaded.reload} />;
  if (!loaded.data) return <Loading label="Loading match quality…" />;
  const kinds = (Object.keys(DESTINATIONS) as (keyof typeof DESTINATIONS)[]).filter((k) => loaded.data?.destinations[k]);
  if (kinds.length === 0) {
    return (
      <Empty title="No forwarded conversions on these days">
        <p>
          Match quality is measured for conversions sent to Meta, Google Ads, TikTok or Microsoft Advertising. Set up a
          destination on the <Link href={`${BASE}/stores/${store.id}`}>store's page</Link>.
        </p>
      </Empty>
    );
  }
  return (
    <div aria-busy={loaded.loading}>
      {kinds.map((kind) => (
        <Destination key={kind} kind={kind} quality={loaded.data?.destinations[kind] as DestinationQuality} />
      ))}
    </div>
  );
}

export function MatchQuality() {
  const { query: params } = useLocation();
  const stores = useApi('stores', loadAllStores);
  if (stores.error) return <ErrorMessage error={stores.error} retry={stores.reload} />;
  if (!stores.data) return <Loading />;
  if (stores.data.length === 0) {
    return (
      <section>
        <PageTitle>Match quality</PageTitle>
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
  return (
    <section>
      <PageTitle>Match quality</PageTitle>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <StoreSelect
          id="mq-store"
          label="Store"
          stores={stores.data}
          value={store.id}
          onChange={(id) => setQuery({ store: id })}
        />
        <div class="field">
          <label for="mq-from">From</label>
          <input
            id="mq-from"
            type="date"
            value={from}
            max={to}
            required
            onChange={(e) => setQuery({ from: e.currentTarget.value })}
          />
        </div>
        <div class="field">
          <label for="mq-to">To</label>
          <input
            id="mq-to"
            type="date"
            value={to}
            min={from}
            required
            onChange={(e) => setQuery({ to: e.currentTarget.value })}
          />
        </div>
      </form>
      <p class="hint">
        How well the conversions sent to each ad platform can be matched to its users: a score out of 10 from the match keys sent
        (see the API reference, "Match quality").
      </p>
      <StoreQuality store={store} from={from} to={to} />
    </section>
  );
}
