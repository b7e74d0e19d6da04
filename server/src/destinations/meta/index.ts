import type { StoresTable } from '../../db/schema.js';
import { all, type Sender } from '../adapter.js';
import { onlyFields, REFUND_EVENT, text } from '../fields.js';
import { parseMetaRoute } from './forwarding.js';
import { GRAPH_TIMEOUT_MS, postEvents } from './graph.js';
import { META_SETTINGS } from './settings-schema.js';

/**
 * The Meta destination's settings: the store's own `pixelId`, `capiAccessToken` and
 * `capiTestEventCode` (api.md §2, §8). Its jobs (built by forwarding.ts and
 * refund-event.ts) go through the shared outbox like every destination's, sent by
 * `metaSender` below.
 */
export const metaSettings = {
  kind: 'meta' as const,
  label: 'Meta',
  settingsSchema: META_SETTINGS,

  /** A PUT body, checked; an access token left out keeps the stored one (required while none is). */
  parse(body: Record<string, unknown>, store: StoresTable) {
    onlyFields(body, ['pixelId', 'accessToken', 'testEventCode', 'refundEvent']);
    const pixelId = text(body, 'pixelId', { required: true, pattern: /^\d{5,20}$/, hint: '5–20 digits' }) as string;
    const accessToken = text(body, 'accessToken', { required: !store.capi_access_token, max: 2000 });
    const testEventCode = text(body, 'testEventCode', { required: false, max: 100 });
    const refundEvent = text(body, 'refundEvent', { required: false, ...REFUND_EVENT });
    return { pixelId, accessToken, testEventCode: testEventCode ?? null, refundEvent: refundEvent ?? null };
  },

  /** The settings as the API shows them; null when Meta is not configured. */
  present(store: StoresTable): Record<string, unknown> | null {
    if (!store.pixel_id || !store.capi_access_token) return null;
    return {
      pixelId: store.pixel_id,
      testEventCode: store.capi_test_event_code,
      refundEvent: store.capi_refund_event,
      accessTokenConfigured: true,
    };
  },
};

/**
 * Meta's Conversions API as the shared dispatcher sends it: one Graph request per batch (up to
 * 1000 events of one pixel and test event code, the job's route) with the store's current
 * access token; an answer classified by graph.ts. A batch refused because of some event is
 * split (`bisect`); an error text carries the request's fbtrace_id.
 */
export const metaSender: Sender<Record<string, never>, { accessToken: string }> = {
  kind: 'meta',
  label: 'Meta',
  maxBatch: 1000,
  timeoutMs: GRAPH_TIMEOUT_MS,
  bisect: true,
  rawPayloads: true,
  // A refund event is a custom event of its own: it need not wait for the conversion's.
  ordersRefunds: false,
  ageLimit: 'within 7 days of the event',
  messages: {
    removed: 'Forwarding was switched off for this store (no capiAccessToken) before the event could be sent',
    secretsLost: "The store's access token cannot be decrypted: SECRETS_KEY changed. Restore it or set capiAccessToken again",
    delivered: 'Conversions API batch delivered',
    refused: 'Meta refused Conversions API events',
  },
  logFields: (route) => ({ pixelId: parseMetaRoute(route).pixelId }),
  async send(request) {
    const { pixelId, testEventCode } = parseMetaRoute(request.route);
    const result = await postEvents(
      {
        baseUrl: request.env.metaGraphUrl,
        version: request.env.metaGraphVersion,
        pixelId,
        accessToken: request.secrets.accessToken,
        testEventCode,
        // The payloads are the stored events, spliced into the body as they are.
        events: request.payloads as string[],
      },
      request.timeoutMs,
    );
    const traceId = result.fbtraceId ?? undefined;
    const requestOutcome = result.outcome;
    if (result.outcome === 'accepted') return { ...all(request.payloads.length, { outcome: 'sent' }), traceId, requestOutcome };
    const error = result.fbtraceId ? `${result.error} (fbtrace_id ${result.fbtraceId})` : result.error;
    if (result.outcome === 'retry') {
      const retry = {
        outcome: 'retry' as const,
        error,
        ...(result.retryAfterMs !== undefined && { retryAfterMs: result.retryAfterMs }),
      };
      return { ...all(request.payloads.length, retry), traceId, requestOutcome };
    }
    return { ...all(request.payloads.length, { outcome: 'failed', error }), traceId, requestOutcome, split: result.eventLevel };
  },
};
