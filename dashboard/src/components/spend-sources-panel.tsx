import { useState } from 'preact/hooks';
import { ApiError, api } from '../api.js';
import { useApp } from '../app-state.js';
import { formatDateTime } from '../format.js';
import type { Store } from '../types.js';
import { useApi } from '../use-api.js';
import {
  backfillDaysOf,
  loadSpendSources,
  SPEND_FIELDS,
  SPEND_KINDS,
  SPEND_NAMES,
  type SpendKind,
  type SpendSource,
  spendBodyOf,
  spendShown,
} from './spend-sources.js';
import { ErrorMessage, Loading } from './status.js';

const asApiError = (e: unknown) => (e instanceof ApiError ? e : new ApiError(0, 'client_error', String(e)));

/** One platform's spend source: PUT on save (blank secrets kept), sync now, DELETE after a confirmation. */
function SpendSourceForm({
  storeId,
  source,
  onChange,
}: {
  storeId: string;
  source: SpendSource;
  onChange(message: string): void;
}) {
  const { kind } = source;
  const name = SPEND_NAMES[kind];
  const [error, setError] = useState<ApiError>();
  const [busy, setBusy] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const url = `/stores/${storeId}/spend-sources/${kind}`;
  const id = (path: string) => `spend-${kind}-${path.replace('.', '-')}`;
  const errorField = error?.details?.field as string | undefined;

  const run = async (action: () => Promise<unknown>, message: string) => {
    setBusy(true);
    setError(undefined);
    try {
      await action();
      onChange(message);
    } catch (e) {
      setError(asApiError(e));
    } finally {
      setBusy(false);
    }
  };
  const save = (event: SubmitEvent) => {
    event.preventDefault();
    const body = spendBodyOf(kind, new FormData(event.currentTarget as HTMLFormElement));
    run(
      () => api.put(url, body),
      `${name} spend connected: the first sync fetches the last ${body.backfillDays ?? backfillDaysOf(source)} days.`,
    );
  };

  return (
    <form class="destination-form" onSubmit={save} noValidate>
      <div class="grid">
        {SPEND_FIELDS[kind].map((field) => {
          const invalid = errorField === field.path;
          const describedBy = [field.hint && `${id(field.path)}-hint`, invalid && `${id(field.path)}-error`]
            .filter(Boolean)
            .join(' ');
          const common = {
            id: id(field.path),
            name: field.path,
            'aria-invalid': invalid ? ('true' as const) : undefined,
            'aria-describedby': describedBy || undefined,
          };
          return (
            <div class="field" key={field.path}>
              <label for={id(field.path)}>{field.label}</label>
              {field.list ? (
                <textarea {...common} rows={2} defaultValue={spendShown(source, field)} />
              ) : field.secret ? (
                <input {...common} type="password" autocomplete="off" />
              ) : (
                <input {...common} type="text" autocomplete="off" defaultValue={spendShown(source, field)} />
              )}
              {field.hint && (
                <p class="hint" id={`${id(field.path)}-hint`}>
                  {field.hint}
                </p>
              )}
              {invalid && (
                <p class="error" id={`${id(field.path)}-error`} role="alert">
                  {error?.message}
                </p>
              )}
            </div>
          );
        })}
        <div class="field">
          <label for={id('backfillDays')}>Days to fetch at first</label>
          <input
            id={id('backfillDays')}
            name="backfillDays"
            type="number"
            min={1}
            max={90}
            defaultValue={String(backfillDaysOf(source))}
            aria-invalid={errorField === 'backfillDays' ? 'true' : undefined}
          />
        </div>
      </div>
      {error && errorField === 'backfillDays' && (
        <p class="error" role="alert">
          {error.message}
        </p>
      )}
      {error && (!errorField || errorField === 'kind') && <ErrorMessage error={error} />}
      <div class="actions">
        <button type="submit" disabled={busy}>
          {source.configured ? `Save ${name} spend` : `Connect ${name} spend`}
        </button>
        {source.configured && (
          <button
            type="button"
            class="secondary"
            disabled={busy}
            onClick={() => run(() => api.post(`${url}/sync`, {}), `${name} spend sync started.`)}
          >
            Sync {name} now
          </button>
        )}
        {source.configured && !confirming && (
          <button type="button" class="secondary" disabled={busy} onClick={() => setConfirming(true)}>
            Disconnect {name} spend
          </button>
        )}
      </div>
      {confirming && (
        <fieldset class="warning">
          <legend>Disconnect {name} spend?</legend>
          <p>Spend already synced stays; it is no longer updated from {name}.</p>
          <div class="actions">
            <button
              type="button"
              class="danger"
              onClick={() => {
                setConfirming(false);
                run(() => api.delete(url), `${name} spend disconnected.`);
              }}
            >
              Disconnect
            </button>
            <button type="button" class="secondary" onClick={() => setConfirming(false)}>
              Cancel
            </button>
          </div>
        </fieldset>
      )}
    </form>
  );
}

/** The store page's spend sources (api.md §11): spend pulled from the platforms, in the same form style as destinations. */
export function SpendSourcesPanel({ store }: { store: Store }) {
  const { mode } = useApp();
  const loaded = useApi(`${mode} spend-sources ${store.id}`, () => loadSpendSources(store.id));
  const [notice, setNotice] = useState<{ kind: SpendKind; message: string }>();
  if (loaded.error) return <ErrorMessage error={loaded.error} retry={loaded.reload} />;
  if (!loaded.data) return <Loading label="Loading spend sources…" />;
  return (
    <section class="panel" id="spend-sources-panel" aria-labelledby="spend-panel-heading">
      <h2 id="spend-panel-heading">Ad spend</h2>
      <p>
        Connect an ad account and Waytrack fetches each campaign's daily spend, every hour, so the Channels page shows ROAS
        without manual steps. Credentials left blank are taken from this store's destination of the same platform.
      </p>
      {SPEND_KINDS.map((kind) => {
        const source = loaded.data?.find((s) => s.kind === kind) ?? {
          kind,
          configured: false,
          accounts: [],
          status: 'never' as const,
        };
        return (
          // A group, not a region: the Destinations panel above has the platforms' regions.
          <fieldset class="destination spend-source" key={kind} aria-labelledby={`spend-${kind}-heading`}>
            <h3 id={`spend-${kind}-heading`}>{SPEND_NAMES[kind]} spend</h3>
            <p class="hint">
              <span class={`badge ${source.status === 'failing' ? 'failed' : source.configured ? 'sent' : 'skipped'}`}>
                {source.status === 'failing' ? 'Failing' : source.configured ? 'Connected' : 'Not connected'}
              </span>
              {source.lastSyncedAt && ` Last sync ${formatDateTime(source.lastSyncedAt)}`}
              {source.syncedThrough && `, spend through ${source.syncedThrough}.`}
            </p>
            {source.status === 'failing' && source.lastError && (
              <p class="error" role="alert">
                {source.lastError}
              </p>
            )}
            {notice?.kind === kind && (
              <p class="notice" role="status">
                {notice.message}
              </p>
            )}
            <SpendSourceForm
              key={`${kind} ${source.configured} ${source.lastSyncedAt ?? ''}`}
              storeId={store.id}
              source={source}
              onChange={(message) => {
                setNotice({ kind, message });
                loaded.reload();
              }}
            />
          </fieldset>
        );
      })}
    </section>
  );
}
