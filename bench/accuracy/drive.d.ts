// Types of drive.js for the tests that import it.
import type { OrderEvent, Traffic } from './generate.js';

// biome-ignore lint/suspicious/noExplicitAny: an API answer of any route, read by drive.js
export type Send = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>;
export interface PlayedOrder {
  event: OrderEvent;
  result: { conversionId: string; attributed: boolean; attributedTo?: { clickId: string; confidenceScore: number } };
  candidates: Array<{
    clickId: string;
    clickTime: string;
    confidence: number;
    evidence: Array<{ kind: string; sharedBy: number }>;
  }>;
}
export interface Played {
  clickIds: Map<number, string>;
  orders: PlayedOrder[];
}
export function playTraffic(traffic: Traffic, send: Send, storeId: string): Promise<Played>;
