export { DEFAULT_BASE_URL, Waytrack, type WaytrackOptions } from './client.js';
export { type ErrorDetails, WaytrackConnectionError, WaytrackError } from './errors.js';
export { parseJsonExact } from './json.js';
export type { PageInfo } from './pagination.js';
export type { EventQueue, EventQueueOptions } from './queue.js';
export type { RequestOptions } from './request.js';
export type { FetchLike } from './transport/types.js';
export * from './types.js';
export { VERSION } from './version.js';
export {
  type VerifyWebhookOptions,
  verifyWebhook,
  type WebhookEvent,
  type WebhookHeaders,
  WebhookVerificationError,
} from './webhooks.js';
