import { useState } from 'preact/hooks';
import { ApiError, api } from '../api.js';
import { useApp } from '../app-state.js';
import { ClickId, KeyedClickId } from '../components/click-id.js';
import { ConsentPanel } from '../components/consent-panel.js';
import { DestinationsStatus } from '../components/destinations-status.js';
import { PageTitle } from '../components/page-title.js';
import { ErrorMessage, Loading } from '../components/status.js';
import { formatDateTime, formatMoney, subtractMoney } from '../format.js';
import { CAPI_STATUS, canResend, SIGNALS } from '../labels.js';
import { BASE, Link } from '../router.js';
import type { Conversion, ExplainedConversion, Store } from '../types.js';
import { useApi } from '../use-api.js';

function Attribution({ conversion, store }: { conversion: ExplainedConversion; store?: Store }) {
  const { attribution, attributedTo } = conversion;
  const signal = attribution.signal ? SIGNALS[attribution.signal] : undefined;
  return (
    <section class="panel" aria-labelledby="attribution-heading">
      <h2 id="attribution-heading">Attribution</h2>
      {attributedTo && signal ? (
        <p>
          Attributed to click <code>{attributedTo.clickId}</code> (<ClickId attributedTo={attributedTo} />) with{' '}
          <strong>{attributedTo.confidenceScore}% confidence</strong>. Signal: <strong>{signal.name}</strong> — {signal.meaning}.
        </p>
      ) : attribution.message ? (
        <p>Not attributed. {attribution.message}.</p>
      ) : (
        <p>
          Not attributed: no click of this store{store ? ` in its ${store.attributionWindowDays}-day window` : ''} scored at least
          the store's minimum confidence{store ? ` (${store.minConfidence})` : ''}.
          {attribution.signal && attribution.score !== null && ` The best candidate scored ${attribution.score}.`}
        </p>
      )}
      {attribution.touchpoints.length > 0 && (
        <div class="table-wrap">
          <table>
            <caption>Touchpoints: the attributed click and the buyer's other clicks in the window from the same browser</caption>
            <thead>
              <tr>
                <th scope="col">Click</th>
                <th scope="col">Click id</th>
                <th scope="col">Signal</th>
                <th scope="col" class="number">
                  Score
                </th>
                <th scope="col">Click time</th>
              </tr>
            </thead>
            <tbody>
              {attribution.touchpoints.map((t) => (
                <tr key={t.clickId}>
                  <td>
                    <code>{t.clickId}</code>
                  </td>
                  <td>
                    <KeyedClickId keyValue={t.fbclid} />
                  </td>
                  <td>{SIGNALS[t.signal].name}</td>
                  <td class="number">{t.score}</td>
                  <td>{formatDateTime(t.clickTime)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {attribution.candidates.length > 0 && (
        <div class="table-wrap">
          <table>
            <caption>
              Candidates as scored: how likely each is the buyer's most recent ad click, and the evidence behind it (how many
              browsers with a click in the window shared each piece)
            </caption>
            <thead>
              <tr>
                <th scope="col">Click</th>
                <th scope="col">Evidence</th>
                <th scope="col" class="number">
                  Confidence
                </th>
                <th scope="col">Click time</th>
              </tr>
            </thead>
            <tbody>
              {attribution.candidates.map((c) => (
                <tr key={c.clickId}>
                  <td>
                    <code>{c.clickId}</code>
                  </td>
                  <td>
                    {c.evidence
                      .map((e) => `${SIGNALS[e.kind].name}${e.sharedBy > 1 ? ` (shared by ${e.sharedBy} browsers)` : ''}`)
                      .join(', ')}
                  </td>
                  <td class="number">{c.confidence}%</td>
                  <td>{formatDateTime(c.clickTime)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function Forwarding({ conversion, store, onResent }: { conversion: Conversion; store?: Store; onResent(): void }) {
  const [error, setError] = useState<ApiError>();
  const [busy, setBusy] = useState(false);
  const { capi } = conversion;
  const resend = async () => {
    setBusy(true);
    setError(undefined);
    try {
      await api.post(`/conversions/${conversion.conversionId}/resend`);
      onResent();
    } catch (e) {
      setError(e instanceof ApiError ? e : new ApiError(0, 'client_error', String(e)));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="panel" aria-labelledby="forwarding-heading">
      <h2 id="forwarding-heading">Forwarding to Meta</h2>
      <dl class="facts">
        <div>
          <dt>Status</dt>
          <dd>
            <span class={`badge ${capi.status}`}>{CAPI_STATUS[capi.status]}</span>
          </dd>
        </div>
        <div>
          <dt>Attempts</dt>
          <dd>{capi.attempts}</dd>
        </div>
        {capi.sentAt && (
          <div>
            <dt>Sent</dt>
            <dd>{formatDateTime(capi.sentAt)}</dd>
          </div>
        )}
        {capi.lastError && (
          <div>
            <dt>Meta's last error</dt>
            <dd>{capi.lastError}</dd>
          </div>
        )}
      </dl>
      {capi.status === 'skipped' && capi.message && <p class="hint">{capi.message}.</p>}
      {capi.status === 'skipped' && !capi.lastError && !capi.message && (
        <p class="hint">
          Skipped: the store had no pixel ID and access token when the conversion arrived, or the event was over 7 days old.
        </p>
      )}
      {capi.status === 'pending' && (
        <p class="hint">Queued: the dispatcher is delivering it, retrying Meta's temporary errors.</p>
      )}
      {canResend(capi.status) &&
        store &&
        (store.capiConfigured ? (
          <button type="button" onClick={resend} disabled={busy}>
            Resend
          </button>
        ) : (
          <p class="hint">
            To send it, configure forwarding (pixel ID and access token) on the{' '}
            <Link href={`${BASE}/stores/${store.id}`}>store's page</Link>, then come back to resend it.
          </p>
        ))}
      {error && <ErrorMessage error={error} />}
    </section>
  );
}

export function ConversionPage({ id }: { id: string }) {
  const { mode } = useApp();
  const loaded = useApi(`${mode} conversion ${id}`, () => api.get<ExplainedConversion>(`/conversions/${id}`));
  const storeId = loaded.data?.storeId;
  const store = useApi(storeId ? `store ${storeId}` : null, () => api.get<Store>(`/stores/${storeId}`));
  const back = (
    <p class="crumbs">
      <Link href={`${BASE}/conversions`}>Conversions</Link>
    </p>
  );
  if (loaded.error) {
    return (
      <section>
        {back}
        <PageTitle>Conversion</PageTitle>
        <ErrorMessage error={loaded.error} retry={loaded.error.status === 404 ? undefined : loaded.reload} />
        {loaded.error.status === 404 && (
          <p class="hint">A conversion is shown in the mode it was recorded in: check the Test mode switch.</p>
        )}
      </section>
    );
  }
  const c = loaded.data;
  if (!c) return <Loading />;
  return (
    <section>
      {back}
      <PageTitle>{`${c.eventType} · order ${c.orderId}`}</PageTitle>
      <dl class="facts">
        <div>
          <dt>Time</dt>
          <dd>{formatDateTime(c.timestamp)}</dd>
        </div>
        <div>
          <dt>Store</dt>
          <dd>{store.data ? <Link href={`${BASE}/stores/${c.storeId}`}>{store.data.name}</Link> : c.storeId}</dd>
        </div>
        <div>
          <dt>Value</dt>
          <dd>{formatMoney(c.eventValue, c.currency)}</dd>
        </div>
        <div>
          <dt>Refunded</dt>
          <dd>{formatMoney(c.refundedTotal, c.currency)}</dd>
        </div>
        {c.refundedTotal > 0 && (
          <div>
            <dt>Remaining</dt>
            <dd>{formatMoney(subtractMoney(c.eventValue, c.refundedTotal, c.currency), c.currency)}</dd>
          </div>
        )}
        <div>
          <dt>Mode</dt>
          <dd>{c.livemode ? 'Live' : 'Test'}</dd>
        </div>
        <div>
          <dt>Conversion ID</dt>
          <dd>
            <code>{c.conversionId}</code>
          </dd>
        </div>
        <div>
          <dt>Event ID (for Meta)</dt>
          <dd>
            <code>{c.eventId}</code>
          </dd>
        </div>
      </dl>
      <Attribution conversion={c} store={store.data} />
      <Forwarding conversion={c} store={store.data} onResent={loaded.reload} />
      <DestinationsStatus conversion={c} />
      <ConsentPanel conversion={c} />
      {c.products.length > 0 && (
        <section class="panel" aria-labelledby="products-heading">
          <h2 id="products-heading">Products</h2>
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Product</th>
                  <th scope="col">Name</th>
                  <th scope="col" class="number">
                    Quantity
                  </th>
                  <th scope="col" class="number">
                    Price
                  </th>
                </tr>
              </thead>
              <tbody>
                {c.products.map((p) => (
                  <tr key={p.productId}>
                    <td>
                      <code>{p.productId}</code>
                    </td>
                    <td>{p.name ?? '—'}</td>
                    <td class="number">{p.quantity}</td>
                    <td class="number">{p.price === undefined ? '—' : formatMoney(p.price, c.currency)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
      )}
    </section>
  );
}
