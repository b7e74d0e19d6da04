// The shapes the dashboard reads: the /v1 objects (api.md §2) and the dashboard's own.

export interface SessionInfo {
  signedIn: true;
  accountId: string;
  email: string;
  csrfToken: string;
}

export interface Store {
  id: string;
  name: string;
  domain: string;
  platform: string;
  pixelId: string | null;
  status: 'active' | 'inactive';
  currency: string;
  timezone: string;
  attributionWindowDays: number;
  minConfidence: number;
  capiConfigured: boolean;
  capiTestEventCode?: string;
  createdAt: string;
}

export interface Page {
  hasMore: boolean;
  nextCursor: string | null;
}

export interface Metrics {
  totalClicks: number;
  totalConversions: number;
  totalRevenue: number;
  attributedConversions: number;
  attributedRevenue: number;
  conversionRate: number;
  averageOrderValue: number;
  roas: number | null;
  adSpend: number;
  currency: string;
  startDate: string;
  endDate: string;
  timezone: string;
  revenueByCurrency: Record<string, number>;
}

export interface Bucket {
  start: string;
  label: string;
  clicks: number;
  conversions: number;
  revenue: number;
}

export interface Timeseries {
  currency: string;
  startDate: string;
  endDate: string;
  buckets: Bucket[];
}

export type CapiStatus = 'pending' | 'sent' | 'failed' | 'skipped';

export interface Conversion {
  conversionId: string;
  storeId: string;
  eventType: string;
  orderId: string;
  eventId: string;
  eventValue: number;
  currency: string;
  attributed: boolean;
  attributedTo?: { clickId: string; fbclid: string; confidenceScore: number };
  capiSent: boolean;
  capi: { status: CapiStatus; attempts: number; lastError?: string; sentAt?: string; reason?: string; message?: string };
  /** Per destination that receives it (api.md §8); `meta` is `capi`. */
  forwarding?: Partial<Record<DestinationKind, ForwardingEntry>>;
  /** The consent recorded with it (api.md §10). */
  consent?: Record<'adStorage' | 'adUserData' | 'adPersonalization', 'granted' | 'denied'>;
  limitedDataUse?: true | { country?: string; state?: string };
  livemode: boolean;
  timestamp: string;
  createdAt: string;
  products: Array<{ productId: string; name?: string; price?: number; quantity: number; category?: string }>;
}

export type Signal = 'explicit' | 'fingerprint' | 'ip_user_agent' | 'identity' | 'ip';

export interface ExplainedConversion extends Conversion {
  attribution: {
    signal: Signal | null;
    score: number | null;
    touchpoints: Array<{ clickId: string; fbclid: string; signal: Signal; score: number; clickTime: string }>;
    /** Only when not attributed: why, in a sentence (no candidate clicks, or the best one below minConfidence). */
    message?: string;
  };
}

export interface ApiKey {
  keyId: string;
  name: string;
  mode: 'live' | 'test';
  kind: 'secret' | 'publishable';
  scopes: string[];
  hint: string;
  storeId: string | null;
  origins: string[];
  createdAt: string;
  revokedAt: string | null;
  lastUsedAt: string | null;
}

export interface CreatedKey {
  keyId: string;
  key: string;
  mode: 'live' | 'test';
  scopes: string[];
}

export type DestinationKind = 'meta' | 'google_ads' | 'tiktok';

export interface ForwardingEntry {
  status: CapiStatus;
  attempts: number;
  lastError?: string;
  sentAt?: string;
  reason?: string;
  message?: string;
}
