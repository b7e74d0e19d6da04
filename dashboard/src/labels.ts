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
