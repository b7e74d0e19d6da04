import type { Kysely } from 'kysely';

/** Accounts, keys, stores, clicks, conversions, touchpoints, ad spend, idempotency keys, settings. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('accounts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('password_hash', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('hint', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('rate_limit_rps', 'integer')
    .addColumn('rate_limit_burst', 'integer')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .execute();
  await db.schema.createIndex('api_keys_account').on('api_keys').columns(['account_id', 'created_at']).execute();

  await db.schema
    .createTable('stores')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('domain', 'text', (c) => c.notNull())
    .addColumn('platform', 'text', (c) => c.notNull())
    .addColumn('pixel_id', 'text')
    .addColumn('capi_access_token', 'text')
    .addColumn('capi_test_event_code', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('timezone', 'text', (c) => c.notNull())
    .addColumn('attribution_window_days', 'integer', (c) => c.notNull())
    .addColumn('min_confidence', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('stores_account').on('stores').columns(['account_id', 'created_at', 'id']).execute();

  await db.schema
    .createTable('clicks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('store_id', 'text', (c) => c.notNull().references('stores.id'))
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('fbclid', 'text', (c) => c.notNull())
    .addColumn('click_time', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('landing_page', 'text', (c) => c.notNull())
    .addColumn('referrer', 'text')
    .addColumn('ip_address', 'text')
    .addColumn('user_agent', 'text')
    .addColumn('fingerprint', 'text')
    .addColumn('derived_fingerprint', 'text')
    .addColumn('fbp', 'text')
    .addColumn('fbc', 'text', (c) => c.notNull())
    .addColumn('utm_source', 'text')
    .addColumn('utm_medium', 'text')
    .addColumn('utm_campaign', 'text')
    .addColumn('utm_content', 'text')
    .addColumn('utm_term', 'text')
    .addColumn('campaign_id', 'text')
    .addColumn('adset_id', 'text')
    .addColumn('ad_id', 'text')
    .addColumn('is_bot', 'integer', (c) => c.notNull())
    .addUniqueConstraint('clicks_dedup', ['store_id', 'livemode', 'fbclid'])
    .execute();
  // Candidate lookups, per-store listing and click counts all walk this one.
  await db.schema.createIndex('clicks_store_time').on('clicks').columns(['store_id', 'livemode', 'click_time', 'id']).execute();
  await db.schema
    .createIndex('clicks_account_time')
    .on('clicks')
    .columns(['account_id', 'livemode', 'click_time', 'id'])
    .execute();

  await db.schema
    .createTable('conversions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('store_id', 'text', (c) => c.notNull().references('stores.id'))
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('order_id', 'text', (c) => c.notNull())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('event_time', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('value_minor', 'bigint', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('products', 'text', (c) => c.notNull())
    .addColumn('user_data', 'text', (c) => c.notNull())
    .addColumn('email_hash', 'text')
    .addColumn('phone_hash', 'text')
    .addColumn('ip_address', 'text')
    .addColumn('user_agent', 'text')
    .addColumn('fingerprint', 'text')
    .addColumn('ref_click_id', 'text')
    .addColumn('ref_fbclid', 'text')
    .addColumn('ref_fbc', 'text')
    .addColumn('fbp', 'text')
    .addColumn('event_source_url', 'text')
    .addColumn('attributed', 'integer', (c) => c.notNull())
    .addColumn('attributed_click_id', 'text')
    .addColumn('attributed_fbclid', 'text')
    .addColumn('confidence', 'integer')
    .addColumn('attribution_signal', 'text')
    .addColumn('capi_status', 'text', (c) => c.notNull())
    .addColumn('capi_attempts', 'integer', (c) => c.notNull())
    .addColumn('capi_last_error', 'text')
    .addColumn('capi_sent_at', 'bigint')
    .addUniqueConstraint('conversions_dedup', ['store_id', 'livemode', 'event_type', 'order_id'])
    .execute();
  await db.schema
    .createIndex('conversions_store_time')
    .on('conversions')
    .columns(['store_id', 'livemode', 'event_time', 'id'])
    .execute();
  await db.schema
    .createIndex('conversions_account_time')
    .on('conversions')
    .columns(['account_id', 'livemode', 'event_time', 'id'])
    .execute();

  await db.schema
    .createTable('touchpoints')
    .addColumn('conversion_id', 'text', (c) => c.notNull().references('conversions.id'))
    .addColumn('click_id', 'text', (c) => c.notNull().references('clicks.id'))
    .addColumn('signal', 'text', (c) => c.notNull())
    .addColumn('score', 'integer', (c) => c.notNull())
    .addColumn('click_time', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('touchpoints_pk', ['conversion_id', 'click_id'])
    .execute();

  await db.schema
    .createTable('ad_spend')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('store_id', 'text', (c) => c.notNull().references('stores.id'))
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('date', 'text', (c) => c.notNull())
    .addColumn('platform', 'text', (c) => c.notNull())
    .addColumn('campaign_id', 'text', (c) => c.notNull())
    .addColumn('campaign_name', 'text')
    .addColumn('amount_minor', 'bigint', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('ad_spend_dedup', ['store_id', 'livemode', 'date', 'platform', 'campaign_id'])
    .execute();

  await db.schema
    .createTable('idempotency_keys')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('request_hash', 'text', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('response', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['account_id', 'livemode', 'key'])
    .execute();
  await db.schema.createIndex('idempotency_keys_created').on('idempotency_keys').column('created_at').execute();

  await db.schema
    .createTable('settings')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();
}
