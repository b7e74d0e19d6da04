import { useState } from 'preact/hooks';
import { ApiError } from '../api.js';
import type { Store } from '../types.js';

export const PLATFORMS = ['shopify', 'woocommerce', 'bigcommerce', 'magento', 'wix', 'squarespace', 'custom'];
const PLATFORM_NAMES: Record<string, string> = {
  shopify: 'Shopify',
  woocommerce: 'WooCommerce',
  bigcommerce: 'BigCommerce',
  magento: 'Magento',
  wix: 'Wix',
  squarespace: 'Squarespace',
  custom: 'Custom',
};
export const platformName = (platform: string) => PLATFORM_NAMES[platform] ?? platform;

/** The body of POST /v1/stores, or of PATCH with only what changed. */
export type StoreFields = Record<string, string | number | null>;

interface Props {
  store?: Store;
  submitLabel: string;
  onSubmit(fields: StoreFields): Promise<void>;
  onCancel?: () => void;
}

const text = (form: FormData, name: string) => String(form.get(name) ?? '').trim();

/**
 * Create or edit a store; fields are labelled as the API names them. A new store may set Meta's
 * forwarding at once (the access token is write-only); an existing one's destinations, Meta's
 * included, are edited in the store page's Destinations panel.
 */
export function StoreForm({ store, submitLabel, onSubmit, onCancel }: Props) {
  const [error, setError] = useState<ApiError>();
  const [busy, setBusy] = useState(false);
  const id = (name: string) => `${store ? 'edit' : 'new'}-store-${name}`;

  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const fields: StoreFields = {
      name: text(form, 'name'),
      domain: text(form, 'domain'),
      platform: text(form, 'platform'),
      currency: text(form, 'currency').toUpperCase(),
      timezone: text(form, 'timezone'),
      attributionWindowDays: Number(text(form, 'attributionWindowDays')),
      minConfidence: Number(text(form, 'minConfidence')),
    };
    if (!store) {
      fields.pixelId = text(form, 'pixelId') || null;
      fields.capiTestEventCode = text(form, 'capiTestEventCode') || null;
      fields.capiAccessToken = text(form, 'capiAccessToken') || null;
    }

    let body: StoreFields = fields;
    if (store) {
      // PATCH only what changed; an unchanged empty field is not a change.
      const before: StoreFields = {
        name: store.name,
        domain: store.domain,
        platform: store.platform,
        currency: store.currency,
        timezone: store.timezone,
        attributionWindowDays: store.attributionWindowDays,
        minConfidence: store.minConfidence,
      };
      body = Object.fromEntries(Object.entries(fields).filter(([key, value]) => !(key in before) || before[key] !== value));
    } else {
      // A new store leaves out what was left empty: the API's defaults apply.
      body = Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== null && value !== ''));
    }
    setBusy(true);
    setError(undefined);
    const element = event.currentTarget as HTMLFormElement;
    try {
      await onSubmit(body);
      // The token is write-only: once saved it leaves the page, typed value included.
      const tokenInput = element.elements.namedItem('capiAccessToken');
      if (tokenInput instanceof HTMLInputElement) tokenInput.value = '';
    } catch (e) {
      setError(e instanceof ApiError ? e : new ApiError(0, 'client_error', String(e)));
    } finally {
      setBusy(false);
    }
  };

  const field = error?.details?.field;
  const invalid = (name: string) => (field === name ? true : undefined);

  return (
    <form class="store-form" onSubmit={submit}>
      <div class="grid">
        <div class="field">
          <label for={id('name')}>Name</label>
          <input id={id('name')} name="name" required maxLength={200} defaultValue={store?.name} aria-invalid={invalid('name')} />
        </div>
        <div class="field">
          <label for={id('domain')}>Domain</label>
          <input
            id={id('domain')}
            name="domain"
            required
            maxLength={253}
            placeholder="shop.example.com"
            defaultValue={store?.domain}
            aria-invalid={invalid('domain')}
            aria-describedby={id('domain-hint')}
          />
          <p class="hint" id={id('domain-hint')}>
            The hostname only, without https:// or a path.
          </p>
        </div>
        <div class="field">
          <label for={id('platform')}>Platform</label>
          <select id={id('platform')} name="platform" required defaultValue={store?.platform ?? 'shopify'}>
            {PLATFORMS.map((p) => (
              <option key={p} value={p}>
                {platformName(p)}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for={id('currency')}>Currency</label>
          <input
            id={id('currency')}
            name="currency"
            maxLength={3}
            placeholder="USD"
            defaultValue={store?.currency ?? 'USD'}
            aria-invalid={invalid('currency')}
          />
        </div>
        <div class="field">
          <label for={id('timezone')}>Time zone</label>
          <input
            id={id('timezone')}
            name="timezone"
            maxLength={64}
            placeholder="America/New_York"
            defaultValue={store?.timezone ?? Intl.DateTimeFormat().resolvedOptions().timeZone ?? 'UTC'}
            aria-invalid={invalid('timezone')}
          />
        </div>
        <div class="field">
          <label for={id('window')}>Attribution window (days)</label>
          <input
            id={id('window')}
            name="attributionWindowDays"
            type="number"
            min={1}
            max={90}
            required
            defaultValue={String(store?.attributionWindowDays ?? 7)}
          />
        </div>
        <div class="field">
          <label for={id('confidence')}>Minimum confidence</label>
          <input
            id={id('confidence')}
            name="minConfidence"
            type="number"
            min={0}
            max={100}
            required
            defaultValue={String(store?.minConfidence ?? 50)}
          />
        </div>
      </div>
      {!store && (
        <fieldset>
          <legend>Forwarding to Meta (Conversions API)</legend>
          <div class="grid">
            <div class="field">
              <label for={id('pixel')}>Pixel ID</label>
              <input id={id('pixel')} name="pixelId" inputMode="numeric" pattern="\d{5,20}" aria-invalid={invalid('pixelId')} />
            </div>
            <div class="field">
              <label for={id('token')}>Conversions API access token</label>
              <input
                id={id('token')}
                name="capiAccessToken"
                type="password"
                autocomplete="off"
                aria-describedby={id('token-hint')}
                aria-invalid={invalid('capiAccessToken')}
              />
              <p class="hint" id={id('token-hint')}>
                Write-only: once saved it is never shown again. Google Ads and TikTok are set on the store's page.
              </p>
            </div>
            <div class="field">
              <label for={id('test-code')}>Test event code</label>
              <input id={id('test-code')} name="capiTestEventCode" />
            </div>
          </div>
        </fieldset>
      )}
      {error && (
        <p class="error" role="alert">
          {error.message}
        </p>
      )}
      <div class="actions">
        <button type="submit" disabled={busy}>
          {submitLabel}
        </button>
        {onCancel && (
          <button type="button" class="secondary" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}
