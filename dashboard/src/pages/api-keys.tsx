import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, api } from '../api.js';
import { useApp } from '../app-state.js';
import { CopyButton } from '../components/copy-button.js';
import { PageTitle } from '../components/page-title.js';
import { ErrorMessage, Loading } from '../components/status.js';
import { formatDate, formatDateTime } from '../format.js';
import { loadAllStores } from '../stores.js';
import type { ApiKey, CreatedKey } from '../types.js';
import { useApi } from '../use-api.js';
import { KeyForm } from './key-form.js';

/** The new key, shown this once, focused and selected so it can be copied at once. */
function NewKey({ created, onDone }: { created: CreatedKey; onDone(): void }) {
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    input.current?.focus();
    input.current?.select();
  }, []);
  return (
    <section class="panel new-key" aria-labelledby="new-key-heading">
      <h2 id="new-key-heading">Your new {created.mode} key</h2>
      <div class="field">
        <label for="new-key">New key</label>
        <input id="new-key" ref={input} readOnly value={created.key} class="mono" onFocus={(e) => e.currentTarget.select()} />
      </div>
      <CopyButton text={created.key} />
      <p class="warning">
        Copy it now and keep it somewhere safe: it will not be shown again. Only its last characters are kept.
      </p>
      <button type="button" class="secondary" onClick={onDone}>
        Done
      </button>
    </section>
  );
}

/** Asks before revoking: applications using the key stop working within 2 seconds (docs/api.md). */
function RevokeDialog({ apiKey, onClose, onRevoked }: { apiKey: ApiKey; onClose(): void; onRevoked(): void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [error, setError] = useState<ApiError>();
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    dialog.current?.showModal();
  }, []);
  const revoke = async () => {
    setBusy(true);
    try {
      await api.post(`/keys/${apiKey.keyId}/revoke`);
      onRevoked();
    } catch (e) {
      setError(e instanceof ApiError ? e : new ApiError(0, 'client_error', String(e)));
      setBusy(false);
    }
  };
  return (
    <dialog ref={dialog} aria-labelledby="revoke-heading" onClose={onClose}>
      <h2 id="revoke-heading">Revoke {apiKey.name}?</h2>
      <p>
        Requests with <code>{apiKey.hint}</code> will be refused within 2 seconds, on every instance. This cannot be undone.
      </p>
      {error && <ErrorMessage error={error} />}
      <div class="actions">
        <button type="button" class="danger" onClick={revoke} disabled={busy}>
          Revoke key
        </button>
        <button type="button" class="secondary" onClick={() => dialog.current?.close()}>
          Cancel
        </button>
      </div>
    </dialog>
  );
}

export function ApiKeys() {
  const { mode } = useApp();
  const keys = useApi('keys', () => api.get<{ keys: ApiKey[] }>('/keys'));
  const stores = useApi('stores', loadAllStores);
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<CreatedKey>();
  const [revoking, setRevoking] = useState<ApiKey>();
  const storeName = (id: string | null | undefined) => stores.data?.find((s) => s.id === id)?.name ?? id ?? '';

  return (
    <section>
      <PageTitle>API keys</PageTitle>
      <p class="hint">
        Secret keys (<code>wt_live_</code>, <code>wt_test_</code>) are for your servers; publishable keys (<code>wt_pk_</code>)
        are for the browser tag and can only record clicks for one store.
      </p>
      {created && (
        <NewKey
          created={created}
          onDone={() => {
            setCreated(undefined);
            keys.reload();
          }}
        />
      )}
      {!creating && !created && (
        <button type="button" onClick={() => setCreating(true)}>
          Create key
        </button>
      )}
      {creating && (
        <section class="panel" aria-labelledby="create-key-heading">
          <h2 id="create-key-heading">Create key</h2>
          <KeyForm
            defaultMode={mode}
            stores={stores.data ?? []}
            onCancel={() => setCreating(false)}
            onCreated={(key) => {
              setCreating(false);
              setCreated(key);
              keys.reload();
            }}
          />
        </section>
      )}
      {keys.error && <ErrorMessage error={keys.error} retry={keys.reload} />}
      {!keys.data && !keys.error && <Loading />}
      {keys.data && (
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">API keys of this account, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Mode</th>
                <th scope="col">Scopes</th>
                <th scope="col">Key</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {keys.data.keys.map((k) => (
                <tr key={k.keyId} class={k.revokedAt ? 'revoked' : undefined}>
                  <th scope="row">{k.name}</th>
                  <td>{k.mode === 'live' ? 'Live' : 'Test'}</td>
                  <td>
                    {k.kind === 'publishable'
                      ? `Publishable: clicks for ${storeName(k.storeId)}`
                      : k.scopes.includes('*')
                        ? 'All'
                        : k.scopes.join(', ')}
                  </td>
                  <td>
                    <code class="nowrap">{k.hint}</code>
                  </td>
                  <td class="nowrap">{formatDate(k.createdAt)}</td>
                  <td>{k.lastUsedAt ? formatDateTime(k.lastUsedAt) : 'Never'}</td>
                  <td>
                    {k.revokedAt ? (
                      `Revoked ${formatDate(k.revokedAt)}`
                    ) : (
                      <button type="button" class="danger small" onClick={() => setRevoking(k)} aria-label={`Revoke ${k.name}`}>
                        Revoke
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {revoking && (
        <RevokeDialog
          apiKey={revoking}
          onClose={() => setRevoking(undefined)}
          onRevoked={() => {
            setRevoking(undefined);
            keys.reload();
          }}
        />
      )}
    </section>
  );
}
