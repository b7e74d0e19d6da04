import { useState } from 'preact/hooks';
import { type ApiError, api } from '../api.js';
import { useApp } from '../app-state.js';
import { ErrorMessage } from '../components/status.js';
import { BASE, Link } from '../router.js';
import type { CreatedKey, Store } from '../types.js';

/** Makes a publishable key of the store (in the current mode) and puts it into the tag snippet. */
export function PublishableKeyButton({ store, onCreated }: { store: Store; onCreated(key: string): void }) {
  const { mode } = useApp();
  const [error, setError] = useState<ApiError>();
  const [created, setCreated] = useState<CreatedKey>();
  const [busy, setBusy] = useState(false);

  const create = async () => {
    setBusy(true);
    setError(undefined);
    try {
      const key = await api.post<CreatedKey>('/keys', { mode, publishable: true, storeId: store.id });
      setCreated(key);
      onCreated(key.key);
    } catch (e) {
      setError(e as ApiError);
    } finally {
      setBusy(false);
    }
  };

  if (created) {
    return (
      <p class="notice" role="status">
        The snippet above now holds a new {created.mode} publishable key. Copy it now: the key is not shown again (it is listed
        under <Link href={`${BASE}/settings/api-keys`}>API keys</Link> by its last characters).
      </p>
    );
  }
  return (
    <div class="actions">
      <button type="button" class="secondary" onClick={create} disabled={busy}>
        Create {mode} publishable key
      </button>
      <span class="hint">Or use one you created before: keys are shown in full only once.</span>
      {error && <ErrorMessage error={error} />}
    </div>
  );
}
