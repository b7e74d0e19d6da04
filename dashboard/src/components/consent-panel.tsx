import type { Conversion } from '../types.js';

// A conversion's consent (api.md §10) and what it means for forwarding, on the conversion's page.

const FIELDS = [
  ['adStorage', 'Ad storage', 'click ids used for attribution only, never sent to an ad platform'],
  ['adUserData', 'Ad user data', 'no customer data, IP, user agent or browser ids sent; Google told DENIED'],
  ['adPersonalization', 'Ad personalization', 'stored; no destination takes it yet'],
] as const;

function describeLdu(ldu: Conversion['limitedDataUse']): string | undefined {
  if (ldu === undefined) return undefined;
  if (ldu === true) return 'Yes (Meta geolocates the visitor)';
  return `Yes (${[ldu.state, ldu.country].filter(Boolean).join(', ') || 'Meta geolocates the visitor'})`;
}

export function ConsentPanel({ conversion }: { conversion: Conversion }) {
  const { consent } = conversion;
  if (!consent) return null;
  const ldu = describeLdu(conversion.limitedDataUse);
  return (
    <section class="panel" aria-labelledby="consent-heading">
      <h2 id="consent-heading">Consent</h2>
      <dl class="facts">
        {FIELDS.map(([field, label, denied]) => (
          <div key={field}>
            <dt>{label}</dt>
            <dd>
              <span class={`badge ${consent[field] === 'granted' ? 'sent' : 'failed'}`}>
                {consent[field] === 'granted' ? 'Granted' : 'Denied'}
              </span>
              {consent[field] === 'denied' && <span class="hint"> — {denied}</span>}
            </dd>
          </div>
        ))}
        {ldu && (
          <div>
            <dt>Limited data use</dt>
            <dd>{ldu}</dd>
          </div>
        )}
      </dl>
      <p class="hint">As recorded with the conversion; every send and resend applies it. Attribution is not affected.</p>
    </section>
  );
}
