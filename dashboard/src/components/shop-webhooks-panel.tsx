import { useState } from 'preact/hooks';
import { ApiError, api } from '../api.js';
import type { Store } from '../types.js';
import { CopyButton } from './copy-button.js';
import { ErrorMessage } from './status.js';

type Shop = 'shopify' | 'woocommerce';

interface ShopSpec {
  name: string;
  field: 'shopifyWebhookSecret' | 'woocommerceWebhookSecret';
  configured: (store: Store) => boolean;
  topics: string[];
  where: string;
  secretLabel: string;
}

const SHOPS: Record<Shop, ShopSpec> = {
  shopify: {
    name: 'Shopify',
    field: 'shopifyWebhookSecret',
    configured: (s) => s.shopifyWebhookConfigured,
    topics: ['orders/paid', 'refunds/create'],
    where:
      'In Shopify admin: Settings → Notifications → Webhooks → Create webhook (format JSON), once per topic below; or subscribe your custom app to them.',
    secretLabel: 'Shopify signing secret',
  },
  woocommerce: {
    name: 'WooCommerce',
    field: 'woocommerceWebhookSecret',
    configured: (s) => s.woocommerceWebhookConfigured,
    topics: ['Order created', 'Order updated'],
    where:
      'In WordPress: WooCommerce → Settings → Advanced → Webhooks → Add webhook (status Active, API version WP REST API v3), once per topic below.',
    secretLabel: 'WooCommerce webhook secret',
  },
};

/** Where the shop posts its webhooks: this server, as the browser reaches it. */
export const shopWebhookUrl = (shop: Shop, storeId: string) => `${window.location.origin}/v1/webhooks/${shop}/${storeId}`;

function ShopForm({ shop, store, onChange }: { shop: Shop; store: Store; onChange(store: Store, message: string): void }) {
  const spec = SHOPS[shop];
  const configured = spec.configured(store);
  const [error, setError] = useState<ApiError>();
  const [busy, setBusy] = useState(false);
  const url = shopWebhookUrl(shop, store.id);
  const inputId = `shop-${shop}-secret`;
  const invalid = error?.details?.field === spec.field;

  const send = async (secret: string | null, message: string) => {
    setBusy(true);
    setError(undefined);
    try {
      onChange(await api.patch<Store>(`/stores/${store.id}`, { [spec.field]: secret }), message);
    } catch (e) {
      setError(e instanceof ApiError ? e : new ApiError(0, 'client_error', String(e)));
    } finally {
      setBusy(false);
    }
  };
  const save = (event: SubmitEvent) => {
    event.preventDefault();
    const value = String(new FormData(event.currentTarget as HTMLFormElement).get('secret') ?? '').trim();
    // Blank keeps the stored secret: nothing to send.
    if (value === '') {
      setError(
        new ApiError(0, 'invalid_request', `Type the ${spec.secretLabel.toLowerCase()} to save it`, { field: spec.field }),
      );
      return;
    }
    send(value, `${spec.name} secret saved: deliveries signed with it are accepted.`);
  };

  return (
    <section class="destination" aria-labelledby={`shop-${shop}-heading`}>
      <h3 id={`shop-${shop}-heading`}>{spec.name}</h3>
      <p class="hint">
        <span class={`badge ${configured ? 'sent' : 'skipped'}`}>{configured ? 'Configured' : 'Not configured'}</span>
      </p>
      <p>{spec.where}</p>
      <p>
        Webhook URL: <code data-testid={`shop-${shop}-url`}>{url}</code> <CopyButton text={url} label={`Copy ${spec.name} URL`} />
      </p>
      <p>Topics: {spec.topics.map((t, i) => [i > 0 && ', ', <code key={t}>{t}</code>])}</p>
      <form onSubmit={save} noValidate>
        <div class="field">
          <label for={inputId}>{spec.secretLabel}</label>
          <input
            id={inputId}
            name="secret"
            type="password"
            autocomplete="off"
            aria-invalid={invalid ? 'true' : undefined}
            aria-describedby={`${inputId}-hint${invalid ? ` ${inputId}-error` : ''}`}
          />
          <p class="hint" id={`${inputId}-hint`}>
            {configured
              ? 'Configured. It is never shown again; type a new one to replace it.'
              : 'Not configured. Write-only: once saved it is never shown again.'}
          </p>
          {invalid && (
            <p class="error" id={`${inputId}-error`} role="alert">
              {error?.message}
            </p>
          )}
        </div>
        {error && !invalid && <ErrorMessage error={error} />}
        <div class="actions">
          <button type="submit" disabled={busy}>
            Save {spec.name} secret
          </button>
          {configured && (
            <button
              type="button"
              class="secondary"
              disabled={busy}
              onClick={() => send(null, `${spec.name} secret cleared: its deliveries are refused until a new one is saved.`)}
            >
              Clear {spec.name} secret
            </button>
          )}
        </div>
      </form>
    </section>
  );
}

/**
 * Orders and refunds straight from the shop (docs/integrations.md): the URL to paste, the topics
 * to subscribe, and the write-only secret the shop signs with (PATCH /v1/stores/:id).
 */
export function ShopWebhooksPanel({ store, onChange }: { store: Store; onChange(store: Store): void }) {
  const [notice, setNotice] = useState<{ shop: Shop; message: string }>();
  return (
    <section class="panel" aria-labelledby="shop-webhooks-heading">
      <h2 id="shop-webhooks-heading">Shop webhooks</h2>
      <p>
        Let the shop send its orders and refunds to Waytrack itself: conversions and refunds are recorded even when the browser
        never reaches the thank-you page.
      </p>
      {(['shopify', 'woocommerce'] as const).map((shop) => (
        <div key={shop}>
          {notice?.shop === shop && (
            <p class="notice" role="status">
              {notice.message}
            </p>
          )}
          {/* A new form after each change: the secret typed there leaves the page. */}
          <ShopForm
            key={`${shop} ${SHOPS[shop].configured(store)} ${notice?.message ?? ''}`}
            shop={shop}
            store={store}
            onChange={(next, message) => {
              onChange(next);
              setNotice({ shop, message });
            }}
          />
        </div>
      ))}
    </section>
  );
}
