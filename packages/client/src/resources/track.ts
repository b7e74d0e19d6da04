import type { Requester, RequestOptions } from '../request.js';
import type { ClickParams, ClickResult, ConversionParams, ConversionResult } from '../types.js';

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
}
