import { type Page, walkPages, withItems } from '../pagination.js';
import type { Requester, RequestOptions } from '../request.js';
import type {
  Breakdown,
  BreakdownGroup,
  BreakdownParams,
  Channels,
  ChannelsParams,
  Cohorts,
  CohortsParams,
  Metrics,
  MetricsParams,
  Timeseries,
  TimeseriesParams,
  TrackingHealth,
  TrackingHealthParams,
} from '../types.js';

/** A store's reports over an inclusive date range in its time zone (default: the last 30 days). */
export class Analytics {
  constructor(private readonly requester: Requester) {}

  /** GET /v1/analytics/metrics — clicks, conversions, revenue, conversion rate, AOV, ad spend, ROAS. */
  metrics(params: MetricsParams, options?: RequestOptions): Promise<Metrics> {
    return this.requester.call({ method: 'GET', path: '/analytics/metrics', query: params }, options);
  }

  /** GET /v1/analytics/timeseries — the same figures per day or hour, every bucket present. */
  timeseries(params: TimeseriesParams, options?: RequestOptions): Promise<Timeseries> {
    return this.requester.call({ method: 'GET', path: '/analytics/timeseries', query: params }, options);
  }

  /** GET /v1/analytics/breakdown — one page of groups per value of a click dimension (`by`), credited by `model`. */
  breakdown(params: BreakdownParams, options?: RequestOptions): Promise<Page<Breakdown, 'groups'>> {
    return this.requester
      .call({ method: 'GET', path: '/analytics/breakdown', query: params }, options)
      .then((page) => withItems(page as Breakdown, 'groups'));
  }

  /** GET /v1/analytics/cohorts — first-purchase cohorts by month (`by=channel`: and channel), net revenue per customer, CAC, payback. */
  cohorts(params: CohortsParams, options?: RequestOptions): Promise<Cohorts> {
    return this.requester.call({ method: 'GET', path: '/analytics/cohorts', query: params }, options);
  }

  /** GET /v1/analytics/channels — spend, credited conversions, net revenue, ROAS and CPA per channel and campaign. */
  channels(params: ChannelsParams, options?: RequestOptions): Promise<Channels> {
    return this.requester.call({ method: 'GET', path: '/analytics/channels', query: params }, options);
  }

  /** GET /v1/analytics/tracking-health — what would make the channel report wrong, each with a sentence to act on. */
  trackingHealth(params: TrackingHealthParams, options?: RequestOptions): Promise<TrackingHealth> {
    return this.requester.call({ method: 'GET', path: '/analytics/tracking-health', query: params }, options);
  }

  /** Every group of a breakdown, page after page. */
  breakdownAll(params: BreakdownParams, options?: RequestOptions): AsyncGenerator<BreakdownGroup, void, undefined> {
    return walkPages(
      (cursor) => this.breakdown({ ...params, cursor }, options),
      (page) => page.items,
      params.cursor,
    );
  }
}
