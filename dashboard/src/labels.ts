import type { CapiStatus, Signal } from './types.js';

/** How each kind of attribution evidence reads to an owner (api.md §13, strongest first). */
export const SIGNALS: Record<Signal, { name: string; meaning: string }> = {
  explicit: { name: 'Explicit reference', meaning: 'the conversion named the click (a click id or fbc)' },
  same_browser: { name: 'Same browser', meaning: "the conversion came from the click's browser (its visitor id, fbp or ttp)" },
  identity: { name: 'Identity', meaning: "the buyer's hashed email or phone was seen before with the click's browser" },
  ip_user_agent: { name: 'IP and user agent', meaning: 'the same IP address and browser as the click' },
  ip_device: { name: 'IP and device', meaning: 'the same IP address and device as the click, in another browser' },
  fingerprint: {
    name: 'Fingerprint',
    meaning: "the conversion's device fingerprint equals the click's (a device class: shared by identical devices)",
  },
  ip: { name: 'IP address', meaning: 'the same IP address (IPv6: the same /64 network) as the click' },
};

export const CAPI_STATUS: Record<CapiStatus, string> = {
  pending: 'Pending',
  sent: 'Sent',
  failed: 'Failed',
  skipped: 'Skipped',
};

/** Resend exists for what did not reach Meta: failed, or skipped while forwarding was not configured. */
export const canResend = (status: CapiStatus) => status === 'failed' || status === 'skipped';

/** The click id kinds of each channel (api.md §11, §12): which of a click's ids its channel came from. */
const KINDS_OF_CHANNEL: Record<string, string[]> = {
  meta: ['fbclid'],
  google_ads: ['gclid', 'gbraid', 'wbraid'],
  tiktok: ['ttclid'],
  microsoft: ['msclkid'],
  pinterest: ['epik'],
  snapchat: ['ScCid'],
  reddit: ['rdt_cid'],
  linkedin: ['li_fat_id'],
};

/** The credited click's id as the Click column shows it: the kind of its channel and the value ("gclid", "Cj0K…"). */
export function creditedClickId(attributedTo: { clickIds: Record<string, string | undefined>; channel?: string }) {
  const ids = Object.entries(attributedTo.clickIds).filter((e): e is [string, string] => e[1] !== undefined);
  const kinds = KINDS_OF_CHANNEL[attributedTo.channel ?? ''] ?? [];
  const [kind, value] = ids.find(([k]) => kinds.includes(k)) ?? ids[0] ?? ['click', ''];
  return { kind, value };
}
