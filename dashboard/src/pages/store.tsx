import { useState } from 'preact/hooks';
import { type ApiError, api } from '../api.js';
import { useApp } from '../app-state.js';
import { DestinationsPanel } from '../components/destinations-panel.js';
import { PageTitle } from '../components/page-title.js';
import { ShopWebhooksPanel } from '../components/shop-webhooks-panel.js';
import { SpendSourcesPanel } from '../components/spend-sources-panel.js';
import { ErrorMessage, Loading } from '../components/status.js';
import { platformName, type StoreFields, StoreForm } from '../components/store-form.js';
import { TagSnippet } from '../components/tag-snippet.js';
import { BASE, Link, useLocation } from '../router.js';
import type { ApiKey, Store } from '../types.js';
import { useApi } from '../use-api.js';
import { PublishableKeyButton } from './publishable-key.js';

function StatusControl({ store, onChange }: { store: Store; onChange(store: Store): void }) {
  const [error, setError] = useState<ApiError>();
  const active = store.status === 'active';
  const toggle = async () => {
    setError(undefined);
    try {
      onChange(await api.patch<Store>(`/stores/${store.id}`, { status: active ? 'inactive' : 'active' }));
    } catch (e) {
      setError(e as ApiError);
    }
  };
  return (
    <section class="panel" aria-labelledby="status-heading">
      <h2 id="status-heading">Status: {active ? 'Active' : 'Inactive'}</h2>
      <p>
        {active
          ? 'Deactivating stops recording: new clicks and conversions for this store are refused. Its data stays readable.'
          : 'This store refuses new clicks and conversions. Reactivate it to record again.'}
      </p>
      <button type="button" class={active ? 'danger' : undefined} onClick={toggle}>
        {active ? 'Deactivate' : 'Reactivate'}
      </button>
      {error && <ErrorMessage error={error} />}
    </section>
  );
}

export function StorePage({ id }: { id: string }) {
  const { query } = useLocation();
  const { mode } = useApp();
  const loaded = useApi(`store ${id}`, () => api.get<Store>(`/stores/${id}`));
  const [store, setStore] = useState<Store>();
  const [saved, setSaved] = useState(false);
  const [publishableKey, setPublishableKey] = useState<string>();
  const current = store?.id === id ? store : loaded.data;
  // Whether the store already has a publishable key in this mode (the snippet says which one it needs).
  const keys = useApi('keys', () => api.get<{ keys: ApiKey[] }>('/keys'));
  const existingKey = keys.data?.keys.find(
    (k) => k.kind === 'publishable' && k.storeId === id && k.mode === mode && k.revokedAt === null,
  );
  const existingHint = keys.data ? (existingKey?.hint ?? null) : undefined;

  if (loaded.error) {
    return (
      <section>
        <PageTitle>Store</PageTitle>
        <ErrorMessage error={loaded.error} retry={loaded.error.status === 404 ? undefined : loaded.reload} />
        <p>
          <Link href={`${BASE}/stores`}>Back to stores</Link>
        </p>
      </section>
    );
  }
  if (!current) return <Loading />;

  const save = async (fields: StoreFields) => {
    setSaved(false);
    setStore(await api.patch<Store>(`/stores/${id}`, fields));
    setSaved(true);
  };

  return (
    <section>
      <p class="crumbs">
        <Link href={`${BASE}/stores`}>Stores</Link>
      </p>
      <PageTitle>{current.name}</PageTitle>
      <p class="hint">
        {current.domain} · {platformName(current.platform)} · {current.status === 'active' ? 'Active' : 'Inactive'} · Meta
        forwarding {current.capiConfigured ? 'configured' : 'not configured'} · <code>{current.id}</code>
      </p>
      {query.get('created') === '1' && (
        <p class="notice" role="status">
          Store created. Add the tag below to every page of {current.domain} to record ad clicks.
        </p>
      )}

      <section class="panel" aria-labelledby="tag-heading">
        <h2 id="tag-heading">Browser tag</h2>
        <p>
          Paste this into the <code>&lt;head&gt;</code> of every page of the shop. It records visits from Meta ads with a {mode}{' '}
          publishable key of this store (it can only record clicks, from {current.domain}).
        </p>
        <TagSnippet publishableKey={publishableKey} existingHint={existingHint} />
        <PublishableKeyButton store={current} onCreated={setPublishableKey} />
      </section>

      <section class="panel" aria-labelledby="settings-heading">
        <h2 id="settings-heading">Settings</h2>
        <StoreForm key={current.id} store={current} submitLabel="Save changes" onSubmit={save} />
        {saved && (
          <p class="notice" role="status">
            Changes saved.
          </p>
        )}
      </section>

      <DestinationsPanel
        store={current}
        onMetaChange={() => {
          api.get<Store>(`/stores/${id}`).then(setStore, () => loaded.reload());
        }}
      />

      <SpendSourcesPanel store={current} />

      <ShopWebhooksPanel store={current} onChange={setStore} />

      <StatusControl store={current} onChange={setStore} />
    </section>
  );
}
