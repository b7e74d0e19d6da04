import { useState } from 'preact/hooks';
import { ApiError, api, type Mode } from '../api.js';
import { StoreSelect } from '../components/store-select.js';
import type { CreatedKey, Store } from '../types.js';

/** The scopes of api.md §1, with what each lets a key do. */
const SCOPES: Array<[string, string]> = [
  ['clicks:write', 'record clicks'],
  ['conversions:write', 'record and resend conversions'],
  ['conversions:read', 'read conversions'],
  ['clicks:read', 'read clicks'],
  ['stores:read', 'read stores'],
  ['stores:write', 'create and change stores'],
  ['analytics:read', 'read metrics and ad spend'],
  ['spend:write', 'record ad spend'],
];

interface Props {
  defaultMode: Mode;
  stores: Store[];
  onCreated(key: CreatedKey): void;
  onCancel(): void;
}

export function KeyForm({ defaultMode, stores, onCreated, onCancel }: Props) {
  const [publishable, setPublishable] = useState(false);
  const [all, setAll] = useState(true);
  const [storeId, setStoreId] = useState('');
  const [error, setError] = useState<ApiError>();
  const [busy, setBusy] = useState(false);
  const chosenStore = storeId || stores[0]?.id || '';

  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const name = String(form.get('name') ?? '').trim();
    const body: Record<string, unknown> = { mode: form.get('mode') === 'test' ? 'test' : 'live', ...(name && { name }) };
    if (publishable) {
      const origins = String(form.get('origins') ?? '')
        .split(/[\s,]+/)
        .filter(Boolean);
      Object.assign(body, { publishable: true, storeId: chosenStore, ...(origins.length > 0 && { origins }) });
    } else {
      body.scopes = all ? ['*'] : form.getAll('scope').map(String);
    }
    setBusy(true);
    setError(undefined);
    try {
      onCreated(await api.post<CreatedKey>('/keys', body));
    } catch (e) {
      setError(e instanceof ApiError ? e : new ApiError(0, 'client_error', String(e)));
      setBusy(false);
    }
  };

  return (
    <form onSubmit={submit}>
      <div class="field">
        <label for="key-name">Name</label>
        <input id="key-name" name="name" maxLength={100} placeholder="Checkout backend" />
      </div>
      <fieldset>
        <legend>Mode</legend>
        <label class="check">
          <input type="radio" name="mode" value="live" defaultChecked={defaultMode === 'live'} /> Live
        </label>
        <label class="check">
          <input type="radio" name="mode" value="test" defaultChecked={defaultMode === 'test'} /> Test
        </label>
      </fieldset>
      <label class="check">
        <input type="checkbox" checked={publishable} onChange={(e) => setPublishable(e.currentTarget.checked)} /> Publishable (for
        the browser tag: one store, clicks only)
      </label>
      {publishable ? (
        stores.length === 0 ? (
          <p class="hint">A publishable key belongs to a store: create a store first.</p>
        ) : (
          <>
            <StoreSelect id="key-store" label="Store" stores={stores} value={chosenStore} onChange={setStoreId} />
            <div class="field">
              <label for="key-origins">Allowed origins</label>
              <textarea
                id="key-origins"
                name="origins"
                rows={2}
                placeholder="https://checkout.example.com"
                aria-describedby="key-origins-hint"
              />
              <p class="hint" id="key-origins-hint">
                Optional, one per line. Pages on the store's domain and its subdomains are always allowed.
              </p>
            </div>
          </>
        )
      ) : (
        <fieldset>
          <legend>Scopes</legend>
          <label class="check">
            <input type="checkbox" checked={all} onChange={(e) => setAll(e.currentTarget.checked)} /> All scopes (*)
          </label>
          {!all &&
            SCOPES.map(([scope, meaning]) => (
              <label class="check" key={scope}>
                <input type="checkbox" name="scope" value={scope} /> <code>{scope}</code> — {meaning}
              </label>
            ))}
        </fieldset>
      )}
      {error && (
        <p class="error" role="alert">
          {error.message}
        </p>
      )}
      <div class="actions">
        <button type="submit" disabled={busy || (publishable && stores.length === 0)}>
          Create
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
