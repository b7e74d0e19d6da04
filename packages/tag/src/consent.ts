/**
 * The visitor's consent as the page gives it to the tag (api.md §10; docs/consent.md):
 * `waytrack('consent', {adStorage, adUserData, adPersonalization})` (Consent Mode's names
 * `ad_storage`, … are understood too), and Google's Consent Mode state when the page runs gtag:
 * its `consent` `default`/`update` commands in `dataLayer`, applied in order. The tag's own calls
 * win over gtag's. A field neither gives is left out: the store's `defaultConsent` applies.
 */
export type ConsentState = 'granted' | 'denied';

export interface PageConsent {
  adStorage?: ConsentState;
  adUserData?: ConsentState;
  adPersonalization?: ConsentState;
}

const NAMES: Record<string, keyof PageConsent> = {
  adStorage: 'adStorage',
  adUserData: 'adUserData',
  adPersonalization: 'adPersonalization',
  ad_storage: 'adStorage',
  ad_user_data: 'adUserData',
  ad_personalization: 'adPersonalization',
};

/** The consent fields of a value (unknown names and values other than granted/denied are ignored). */
export function consentOf(value: unknown): PageConsent {
  const consent: PageConsent = {};
  if (!value || typeof value !== 'object') return consent;
  for (const [name, state] of Object.entries(value as Record<string, unknown>)) {
    const field = NAMES[name];
    if (field && (state === 'granted' || state === 'denied')) consent[field] = state;
  }
  return consent;
}

/** Later fields win. */
export function mergeConsent(...parts: PageConsent[]): PageConsent {
  return Object.assign({}, ...parts) as PageConsent;
}

/**
 * Google Consent Mode's state from `dataLayer`: gtag pushes its `arguments`, so a consent
 * command is an array-like `['consent', 'default' | 'update', {ad_storage: …}]`.
 */
export function gtagConsent(dataLayer: unknown): PageConsent {
  let consent: PageConsent = {};
  if (!Array.isArray(dataLayer)) return consent;
  for (const entry of dataLayer) {
    if (!entry || typeof entry !== 'object' || typeof (entry as { length?: unknown }).length !== 'number') continue;
    const args = entry as ArrayLike<unknown>;
    // A default for some regions only (`region: [...]`) cannot be told to apply here: the store's default stands in.
    const regional = args[1] === 'default' && Boolean((args[2] as { region?: unknown } | undefined)?.region);
    if (args[0] === 'consent' && (args[1] === 'default' || args[1] === 'update') && !regional) {
      consent = mergeConsent(consent, consentOf(args[2]));
    }
  }
  return consent;
}

export const hasConsent = (consent: PageConsent) => Object.keys(consent).length > 0;
