import type { CapiStatus, Signal } from './types.js';

/** How each attribution signal reads to an owner (api.md §2 "Attribution", strongest first). */
export const SIGNALS: Record<Signal, { name: string; meaning: string }> = {
  explicit: { name: 'Explicit reference', meaning: 'the conversion named the click (clickId, fbclid or fbc)' },
  fingerprint: { name: 'Fingerprint', meaning: "the conversion's browser fingerprint equals the click's" },
  ip_user_agent: { name: 'IP and user agent', meaning: 'the same IP address and browser as the click' },
  identity: { name: 'Identity', meaning: 'the same customer (hashed email or phone) converted earlier from this click' },
  ip: { name: 'IP address', meaning: 'the same IP address as the click' },
};

export const CAPI_STATUS: Record<CapiStatus, string> = {
  pending: 'Pending',
  sent: 'Sent',
  failed: 'Failed',
  skipped: 'Skipped',
};

/** Resend exists for what did not reach Meta: failed, or skipped while forwarding was not configured. */
export const canResend = (status: CapiStatus) => status === 'failed' || status === 'skipped';
