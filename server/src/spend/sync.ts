import { randomBytes } from 'node:crypto';
import { addDays, dateIn } from '../calendar/dates.js';
import { crashPoint } from '../crash-point.js';
import type { Database } from '../db/database.js';
import { claimSources, nextSourceDueAt, renewLease } from '../db/repositories/spend-sources.js';
import { findStore } from '../db/repositories/stores.js';
import type { SpendSourcesTable } from '../db/schema.js';
import { OutboxLoop } from '../outbox-loop.js';
import type { SecretBox } from '../secrets.js';
import { openSecrets, resolveCredentials } from './credentials.js';
import { spendPlatformOf } from './platforms/index.js';
import type { SpendEnv, SpendPlatform, SpendRow } from './platforms/types.js';
import type { SourceSettings, SpendSourceKind } from './source-settings.js';
import { type RunFailure, recordFailure, recordSuccess, type SyncLog, type SyncTurn } from './sync-outcome.js';

export interface SpendSyncTuning {
  /** Sources synced at once by this instance. */
  maxInFlight: number;
  /** How long a claimed source stays this instance's (renewed before each account's report). */
  leaseMs: number;
  /** Longest sleep between looks (sources of other instances, leases ending). */
  pollMs: number;
  /** One report request's timeout. */
  requestTimeoutMs: number;
  /** A failed sync is tried again after min(interval, retryBaseMs·2^(failures−1)). */
  retryBaseMs: number;
}

export const DEFAULT_SPEND_TUNING: SpendSyncTuning = {
  maxInFlight: 2,
  leaseMs: 5 * 60_000,
  pollMs: 5000,
  requestTimeoutMs: 30_000,
  retryBaseMs: 60_000,
};

export interface SpendSyncOptions {
  database: Database;
  secrets: SecretBox;
  env: SpendEnv;
  /** SPEND_SYNC_INTERVAL_S. */
  intervalS: number;
  /** SPEND_RESTATE_DAYS. */
  restateDays: number;
  log?: SyncLog;
  tuning?: Partial<SpendSyncTuning>;
  /** The platform of a kind (spend/platforms/index.ts). */
  platformOf?: (kind: string) => SpendPlatform | undefined;
}

const SILENT: SyncLog = { info() {}, warn() {}, error() {} };

/**
 * The spend sync (api.md §11 "Sync"): each spend source is a durable job in its own row, leased as
 * the outbox's jobs are (db/repositories/spend-sources.ts: claimed with SKIP LOCKED and a lease,
 * so one instance runs it and a killed one's is taken over when its lease ends), driven by the
 * outbox's claim loop (outbox-loop.ts). A run pulls every account's report over the range (the
 * backfill on connect, then the last SPEND_RESTATE_DAYS days), and records it only if every
 * account answered well-formed and this instance still holds the lease: the rows upserted as
 * live-mode ad spend with `source: "sync"`, the days no longer reported set to 0 — all in one
 * transaction with the source's new state (sync-outcome.ts). A failure records nothing of the
 * pull (the old figures stay) and counts in the source's failure streak.
 */
export class SpendSyncer {
  readonly owner = `spend_${randomBytes(8).toString('hex')}`;
  private readonly tuning: SpendSyncTuning;
  private readonly log: SyncLog;
  private readonly loop: OutboxLoop;
  private readonly platformOf: (kind: string) => SpendPlatform | undefined;

  constructor(private readonly options: SpendSyncOptions) {
    this.tuning = { ...DEFAULT_SPEND_TUNING, ...options.tuning };
    this.log = options.log ?? SILENT;
    this.platformOf = options.platformOf ?? spendPlatformOf;
    this.loop = new OutboxLoop(
      { nextDueAt: () => nextSourceDueAt(options.database.read), look: (free) => this.look(free) },
      {
        maxInFlight: this.tuning.maxInFlight,
        pollMs: this.tuning.pollMs,
        log: this.log,
        failedLook: 'Spend sync could not read its sources',
      },
    );
  }

  start(): void {
    this.loop.start();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
  }

  /** A source fell due here (connected, or a sync asked for): look now. */
  wake(): void {
    this.loop.wake();
  }

  private async look(free: number): Promise<boolean> {
    if (free <= 0) return false;
    const now = Date.now();
    const claim = { owner: this.owner, now, leaseUntil: now + this.tuning.leaseMs, limit: free };
    const claimed = await this.options.database.write((trx) => claimSources(trx, claim));
    for (const row of claimed) {
      this.loop.launch(
        () => this.run(row),
        (error) => this.log.error({ err: error, storeId: row.store_id, source: row.kind }, 'Spend sync run failed'),
      );
    }
    return claimed.length === free;
  }

  /** One run of a claimed source: pull, then record the outcome if the lease is still ours. */
  private async run(row: SpendSourcesTable): Promise<void> {
    const started = Date.now();
    const outcome = await this.pull(row, started);
    if (!('failure' in outcome)) crashPoint('spend'); // test hook: fetched, nothing recorded
    const context = {
      database: this.options.database,
      owner: this.owner,
      row,
      now: Date.now(),
      intervalMs: this.options.intervalS * 1000,
      retryBaseMs: this.tuning.retryBaseMs,
    };
    const turn = 'failure' in outcome ? await recordFailure(context, outcome.failure) : await recordSuccess(context, outcome);
    if (turn) this.logTurn(turn);
  }

  private logTurn(turn: SyncTurn): void {
    const fields = { storeId: turn.storeId, source: turn.kind, consecutiveFailures: turn.consecutiveFailures };
    if (turn.turned === 'failing') this.log.warn(fields, `Spend source failing: ${turn.message}`);
    else this.log.info(fields, `Spend source recovered: ${turn.message}`);
  }

  private async pull(
    row: SpendSourcesTable,
    now: number,
  ): Promise<{ failure: RunFailure } | { rows: SpendRow[]; since: string; until: string; platform: string }> {
    const kind = row.kind as SpendSourceKind;
    const platform = this.platformOf(kind);
    const label = platform?.label ?? kind;
    if (!platform) return { failure: { error: `This server has no spend report for ${kind}`, side: 'platform' } };
    const store = await findStore(this.options.database.read, row.account_id, row.store_id);
    if (!store) return { failure: { error: `Store ${row.store_id} no longer exists`, side: 'platform' } };
    const settings = JSON.parse(row.settings) as SourceSettings;
    const own = openSecrets(this.options.secrets, row.store_id, kind, row.secrets);
    if (own === undefined) {
      return {
        failure: {
          error: `The ${kind} spend source's secrets do not open with this SECRETS_KEY (it changed): set them again with PUT`,
          side: 'platform',
        },
      };
    }
    const resolved = await resolveCredentials(this.options.database.read, this.options.secrets, {
      accountId: row.account_id,
      storeId: row.store_id,
      kind,
      settings,
      own,
    });
    if ('missing' in resolved) return { failure: { error: resolved.message, side: 'platform', credential: resolved.missing } };
    const days = row.synced_through === null ? Number(row.backfill_days) : this.options.restateDays;
    const until = dateIn(now, store.timezone);
    const since = addDays(until, -(days - 1));
    const rows: SpendRow[] = [];
    for (const account of settings.accounts) {
      // Still ours? (Reconfigured, removed, or taken over: stop pulling for nothing.)
      const held = await this.options.database.write((trx) =>
        renewLease(trx, { storeId: row.store_id, kind }, this.owner, Date.now() + this.tuning.leaseMs),
      );
      if (!held) return { failure: { error: 'lease lost', side: 'platform', leaseLost: true } };
      const result = await platform.fetch({
        account,
        since,
        until,
        credentials: resolved.credentials,
        env: this.options.env,
        timeoutMs: this.tuning.requestTimeoutMs,
      });
      if ('error' in result) {
        return {
          failure: {
            error: result.error,
            side: result.side,
            retryable: result.retryable,
            ...(result.credential !== undefined && { credential: result.credential }),
          },
        };
      }
      rows.push(...result.rows);
    }
    return { rows, since, until, platform: label };
  }
}
