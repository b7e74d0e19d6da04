import { consentView, type MetaProcessingOptions } from '../../consent/consent.js';
import type { HashedUserData } from '../../customer-data.js';
import type { ClicksTable, ConversionsTable } from '../../db/schema.js';
import { fromMinorUnits } from '../../money.js';

/** A server event as Meta's Conversions API reads it (api.md §2, "Event mapping"). */
export interface MetaEvent extends Partial<MetaProcessingOptions> {
  event_name: string;
  event_time: number;
  event_id: string;
  action_source: 'website';
  event_source_url?: string;
  user_data: MetaUserData;
  custom_data: MetaCustomData;
}

export interface MetaUserData {
  em?: string[];
  ph?: string[];
  fn?: string[];
  ln?: string[];
  ct?: string[];
  st?: string[];
  zp?: string[];
  country?: string[];
  client_ip_address?: string;
  client_user_agent?: string;
  fbc?: string;
  fbp?: string;
}

export interface MetaCustomData {
  value: number;
  currency: string;
  order_id: string;
  contents?: Array<{ id: string; quantity: number; item_price?: number }>;
  content_ids?: string[];
  content_type?: 'product';
  num_items?: number;
}

interface StoredProduct {
  productId: string;
  priceMinor?: number;
  quantity: number;
}

const HASHED_KEYS = ['em', 'ph', 'fn', 'ln', 'ct', 'st', 'zp', 'country'] as const;
const FBC = /^fb\.\d\.\d+\.[A-Za-z0-9_.-]{1,500}$/;

/**
 * Maps a stored conversion (and the click it is attributed to, if any) to Meta's event. Customer
 * data is already normalized and hashed (customer-data.ts); only hashes leave. The click supplies `fbc`
 * (`fb.1.<click ms>.<fbclid>`, fbclid verbatim) and fills the page, IP and user agent the
 * conversion did not carry.
 */
export function buildMetaEvent(recorded: ConversionsTable, attributedClick: ClicksTable | undefined): MetaEvent {
  // Consent (api.md §10): only what the stored consent allows is read below; LDU fields at the end.
  const { conversion, click, meta: processingOptions } = consentView(recorded, attributedClick);
  const hashes = JSON.parse(conversion.user_data) as HashedUserData;
  const userData: MetaUserData = {};
  for (const key of HASHED_KEYS) {
    const value = hashes[key];
    if (value) userData[key] = [value];
  }
  const ip = conversion.ip_address ?? click?.ip_address;
  const userAgent = conversion.user_agent ?? click?.user_agent;
  // Without an attributed click, a well-formed fbc the store sent is still Meta's click id.
  const fbc = click?.fbc ?? (conversion.ref_fbc && FBC.test(conversion.ref_fbc) ? conversion.ref_fbc : undefined);
  const fbp = conversion.fbp ?? click?.fbp;
  if (ip) userData.client_ip_address = ip;
  if (userAgent) userData.client_user_agent = userAgent;
  if (fbc) userData.fbc = fbc;
  if (fbp) userData.fbp = fbp;

  const products = JSON.parse(conversion.products) as StoredProduct[];
  const customData: MetaCustomData = {
    value: fromMinorUnits(conversion.value_minor, conversion.currency),
    currency: conversion.currency,
    order_id: conversion.order_id,
  };
  if (products.length > 0) {
    customData.contents = products.map((p) => ({
      id: p.productId,
      quantity: p.quantity,
      ...(p.priceMinor !== undefined && { item_price: fromMinorUnits(p.priceMinor, conversion.currency) }),
    }));
    customData.content_ids = products.map((p) => p.productId);
    customData.content_type = 'product';
    customData.num_items = products.reduce((sum, p) => sum + p.quantity, 0);
  }

  const sourceUrl = conversion.event_source_url ?? click?.landing_page;
  return {
    event_name: conversion.event_type,
    event_time: Math.floor(conversion.event_time / 1000),
    event_id: conversion.event_id,
    action_source: 'website',
    ...(sourceUrl && { event_source_url: sourceUrl }),
    user_data: userData,
    custom_data: customData,
    ...processingOptions,
  };
}
