import { formatDateTime } from '../format.js';
import { CAPI_STATUS } from '../labels.js';
import type { Conversion, DestinationKind } from '../types.js';

/** The platforms other than Meta (Meta has its own panel, with Resend). */
const OTHERS: Array<{ kind: Exclude<DestinationKind, 'meta'>; name: string }> = [
  { kind: 'google_ads', name: 'Google Ads' },
  { kind: 'tiktok', name: 'TikTok' },
  { kind: 'microsoft', name: 'Microsoft Advertising' },
  { kind: 'reddit', name: 'Reddit' },
  { kind: 'linkedin', name: 'LinkedIn' },
  { kind: 'pinterest', name: 'Pinterest' },
  { kind: 'snapchat', name: 'Snapchat' },
];

export const DESTINATION_NAMES: Record<DestinationKind, string> = {
  meta: 'Meta',
  google_ads: 'Google Ads',
  tiktok: 'TikTok',
  microsoft: 'Microsoft Advertising',
  reddit: 'Reddit',
  linkedin: 'LinkedIn',
  pinterest: 'Pinterest',
  snapchat: 'Snapchat',
};

/** Each destination other than Meta that receives the conversion: status, attempts, sent time, last error. */
export function DestinationsStatus({ conversion }: { conversion: Conversion }) {
  const entries = OTHERS.filter(({ kind }) => conversion.forwarding?.[kind]);
  if (entries.length === 0) return null;
  return (
    <section class="panel" aria-labelledby="destinations-heading">
      <h2 id="destinations-heading">Forwarding to other platforms</h2>
      {entries.map(({ kind, name }) => {
        const entry = conversion.forwarding?.[kind];
        if (!entry) return null;
        return (
          <dl class="facts" key={kind} aria-label={name}>
            <div>
              <dt>{name}</dt>
              <dd>
                <span class={`badge ${entry.status}`}>{CAPI_STATUS[entry.status]}</span>
              </dd>
            </div>
            <div>
              <dt>Attempts</dt>
              <dd>{entry.attempts}</dd>
            </div>
            {entry.sentAt && (
              <div>
                <dt>Sent</dt>
                <dd>{formatDateTime(entry.sentAt)}</dd>
              </div>
            )}
            {entry.lastError && (
              <div>
                <dt>{name}'s last error</dt>
                <dd>{entry.lastError}</dd>
              </div>
            )}
            {entry.status === 'skipped' && entry.message && (
              <div>
                <dt>Why skipped</dt>
                <dd>{entry.message}</dd>
              </div>
            )}
          </dl>
        );
      })}
    </section>
  );
}

/** Small badges for the conversions table: one per destination other than Meta. */
export function DestinationBadges({ conversion }: { conversion: Conversion }) {
  return (
    <>
      {OTHERS.filter(({ kind }) => conversion.forwarding?.[kind]).map(({ kind, name }) => {
        const entry = conversion.forwarding?.[kind];
        return entry ? (
          <span key={kind} class={`badge ${entry.status}`} title={entry.lastError ?? `${name}: ${CAPI_STATUS[entry.status]}`}>
            {name}: {CAPI_STATUS[entry.status]}
          </span>
        ) : null;
      })}
    </>
  );
}
