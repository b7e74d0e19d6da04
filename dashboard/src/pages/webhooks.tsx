import { useState } from 'preact/hooks';
import { ApiError, api, query } from '../api.js';
import { useApp } from '../app-state.js';
import { CopyButton } from '../components/copy-button.js';
import { PageTitle } from '../components/page-title.js';
import { Empty, ErrorMessage, Loading } from '../components/status.js';
import { formatDateTime } from '../format.js';
import type { CreatedWebhook, Delivery, DeliveryList, Webhook, WebhookEventType, WebhookList } from '../types.js';
import { useApi } from '../use-api.js';

const EVENTS: Array<{ type: WebhookEventType; hint: string }> = [
  { type: 'conversion.attributed', hint: 'a conversion was attributed to an ad click' },
  { type: 'conversion.forwarding_failed', hint: 'a conversion could not be sent to an ad platform' },
  { type: 'refund.recorded', hint: 'a refund was recorded' },
  { type: 'store.updated', hint: 'a store’s settings changed' },
  {
    type: 'destination.failing',
    hint: 'a store’s destination stopped delivering (5 failures in a row, or a conversion waiting too long)',
  },
  { type: 'destination.recovered', hint: 'a failing destination delivers again' },
  { type: 'spend_source.failing', hint: 'a store’s spend source could not pull its platform’s spend' },
  { type: 'spend_source.recovered', hint: 'a failing spend source pulls spend again' },
];
const PAGE_SIZE = 20;

const asApiError = (e: unknown) => (e instanceof ApiError ? e : new ApiError(0, 'client_error', String(e)));

/** url + events checkboxes; the API's error beside the field it names. */
function CreateForm({ onCreated }: { onCreated(created: CreatedWebhook): void }) {
  const [error, setError] = useState<ApiError>();
  const [busy, setBusy] = useState(false);
  const field = typeof error?.details?.field === 'string' ? error.details.field : undefined;
  const fieldOf = field?.startsWith('events') ? 'events' : field === 'url' || field === 'description' ? field : undefined;

  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const description = String(form.get('description') ?? '').trim();
    setBusy(true);
    setError(undefined);
    try {
      onCreated(
        await api.post<CreatedWebhook>('/webhooks', {
          url: String(form.get('url') ?? '').trim(),
          events: form.getAll('events').map(String),
          ...(description ? { description } : {}),
        }),
      );
    } catch (e) {
      setError(asApiError(e));
    } finally {
      setBusy(false);
    }
  };
  const problem = (name: string) =>
    fieldOf === name && (
      <p class="error" id={`webhook-${name}-error`} role="alert">
        {error?.message}
      </p>
    );

  return (
    <form onSubmit={submit} noValidate>
      <div class="field wide">
        <label for="webhook-url">Endpoint URL</label>
        <input
          id="webhook-url"
          name="url"
          type="url"
          autocomplete="off"
          placeholder="https://shop.example.com/hooks/waytrack"
          aria-invalid={fieldOf === 'url' ? 'true' : undefined}
          aria-describedby={fieldOf === 'url' ? 'webhook-url-error' : undefined}
        />
        {problem('url')}
      </div>
      <fieldset
        aria-invalid={fieldOf === 'events' ? 'true' : undefined}
        aria-describedby={fieldOf === 'events' ? 'webhook-events-error' : undefined}
      >
        <legend>Events</legend>
        {EVENTS.map(({ type, hint }) => (
          <label key={type} class="check">
            <input type="checkbox" name="events" value={type} /> <code>{type}</code> <span class="hint">{hint}</span>
          </label>
        ))}
        {problem('events')}
      </fieldset>
      <div class="field wide">
        <label for="webhook-description">Description (optional)</label>
        <input id="webhook-description" name="description" type="text" autocomplete="off" />
        {problem('description')}
      </div>
      {error && !fieldOf && <ErrorMessage error={error} />}
      <div class="actions">
        <button type="submit" disabled={busy}>
          Add endpoint
        </button>
      </div>
    </form>
  );
}

function statusText(webhook: Webhook): string {
  if (webhook.status === 'enabled') return 'Enabled';
  const when = webhook.disabledAt ? ` since ${formatDateTime(webhook.disabledAt)}` : '';
  return `Disabled${when}${webhook.disabledReason ? `: ${webhook.disabledReason}` : ''}`;
}

/** One endpoint's attempts, newest first, a page at a time; each can be sent again. */
function Deliveries({ webhook }: { webhook: Webhook }) {
  const { mode } = useApp();
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors[cursors.length - 1];
  const list = useApi(`deliveries ${mode} ${webhook.id} ${cursor ?? ''}`, () =>
    api.get<DeliveryList>(`/webhooks/${webhook.id}/deliveries${query({ limit: PAGE_SIZE, cursor })}`),
  );
  const [resent, setResent] = useState<Delivery[]>([]);
  const [notice, setNotice] = useState<string>();
  const [error, setError] = useState<ApiError>();
  const [busy, setBusy] = useState<string>();

  const resend = async (delivery: Delivery) => {
    setBusy(delivery.id);
    setError(undefined);
    setNotice(undefined);
    try {
      const attempt = await api.post<Delivery>(`/webhooks/${webhook.id}/deliveries/${delivery.id}/resend`);
      setResent((r) => [attempt, ...r]);
      setNotice(
        `Re-sent ${attempt.event}: attempt ${attempt.attempt} ${attempt.status}${attempt.responseCode === null ? '' : ` (HTTP ${attempt.responseCode})`}.`,
      );
    } catch (e) {
      setError(asApiError(e));
    } finally {
      setBusy(undefined);
    }
  };

  if (list.error) return <ErrorMessage error={list.error} retry={list.reload} />;
  if (!list.data) return <Loading label="Loading deliveries…" />;
  // Attempts made here since the page loaded come first (the first page only: the newest).
  const listedIds = new Set(list.data.deliveries.map((d) => d.id));
  const rows = [...(cursor ? [] : resent.filter((d) => !listedIds.has(d.id))), ...list.data.deliveries];

  return (
    <section aria-labelledby="deliveries-heading">
      <h2 id="deliveries-heading">Deliveries to {webhook.url}</h2>
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      {error && <ErrorMessage error={error} />}
      {rows.length === 0 ? (
        <Empty title="No deliveries yet">Attempts appear here as soon as one of its events happens.</Empty>
      ) : (
        <div class="table-wrap" aria-busy={list.loading}>
          <table>
            <caption class="visually-hidden">Delivery attempts, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Event</th>
                <th scope="col">Attempt</th>
                <th scope="col">Status</th>
                <th scope="col">Response</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((d) => (
                <tr key={d.id}>
                  <td>{formatDateTime(d.at)}</td>
                  <td>
                    <code>{d.event}</code>
                  </td>
                  <td>{d.attempt}</td>
                  <td>
                    <span class={`badge ${d.status === 'succeeded' ? 'sent' : 'failed'}`}>
                      {d.status === 'succeeded' ? 'Succeeded' : 'Failed'}
                    </span>
                    {d.error && <span class="hint"> {d.error}</span>}
                  </td>
                  <td>{d.responseCode ?? '—'}</td>
                  <td>
                    <button
                      type="button"
                      class="secondary"
                      disabled={busy !== undefined}
                      aria-label={`Re-send ${d.event} attempt ${d.attempt}`}
                      onClick={() => resend(d)}
                    >
                      {busy === d.id ? 'Sending…' : 'Re-send'}
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <nav class="pager" aria-label="Delivery pages">
        <button type="button" class="secondary" disabled={cursors.length === 0} onClick={() => setCursors(cursors.slice(0, -1))}>
          Previous page
        </button>
        <button
          type="button"
          class="secondary"
          disabled={!list.data.hasMore}
          onClick={() => list.data?.nextCursor && setCursors([...cursors, list.data.nextCursor])}
        >
          Next page
        </button>
      </nav>
    </section>
  );
}

/** Webhooks out (api.md §9): the account's endpoints in this mode, their deliveries, re-sends. */
export function Webhooks() {
  const { mode } = useApp();
  const list = useApi(`webhooks ${mode}`, () => api.get<WebhookList>('/webhooks?limit=100'));
  const [created, setCreated] = useState<CreatedWebhook>();
  const [selected, setSelected] = useState<string>();
  const [confirming, setConfirming] = useState<string>();
  const [notice, setNotice] = useState<string>();
  const [error, setError] = useState<ApiError>();

  const remove = async (webhook: Webhook) => {
    setConfirming(undefined);
    setError(undefined);
    try {
      await api.delete<Webhook>(`/webhooks/${webhook.id}`);
      if (selected === webhook.id) setSelected(undefined);
      if (created?.id === webhook.id) setCreated(undefined);
      setNotice(`Endpoint ${webhook.url} removed: nothing more is sent to it.`);
      list.reload();
    } catch (e) {
      setError(asApiError(e));
    }
  };
  const webhooks = list.data?.webhooks;
  const current = webhooks?.find((w) => w.id === selected);

  return (
    <section>
      <PageTitle>Webhooks</PageTitle>
      <p class="hint">
        Endpoints of yours that receive {mode} events, signed per Standard Webhooks with the endpoint’s secret. Failed deliveries
        are retried for 3 days; then the endpoint is disabled.
      </p>
      {created && (
        <section class="panel warning" aria-labelledby="secret-heading">
          <h2 id="secret-heading">Signing secret of {created.url}</h2>
          <p>
            <strong>Copy it now: it is shown only this once.</strong> Your endpoint needs it to check each delivery’s signature.
          </p>
          <p>
            <code data-testid="webhook-secret">{created.secret}</code>{' '}
            <CopyButton text={created.secret ?? ''} label="Copy secret" />
          </p>
          <button type="button" class="secondary" onClick={() => setCreated(undefined)}>
            I have copied it
          </button>
        </section>
      )}
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      {error && <ErrorMessage error={error} />}
      <section class="panel" aria-labelledby="endpoints-heading">
        <h2 id="endpoints-heading">Endpoints</h2>
        {list.error ? (
          <ErrorMessage error={list.error} retry={list.reload} />
        ) : !webhooks ? (
          <Loading label="Loading endpoints…" />
        ) : webhooks.length === 0 ? (
          <Empty title="No endpoints yet">Add one below to receive events.</Empty>
        ) : (
          <ul class="endpoints">
            {webhooks.map((w) => (
              <li key={w.id} aria-label={w.url}>
                <p>
                  <code>{w.url}</code>
                  {w.description && ` · ${w.description}`}
                </p>
                <p class="hint">
                  <span class={`badge ${w.status === 'enabled' ? 'sent' : 'failed'}`}>{statusText(w)}</span> ·{' '}
                  {w.events.join(', ')}
                </p>
                <div class="actions">
                  <button type="button" class="secondary" aria-pressed={selected === w.id} onClick={() => setSelected(w.id)}>
                    Show deliveries
                  </button>
                  <button type="button" class="secondary" onClick={() => setConfirming(w.id)}>
                    Delete
                  </button>
                </div>
                {confirming === w.id && (
                  <fieldset class="warning">
                    <legend>Delete this endpoint?</legend>
                    <p>Nothing more is sent to {w.url}; its pending messages and its delivery history are deleted.</p>
                    <div class="actions">
                      <button type="button" class="danger" onClick={() => remove(w)}>
                        Delete endpoint
                      </button>
                      <button type="button" class="secondary" onClick={() => setConfirming(undefined)}>
                        Cancel
                      </button>
                    </div>
                  </fieldset>
                )}
              </li>
            ))}
          </ul>
        )}
      </section>
      {current && (
        <section class="panel">
          <Deliveries key={current.id} webhook={current} />
        </section>
      )}
      <section class="panel" aria-labelledby="add-heading">
        <h2 id="add-heading">Add an endpoint</h2>
        <CreateForm
          onCreated={(w) => {
            setCreated(w);
            setNotice(undefined);
            list.reload();
          }}
        />
      </section>
    </section>
  );
}
