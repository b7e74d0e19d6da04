import type { Database } from '../db/database.js';
import { countEndpointsLocked } from '../db/repositories/webhook-claims.js';
import { insertWebhook } from '../db/repositories/webhooks.js';
import type { WebhooksTable } from '../db/schema.js';
import { fieldError } from '../http/errors.js';

/** WEBHOOK_MAX_ENDPOINTS' default: endpoints per account and mode (docs/api.md "Webhooks out"). */
export const DEFAULT_MAX_ENDPOINTS = 20;

/**
 * Inserts a new endpoint unless its account already has `max` in the endpoint's mode (disabled
 * ones count: they can be re-enabled). The count and the insert are one write with the account's
 * row locked, so concurrent creations cannot pass the cap together. The cap bounds what one
 * account can put in front of the dispatcher: each endpoint may hold requests in flight.
 */
export async function insertWithinCap(database: Database, row: WebhooksTable, max = DEFAULT_MAX_ENDPOINTS): Promise<void> {
  const inserted = await database.write(async (trx) => {
    if ((await countEndpointsLocked(trx, row.account_id, row.livemode)) >= max) return false;
    await insertWebhook(trx, row);
    return true;
  });
  if (!inserted) {
    const mode = row.livemode === 1 ? 'live' : 'test';
    throw fieldError(
      'invalid_request',
      'url',
      'limit_reached',
      `This account already has ${max} webhook endpoints in ${mode} mode, the most it may have (WEBHOOK_MAX_ENDPOINTS); delete one (DELETE /v1/webhooks/:id) or send several event types to one endpoint`,
      { limit: max },
    );
  }
}
