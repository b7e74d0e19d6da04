import { EventQueue, type EventQueueOptions } from '../queue.js';
import type { Requester, RequestOptions } from '../request.js';
import type {
  BatchEvent,
  BatchResult,
  ClickParams,
  ClickResult,
  ConversionParams,
  ConversionResult,
  IdentifyParams,
  IdentifyResult,
} from '../types.js';

/** Recording events: ad clicks, and conversions (attributed on arrival). */
export class Track {
  constructor(private readonly requester: Requester) {}

  /** POST /v1/track/click — record an ad click; the same fbclid again returns the original with `duplicate: true`. */
  click(params: ClickParams, options?: RequestOptions): Promise<ClickResult> {
    return this.requester.call({ method: 'POST', path: '/track/click', body: params }, options);
  }

  /** POST /v1/track/conversion — record a conversion and attribute it; the same orderId again is `duplicate: true`. */
  conversion(params: ConversionParams, options?: RequestOptions): Promise<ConversionResult> {
    return this.requester.call({ method: 'POST', path: '/track/conversion', body: params }, options);
  }

  /**
   * POST /v1/track/identify — link a browser (`visitorId`, `fbp`, `ttp`) to a person's email or
   * phone (hashed on arrival, or sent as SHA-256 hex): a later conversion with that email or
   * phone, from any device, has identity evidence for that browser's clicks.
   */
  identify(params: IdentifyParams, options?: RequestOptions): Promise<IdentifyResult> {
    return this.requester.call({ method: 'POST', path: '/track/identify', body: params }, options);
  }

  /**
   * POST /v1/track/batch — record 1–500 clicks and conversions in one request, in order. Resolves
   * with one result per event (`{index, status: 200, data}` or `{index, status, error}`); throws
   * only when the request itself fails (not a list of events, no tracking scope, network).
   */
  batch(events: BatchEvent[], options?: RequestOptions): Promise<BatchResult> {
    return this.requester.call({ method: 'POST', path: '/track/batch', body: { events } }, options);
  }

  /**
   * A queue that sends its events with `batch`, every `maxEvents` events or `flushIntervalMs`
   * after the first one waiting, whichever comes first. Call `await queue.flush()` (or
   * `close()`) before the process exits: its timer does not keep the process alive.
   */
  queue(options?: EventQueueOptions): EventQueue {
    return new EventQueue((events) => this.batch(events), options);
  }
}
