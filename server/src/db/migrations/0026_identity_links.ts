import type { Kysely } from 'kysely';
import { engineOf } from '../engine.js';

/**
 * Identity links (api.md §13, POST /v1/track/identify): a person's hashed email or phone linked
 * to a browser (its `_wt_vid`, `_fbp`, `_ttp`). A later conversion with the same hash, from any
 * device, has identity evidence for that browser's clicks.
 * - One row per (store, mode, kind, hash, browser): the same link sent again only moves
 *   `seen_at`. An absent browser id is '' (not null), so the primary key holds it.
 * - `identity_links_recent`: a conversion reads a hash's most recently seen browsers, a few rows
 *   of one range, newest first; retention deletes by `seen_at` (`identity_links_seen`).
 * - PostgreSQL: the evidence function reads them beside the earlier conversions' browsers
 *   (db/postgres/attribution-evidence.ts).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('identity_links')
    .addColumn('store_id', 'text', (c) => c.notNull())
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull())
    .addColumn('visitor_id', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('fbp', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('ttp', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('seen_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('identity_links_pk', ['store_id', 'livemode', 'kind', 'hash', 'visitor_id', 'fbp', 'ttp'])
    .execute();
  await db.schema
    .createIndex('identity_links_recent')
    .on('identity_links')
    .columns(['store_id', 'livemode', 'kind', 'hash', 'seen_at'])
    .execute();
  await db.schema.createIndex('identity_links_seen').on('identity_links').column('seen_at').execute();
  await engineOf(db).migrations.identityEvidenceFunction(db);
}
