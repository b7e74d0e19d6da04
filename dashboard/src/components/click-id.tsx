import { creditedClickId } from '../labels.js';
import type { Conversion } from '../types.js';

/**
 * The credited click's id with its kind ("gclid · Cj0K…"): a Google click has no fbclid to show
 * (api.md §12). The id is clipped in narrow columns: its title holds it whole.
 */
export function ClickId({ attributedTo }: { attributedTo: NonNullable<Conversion['attributedTo']> }) {
  const { kind, value } = creditedClickId(attributedTo);
  return (
    <span class="click-id">
      {kind} ·{' '}
      <code class="clip" title={value}>
        {value}
      </code>
    </span>
  );
}

/**
 * A touchpoint's click by its key (the explanation's `fbclid`): a real fbclid, or `kind:value`
 * for a click without one (docs/api.md "Idempotency per id"), shown as the Click column does.
 */
export function KeyedClickId({ keyValue }: { keyValue: string }) {
  const colon = keyValue.indexOf(':');
  const kind = colon < 0 ? 'fbclid' : keyValue.slice(0, colon);
  const value = keyValue.slice(colon + 1);
  return (
    <span class="click-id">
      {kind} ·{' '}
      <code class="clip" title={value}>
        {value}
      </code>
    </span>
  );
}
