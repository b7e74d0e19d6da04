import { useApp } from '../app-state.js';
import { formatDateTime } from '../format.js';
import { BASE, Link } from '../router.js';
import type { Store } from '../types.js';
import { useApi } from '../use-api.js';
import { loadSpendSources, SPEND_NAMES } from './spend-sources.js';
import { ErrorMessage, Loading } from './status.js';

const STATUS_TEXT = { never: 'Not synced yet', ok: 'Synced', failing: 'Failing' } as const;
const STATUS_BADGE = { never: 'skipped', ok: 'sent', failing: 'failed' } as const;

/** The Channels page's view of the store's spend sources: which platforms' spend is in the figures, and since when. */
export function SpendSourcesStatus({ store }: { store: Store }) {
  const { mode } = useApp();
  const loaded = useApi(`${mode} spend-sources ${store.id}`, () => loadSpendSources(store.id));
  return (
    <section class="panel" aria-labelledby="spend-sources-heading">
      <h2 id="spend-sources-heading">Spend sources</h2>
      {loaded.error && <ErrorMessage error={loaded.error} retry={loaded.reload} />}
      {!loaded.data && !loaded.error && <Loading label="Loading spend sources…" />}
      {loaded.data && (
        <ul class="spend-sources">
          {loaded.data.map((source) => (
            <li key={source.kind}>
              <strong>{SPEND_NAMES[source.kind]}</strong>{' '}
              {source.configured ? (
                <>
                  <span class={`badge ${STATUS_BADGE[source.status]}`}>{STATUS_TEXT[source.status]}</span>
                  {source.syncedThrough && ` through ${source.syncedThrough}`}
                  {source.lastSyncedAt && ` · last sync ${formatDateTime(source.lastSyncedAt)}`}
                  {source.status === 'failing' && source.lastError && <p class="error-text">{source.lastError}</p>}
                </>
              ) : (
                <>
                  not connected: its spend counts only when posted through the API.{' '}
                  <Link href={`${BASE}/stores/${store.id}#spend-sources-panel`}>Connect it</Link>
                </>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
