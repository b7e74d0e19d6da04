import { useState } from 'preact/hooks';
import { ApiError, api } from '../api.js';
import { formatDateTime } from '../format.js';
import { BASE, Link } from '../router.js';
import type { Destination, DestinationKind, ListedDestination, Store } from '../types.js';
import { useApi } from '../use-api.js';
import { bodyOf, DESTINATION_FIELDS, FieldProblem, fieldOf, secretConfigured, shownValue } from './destination-fields.js';
import { DestinationHealthStatus } from './destination-health.js';
import { DESTINATION_NAMES } from './destinations-status.js';
import { ErrorMessage, Loading } from './status.js';

const KINDS: DestinationKind[] = ['meta', 'google_ads', 'tiktok', 'microsoft', 'pinterest', 'snapchat', 'reddit', 'linkedin'];

const asApiError = (e: unknown) =>
  e instanceof FieldProblem
    ? new ApiError(0, 'invalid_request', e.message, { field: e.field })
    : e instanceof ApiError
      ? e
      : new ApiError(0, 'client_error', String(e));

interface FormProps {
  storeId: string;
  destination: Destination;
  onChange(destination: Destination, message: string): void;
}

/** One platform's settings: PUT on save (blank secrets kept), DELETE after a confirmation. */
function DestinationForm({ storeId, destination, onChange }: FormProps) {
  const { kind, settings, configured } = destination;
  const name = DESTINATION_NAMES[kind];
  const [error, setError] = useState<ApiError>();
  const [busy, setBusy] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const id = (path: string) => `dest-${kind}-${path.replace('.', '-')}`;
  const errorField = fieldOf(kind, error?.details?.field);
  const url = `/stores/${storeId}/destinations/${kind}`;

  const run = async (action: () => Promise<Destination>, message: string) => {
    setBusy(true);
    setError(undefined);
    try {
      onChange(await action(), message);
    } catch (e) {
      setError(asApiError(e));
    } finally {
      setBusy(false);
    }
  };
  const save = (event: SubmitEvent) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    run(() => api.put<Destination>(url, bodyOf(kind, form)), `${name} settings saved.`);
  };
  const remove = () => {
    setConfirming(false);
    run(() => api.delete<Destination>(url), `${name} removed: conversions are no longer sent there.`);
  };

  return (
    <form class="destination-form" onSubmit={save} noValidate>
      <div class="grid">
        {DESTINATION_FIELDS[kind].map((spec) => {
          const invalid = errorField === spec.path;
          const hint = spec.secret
            ? `${
                secretConfigured(settings, spec)
                  ? 'Configured. It is never shown again; leave blank to keep it, or type a new one to replace it.'
                  : 'Not configured. Write-only: once saved it is never shown again.'
              }${spec.hint ? ` ${spec.hint}` : ''}`
            : spec.hint;
          const describedBy = [hint && `${id(spec.path)}-hint`, invalid && `${id(spec.path)}-error`].filter(Boolean).join(' ');
          const common = {
            id: id(spec.path),
            name: spec.path,
            'aria-invalid': invalid ? ('true' as const) : undefined,
            'aria-describedby': describedBy || undefined,
          };
          return (
            <div class={spec.actions ? 'field wide' : 'field'} key={spec.path}>
              <label for={id(spec.path)}>{spec.label}</label>
              {spec.actions ? (
                <textarea {...common} rows={3} defaultValue={shownValue(settings, spec)} />
              ) : spec.choices ? (
                // The stored choice is the option marked selected (a select has no defaultValue in the DOM).
                <select {...common}>
                  {spec.choices.map((choice) => (
                    <option value={choice.value} key={choice.value} selected={choice.value === shownValue(settings, spec)}>
                      {choice.label}
                    </option>
                  ))}
                </select>
              ) : spec.secret ? (
                <input {...common} type="password" autocomplete="off" />
              ) : (
                <input {...common} type="text" autocomplete="off" defaultValue={shownValue(settings, spec)} />
              )}
              {hint && (
                <p class="hint" id={`${id(spec.path)}-hint`}>
                  {hint}
                </p>
              )}
              {invalid && (
                <p class="error" id={`${id(spec.path)}-error`} role="alert">
                  {error?.message}
                </p>
              )}
            </div>
          );
        })}
      </div>
      {error && !errorField && <ErrorMessage error={error} />}
      <div class="actions">
        <button type="submit" disabled={busy}>
          Save {name}
        </button>
        {configured && !confirming && (
          <button type="button" class="secondary" disabled={busy} onClick={() => setConfirming(true)}>
            Remove {name}
          </button>
        )}
      </div>
      {confirming && (
        <fieldset class="warning">
          <legend>Remove {name}?</legend>
          <p>Stop forwarding to {name}? Its settings and secrets are deleted; conversions already queued for it fail.</p>
          <div class="actions">
            <button type="button" class="danger" onClick={remove}>
              Remove
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

/**
 * The store's destinations (api.md §8): each platform's state and settings form. Meta's are the
 * store's pixelId, capiAccessToken and capiTestEventCode, so a change there reloads the store.
 */
export function DestinationsPanel({ store, onMetaChange }: { store: Store; onMetaChange(): void }) {
  const loaded = useApi(`destinations ${store.id}`, () =>
    api.get<{ destinations: ListedDestination[] }>(`/stores/${store.id}/destinations`),
  );
  const [changed, setChanged] = useState<Partial<Record<DestinationKind, Destination>>>({});
  const [notice, setNotice] = useState<{ kind: DestinationKind; message: string }>();

  if (loaded.error) return <ErrorMessage error={loaded.error} retry={loaded.reload} />;
  const listed = loaded.data?.destinations;
  if (!listed) return <Loading label="Loading destinations…" />;

  const onChange = (destination: Destination, message: string) => {
    setChanged((c) => ({ ...c, [destination.kind]: destination }));
    setNotice({ kind: destination.kind, message });
    if (destination.kind === 'meta') onMetaChange();
  };

  return (
    <section class="panel" aria-labelledby="destinations-heading">
      <h2 id="destinations-heading">Destinations</h2>
      <p>
        Where this store's conversions are forwarded, so each ad platform optimizes on them. Each conversion's delivery to each
        platform is on its page (<Link href={`${BASE}/conversions?store=${store.id}`}>conversions of this store</Link>).
      </p>
      {KINDS.map((kind) => {
        const fromList = listed.find((d) => d.kind === kind);
        const destination = changed[kind] ?? fromList;
        if (!destination) return null;
        const name = DESTINATION_NAMES[kind];
        return (
          <section class="destination" key={kind} aria-labelledby={`dest-${kind}-heading`}>
            <h3 id={`dest-${kind}-heading`}>{name}</h3>
            <p class="hint">
              <span class={`badge ${destination.configured ? 'sent' : 'skipped'}`}>
                {destination.configured ? 'Configured' : 'Not configured'}
              </span>
              {destination.updatedAt && ` Last changed ${formatDateTime(destination.updatedAt)}.`}
            </p>
            {destination.configured && (
              <DestinationHealthStatus storeId={store.id} kind={kind} health={changed[kind] ? undefined : fromList?.health} />
            )}
            {notice?.kind === kind && (
              <p class="notice" role="status">
                {notice.message}
              </p>
            )}
            {/* A new form after each change: secrets typed there leave the page, stored values show. */}
            <DestinationForm
              key={`${kind} ${destination.updatedAt ?? 'none'}`}
              storeId={store.id}
              destination={destination}
              onChange={onChange}
            />
          </section>
        );
      })}
    </section>
  );
}
