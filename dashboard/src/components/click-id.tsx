import { creditedClickId } from '../labels.js';
import type { Conversion } from '../types.js';

/** The credited click's id with its kind ("gclid · Cj0K…"): a Google click has no fbclid to show (api.md §12). */
export function ClickId({ attributedTo }: { attributedTo: NonNullable<Conversion['attributedTo']> }) {
  const { kind, value } = creditedClickId(attributedTo);
  return (
    <span class="click-id" title={`${kind} ${value}`}>
      {kind} · <code class="clip">{value}</code>
    </span>
  );
}
