import type { CreateTableBuilder, DialectAdapter, Kysely, RawBuilder, SelectQueryBuilder } from 'kysely';
import type { Reader, Writer } from './database.js';
import type {
  ClicksTable,
  ConversionsTable,
  CustomersTable,
  DestinationJobsTable,
  TouchpointsTable,
  WebhookEventRow,
} from './schema.js';

/**
 * What each engine does its own way, one interface per concern. db/sqlite/engine.ts and
 * db/postgres/engine.ts each implement `Engine` (a class per concern in db/sqlite/, db/postgres/); the engine's code attaches its `Engine` to the
 * Kysely dialect's adapter when it opens the database (the adapter is the one object Kysely hands
 * on to every transaction and connection it makes), so a repository reaches its engine's
 * statements through the `Reader` or `Writer` it was given, with `engineOf(db)`, and never asks
 * which engine that is.
 */
export interface Engine {
  locks: Locks;
  clicks: ClickStatements;
  conversions: ConversionStatements;
  evidence: EvidenceStatements;
  json: JsonStatements;
  retention: RetentionStatements;
  migrations: MigrationHooks;
}

/** The adapter of a dialect that db/sqlite or db/postgres made: it carries its engine. */
export interface EngineAdapter extends DialectAdapter {
  readonly engine: Engine;
}

/** The statements of the engine `db` runs on (attached by the engine when it opened the database). */
export function engineOf(db: Reader | Kysely<unknown>): Engine {
  const adapter = (db as unknown as { getExecutor(): { adapter: Partial<EngineAdapter> } }).getExecutor().adapter;
  if (!adapter.engine) throw new Error('a query builder not opened by db/sqlite or db/postgres: its adapter carries no engine');
  return adapter.engine;
}

// biome-ignore lint/suspicious/noExplicitAny: a select of any table and columns
type Select = SelectQueryBuilder<any, any, any>;

/**
 * Row locks of a read inside a write. PostgreSQL takes them (`FOR UPDATE`, `SKIP LOCKED`); SQLite
 * has no row locks and needs none: its writes are serialized, so the query runs as it is.
 * `forUpdate` and `claim` use no `this`: a query passes them on, `.$call(engineOf(db).locks.claim)`.
 */
export interface Locks {
  /** The rows read stay locked until the transaction ends: two writers of one row take turns. */
  forUpdate<Q extends Select>(query: Q): Q;
  /**
   * Locks the rows `query` reads until the transaction ends, its answer unneeded: PostgreSQL runs
   * it `FOR UPDATE`; SQLite runs nothing (a statement a recording saved).
   */
  lockRows<Q extends Select>(query: Q): Promise<void>;
  /** A claim: the rows read are locked, and rows another transaction holds are skipped (never waited for). */
  claim<Q extends Select>(query: Q): Q;
  /** This transaction's statements may run up to `minutes` (a rare long job; PostgreSQL bounds each statement). */
  allowLongStatements(trx: Writer, minutes: number): Promise<void>;
  /**
   * Transactions that take the same `key` take turns from here to their end, with no row to
   * lock (PostgreSQL: a transaction-level advisory lock; SQLite: writes already take turns).
   */
  serialize(trx: Writer, key: string): Promise<void>;
}

/** A click as stored, and whether it was there before (the same fbclid tracked again). */
export interface StoredClick {
  row: ClicksTable;
  duplicate: boolean;
}

/** The clicks' dedup key (store, mode, fbclid): the table's own unique key on SQLite, `click_keys` on PostgreSQL. */
export interface ClickStatements {
  /**
   * Each click inserted with its rollup queue row and its ambiguity-count rows (attribution_keys,
   * migration 0024) unless (store, mode, fbclid) is stored; answers
   * in order what inserting them one after the other would have (a later click of one key is a
   * duplicate of the earlier).
   */
  insertOnce(db: Writer, clicks: ClicksTable[]): Promise<StoredClick[]>;
  /** The click of (store, mode, fbclid). */
  byFbclid(db: Reader, storeId: string, livemode: number, fbclid: string): Promise<ClicksTable | undefined>;
  /** Deletes what the engine keeps of these expiring clicks' keys apart from the clicks (before: their cutoff). */
  deleteKeys(trx: Writer, before: number, clickIds: string[]): Promise<void>;
}

/** A conversion's dedup key. */
export type ConversionKey = { storeId: string; livemode: number; eventType: string; orderId: string };

/** A conversion to record: its row, its touchpoints, and its delivery jobs. */
export interface ConversionRecord {
  conversion: ConversionsTable;
  touchpoints: TouchpointsTable[];
  /** Its delivery jobs (the outbox): Meta's and the other destinations' (Google Ads, TikTok, …), api.md §8. */
  jobs?: DestinationJobsTable[];
  /** Its `conversion.attributed` webhook event (api.md §9), written to the webhook outbox with it. */
  webhook?: WebhookEventRow;
  /** Its customer (api.md §11): upserted with it, keeping the earliest conversion by (event time, id). */
  customer?: CustomersTable;
}

/** The conversions' dedup key (store, mode, eventType, orderId): the table's own on SQLite, `conversion_keys` on PostgreSQL. */
export interface ConversionStatements {
  /**
   * Inserts the conversion unless its key is stored, and with it its touchpoints, its rollup
   * queue row, its delivery jobs and webhook messages; true when it was inserted. A unique key
   * decides, never a prior read.
   */
  recordOnce(db: Writer, record: ConversionRecord): Promise<boolean>;
  byKey(db: Reader, key: ConversionKey): Promise<ConversionsTable | undefined>;
  /** The id and time of the conversion of a key. */
  idOfKey(db: Reader, key: ConversionKey): Promise<{ id: string; eventTime: number } | undefined>;
  /** Up to `limit` conversions of an order (one per event type). */
  ofOrder(
    db: Reader,
    order: { storeId: string; livemode: number; orderId: string },
    limit: number,
  ): Promise<{ id: string; eventType: string; eventTime: number }[]>;
  /** Deletes what the engine keeps of these expiring conversions' keys apart from the conversions. */
  deleteKeys(trx: Writer, before: number, conversionIds: string[]): Promise<void>;
}

export interface CandidateScope {
  storeId: string;
  livemode: number;
  /** Click-time bounds, inclusive. */
  from: number;
  to: number;
}

/** The ambiguity counts a conversion reads (ambiguity-keys.ts): one key per kind of evidence it has. */
export type AmbiguityCountKind = 'ip' | 'ip_user_agent' | 'fingerprint';

/** What the clicks that may explain a conversion are looked up by (absent signals left out). */
export interface EvidenceLookup {
  accountId: string;
  /**
   * Store, mode and the candidates' click-time bounds. A click outside them is never a candidate,
   * so an engine may bound every lookup by them (PostgreSQL does, to prune partitions) or not.
   */
  scope: CandidateScope;
  clickId?: string;
  /** Looked up by key: each names at most one click. */
  fbclids: string[];
  fingerprint?: string;
  /** Values of the clicks' derived fingerprint (at most two: the fingerprint, the IP and user agent hash). */
  derivedFingerprints: string[];
  /** An IPv4 address: clicks with that `ip_address`. */
  ipAddress?: string;
  /** An IPv6 address's /64 (ambiguity-keys.ts): clicks with that `ip_network`. */
  ipNetwork?: string;
  /** The conversion's browser ids: clicks from the same browser. */
  browsers: { visitorId?: string; fbp?: string; ttp?: string };
  /**
   * Earlier conversions of the store and mode sharing a hashed email or phone, with event times
   * in [after, before]: the clicks the attributed ones were attributed to, and the browsers of
   * the most recent ones (and those browsers' clicks in the window). One earlier than `after`
   * cannot name a candidate click. Also the browsers POST /v1/track/identify linked to a hash
   * (however long ago: the link says whose browser it is; its clicks are still the window's).
   */
  identity: { emailHash?: string; phoneHash?: string; after: number; before: number; excludeId?: string };
  /** Per signal value, at most this many of the most recent matching clicks. */
  limit: number;
  /**
   * Distinct browsers per key (attribution_keys, migration 0024) over the window's days (UTC day
   * numbers): at most `limit` rows of a key are read, most recent days first.
   */
  counts: {
    days: number[];
    keys: Partial<Record<AmbiguityCountKind, number>>;
    limit: number;
    /**
     * The kinds the scoring of these clicks can read (a count that no click found shows is never
     * read): an engine that counts after the clicks are found (SQLite) counts only those.
     */
    needed?: (clicks: EvidenceClick[]) => ReadonlySet<AmbiguityCountKind>;
  };
}

/** The columns of a click that attribution reads (the rest of its row is not fetched on PostgreSQL). */
export type EvidenceClick = Pick<
  ClicksTable,
  | 'id'
  | 'fbclid'
  | 'store_id'
  | 'livemode'
  | 'click_time'
  | 'is_bot'
  | 'fingerprint'
  | 'derived_fingerprint'
  | 'ip_address'
  | 'user_agent'
  | 'fbp'
  | 'ttp'
  | 'visitor_id'
>;

/** A browser an earlier conversion of the same buyer came from. */
export interface LinkedBrowser {
  visitorId: string | null;
  fbp: string | null;
  ttp: string | null;
}

export interface EvidenceClicks {
  /** Every click found, once per lookup that found it (at least the columns attribution reads). */
  clicks: EvidenceClick[];
  /** Clicks the identity-linked conversions were attributed to. */
  identityClickIds: string[];
  /** Browsers the identity-linked conversions came from, and those identify linked to the hashes (migration 0026). */
  linkedBrowsers: LinkedBrowser[];
  /** Distinct browsers counted per key asked for (absent when not asked). */
  shared: Partial<Record<AmbiguityCountKind, number>>;
  /** The clicks are whole rows (SQLite reads every column): the attributed one need not be read again. */
  whole?: boolean;
}

export interface EvidenceStatements {
  /** The clicks that may explain a conversion: each an index-backed lookup of one exact key. */
  clicks(db: Reader, lookup: EvidenceLookup): Promise<EvidenceClicks>;
}

export interface JsonStatements {
  /** The text at `json`'s `key`.`field` (null when absent). */
  field(json: RawBuilder<unknown>, key: string, field: string): RawBuilder<string | null>;
  /** `json` (a JSON object's text; null reads as `{}`) with its `key` set to the JSON text `entry`. */
  set(json: RawBuilder<unknown>, key: string, entry: string): RawBuilder<string>;
  /** An aggregate: the JSON object text of `key` → `value` over the group's rows where `where` holds (null or `{}` when none). */
  objectOf(key: RawBuilder<unknown>, value: RawBuilder<unknown>, where: RawBuilder<unknown>): RawBuilder<string | null>;
  /** An aggregate: the JSON array text of `value` over the group's rows where `where` holds, in no set order (null or `[]` when none). */
  arrayOf(value: RawBuilder<unknown>, where: RawBuilder<unknown>): RawBuilder<string | null>;
}

export interface Deleted {
  clicks: number;
  conversions: number;
}

/** A month of events dropped whole: what it held, and the partition's name. */
export interface DroppedMonth extends Deleted {
  month: string;
}

export interface RetentionStatements {
  /**
   * How long one batch of row-by-row retention should hold the database, when requests' writes
   * wait behind it (SQLite's one writer: retention.ts sizes its batches by it); undefined when
   * they do not (PostgreSQL: row locks only), and batches are sized by count alone.
   */
  readonly batchBudgetMs?: number;
  /**
   * Drops, before retention goes row by row, what the engine can drop whole: on PostgreSQL the
   * oldest month of events wholly before `before` (with its dependants), one a call and last in
   * its transaction; on SQLite nothing. Undefined when there is none.
   */
  dropExpiredMonth(trx: Writer, before: number, deleting: DeletingConversions): Promise<DroppedMonth | undefined>;
}

/** Called in the deleting transaction with the ids of conversions about to be deleted (the report rollups subtract them). */
export type DeletingConversions = (trx: Writer, conversionIds: string[]) => Promise<void>;

/** The engine's part of the migrations that differ between engines (db/migrations). */
export interface MigrationHooks {
  /** The schema of Kysely's migration table: PostgreSQL's connection's own (several may share a database). */
  migrationTableSchema(db: Kysely<unknown>): Promise<string | undefined>;
  /** `table` stored in its primary key's order where the engine can (SQLite: `without rowid`). */
  clusteredOnKey<T extends string, C extends string>(table: CreateTableBuilder<T, C>): CreateTableBuilder<T, C>;
  /** 0005: queues the events 0004's rowid watermarks had not reached (an existing embedded database). */
  queueUnfolded(db: Kysely<unknown>): Promise<void>;
  /** 0007: event tables partitioned by month, their keys in key tables (PostgreSQL only). */
  partitionEvents(db: Kysely<unknown>): Promise<void>;
  /** 0019: `destination_jobs` keyed by (conversion, destination, job_key); `capi_outbox` keyed without a foreign key. */
  rekeyForRefunds(db: Kysely<unknown>): Promise<void>;
  /** 0021: a conversion's evidence lookup as a function with a generic plan (PostgreSQL only). */
  evidenceFunction(db: Kysely<unknown>): Promise<void>;
  /** 0024: the evidence function with browser ids, IPv6 networks, linked browsers and the ambiguity counts (PostgreSQL only). */
  attributionEvidenceFunction(db: Kysely<unknown>): Promise<void>;
  /** 0026: the evidence function also reads the browsers identify linked to the buyer (PostgreSQL only). */
  identityEvidenceFunction(db: Kysely<unknown>): Promise<void>;
  /** 0044: the evidence function starts only the lookups whose values a conversion has (PostgreSQL only). */
  guardedEvidenceFunction(db: Kysely<unknown>): Promise<void>;
}
