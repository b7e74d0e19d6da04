// Types of generate.js for the tests that import it (server/test/attribution/accuracy.test.ts).
export const WINDOW: number;
export interface ClickEvent {
  kind: 'click';
  at: number;
  ref: number;
  person: number;
  body: Record<string, unknown> & { fbclid: string; ipAddress: string; userAgent: string };
}
export interface IdentifyEvent {
  kind: 'identify';
  at: number;
  person: number;
  body: Record<string, unknown> & { email: string };
}
export interface OrderEvent {
  kind: 'order';
  at: number;
  person: number;
  truth: number | null;
  mechanism: 'organic' | 'same_browser' | 'cookies_lost' | 'in_app_to_browser' | 'cross_device';
  network: string;
  repeat: boolean;
  ltp: boolean;
  body: Record<string, unknown> & { orderId: string; fbc?: string };
}
export interface Traffic {
  seed: number;
  people: number;
  start: number;
  end: number;
  events: Array<ClickEvent | IdentifyEvent | OrderEvent>;
}
export function generateTraffic(options: { seed: number; people: number; days?: number; end?: number }): Traffic;
