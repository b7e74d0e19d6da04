import { useState } from 'preact/hooks';
import { ApiError, api } from '../api.js';
import { formatDateTime } from '../format.js';
import { BASE, Link } from '../router.js';
import type { DestinationHealth, DestinationKind, DestinationTestResult, ListedDestination, Store } from '../types.js';
import { useApi } from '../use-api.js';
import { DESTINATION_NAMES } from './destinations-status.js';

/** Why a failing destination fails, in a sentence: its last error, or the job that has waited. */
export function healthReason(health: DestinationHealth): string {
  if (health.consecutiveFailures >= 5 && health.lastError) {
    return `${health.consecutiveFailures} attempts in a row failed. Last error: ${health.lastError}`;
  }
  const waiting = health.oldestPendingAt ? `A conversion has waited since ${formatDateTime(health.oldestPendingAt)}.` : '';
  return (
    [waiting, health.lastError && `Last error: ${health.lastError}`].filter(Boolean).join(' ') || 'Nothing was delivered lately.'
  );
}

const LABELS: Record<DestinationHealth['status'], { text: string; badge: string }> = {
  ok: { text: 'Delivering', badge: 'sent' },
  failing: { text: 'Failing', badge: 'failed' },
  unverified: { text: 'Not verified yet', badge: 'pending' },
};

/**
 * A configured destination's health (api.md §12): a badge, and when failing the reason in red;
 * `Test connection` checks the credentials against the platform now.
 */
export function DestinationHealthStatus({
  storeId,
  kind,
  health,
}: {
  storeId: string;
  kind: DestinationKind;
  health: DestinationHealth | undefined;
}) {
  const name = DESTINATION_NAMES[kind];
  const [result, setResult] = useState<DestinationTestResult>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const test = async () => {
    setBusy(true);
    setResult(undefined);
    setError(undefined);
    try {
      setResult(await api.post<DestinationTestResult>(`/stores/${storeId}/destinations/${kind}/test`));
    } catch (e) {
      setError(e instanceof ApiError ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };
  const label = health ? LABELS[health.status] : undefined;
  return (
    <div class="destination-health">
      {health && label && (
        <p>
          <span class={`badge ${label.badge}`} id={`dest-${kind}-health`}>
            {label.text}
          </span>
          {health.lastSuccessAt && ` Last delivered ${formatDateTime(health.lastSuccessAt)}.`}
        </p>
      )}
      {health?.status === 'failing' && (
        <p class="health-failing" id={`dest-${kind}-reason`}>
          <strong>{name} is failing.</strong> {healthReason(health)}
        </p>
      )}
      <button type="button" class="secondary" disabled={busy} onClick={test} aria-describedby={`dest-${kind}-test-result`}>
        Test connection
      </button>
      <p id={`dest-${kind}-test-result`} role="status" class={result ? (result.ok ? 'notice' : 'health-failing') : undefined}>
        {busy && `Checking ${name}…`}
        {result && `${result.ok ? '✓' : '✗'} ${result.message}`}
        {result?.platformMessage && ` (${name} said: ${result.platformMessage})`}
        {error}
      </p>
    </div>
  );
}

/** Most stores whose destinations the overview reads for its banner (one request each). */
const BANNER_STORES = 50;

/** The overview's banner: every failing destination of the account's stores, each with its reason and store link. */
export function FailingDestinationsBanner({ stores }: { stores: Store[] }) {
  const shown = stores.slice(0, BANNER_STORES);
  const loaded = useApi(`destination health ${shown.map((s) => s.id).join(',')}`, () =>
    Promise.all(
      shown.map(async (store) => ({
        store,
        destinations: (await api.get<{ destinations: ListedDestination[] }>(`/stores/${store.id}/destinations`)).destinations,
      })),
    ),
  );
  const failing = (loaded.data ?? []).flatMap(({ store, destinations }) =>
    destinations.filter((d) => d.configured && d.health.status === 'failing').map((d) => ({ store, destination: d })),
  );
  if (failing.length === 0) return null;
  return (
    <section class="banner-failing" role="alert" aria-labelledby="failing-destinations-heading">
      <h2 id="failing-destinations-heading">
        {failing.length === 1 ? 'A destination is failing' : `${failing.length} destinations are failing`}
      </h2>
      <ul>
        {failing.map(({ store, destination }) => (
          <li key={`${store.id} ${destination.kind}`}>
            <strong>
              {DESTINATION_NAMES[destination.kind]} for {store.name}:
            </strong>{' '}
            {healthReason(destination.health)}{' '}
            <Link href={`${BASE}/stores/${store.id}#destinations-heading`}>Open {store.name}'s destinations</Link>
          </li>
        ))}
      </ul>
    </section>
  );
}
