import { randomBytes } from 'node:crypto';
import { crashPoint } from '../crash-point.js';
import type { Database, Writer } from '../db/database.js';
import {
  claimEndpointMessages,
  dueEndpoints,
  lockEndpoints,
  nextMessageDueAfter,
  recordTimeoutRun,
  takeProbe,
} from '../db/repositories/webhook-claims.js';
import {
  countAttempt,
  disableWebhook,
  insertDelivery,
  markSucceeded,
  markUnsucceeded,
  nextMessageDueAt,
  webhookById,
} from '../db/repositories/webhooks.js';
import type { WebhookDeliveriesTable, WebhookMessagesTable, WebhooksTable } from '../db/schema.js';
import { newId } from '../ids.js';
import { OutboxLoop } from '../outbox-loop.js';
import type { SecretBox } from '../secrets.js';
import { attemptTimeoutMs, DEFAULT_TIMEOUTS, type FairShare, planClaims, type Rotation, SHORTER_AFTER } from './fair-share.js';
import { nextAttemptAt } from './schedule.js';
import { postMessage, type SendOptions } from './send.js';
import { signedHeaders } from './signing.js';

export interface WebhookTuning extends FairShare {
  /** Requests in flight at most: this instance's pool. */
  maxInFlight: number;
  /** How long a claimed message stays reserved (longer than a request and its recording). */
  leaseMs: number;
  /** Longest sleep between looks at the outbox. */
  pollMs: number;
  /** An attempt's timeout (api.md §9: 15 s)... */
  timeoutMs: number;
  /** ...after SHORTER_AFTER timeouts in a row, and after SHORTEST_AFTER (fair-share.ts). */
  shortTimeoutMs: number;
  shortestTimeoutMs: number;
  /** While an endpoint's timeout is shortened, one attempt this often gets `timeoutMs`. */
  probeEveryMs: number;
  /** Extra CAs (tests); production trusts the system's and NODE_EXTRA_CA_CERTS. */
  ca?: SendOptions['ca'];
  resolve?: SendOptions['resolve'];
}

/**
 * A pool of 32 requests; 2 at a time to one endpoint (across instances), 8 at a time for one
 * account (a quarter of the pool: one account's hanging endpoints leave 24 slots to the others).
 */
export const DEFAULT_WEBHOOK_TUNING: WebhookTuning = {
  maxInFlight: 32,
  perEndpoint: 2,
  perAccount: 8,
  leaseMs: 20_000,
  pollMs: 1000,
  timeoutMs: DEFAULT_TIMEOUTS.fullMs,
  shortTimeoutMs: DEFAULT_TIMEOUTS.shortMs,
  shortestTimeoutMs: DEFAULT_TIMEOUTS.shortestMs,
  probeEveryMs: DEFAULT_TIMEOUTS.probeEveryMs,
};

/** A claimed message and the timeout its attempt gets. */
interface Claimed {
  message: WebhookMessagesTable;
  timeoutMs: number;
}

interface Log {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface WebhookDispatcherOptions {
  database: Database;
  secrets: SecretBox;
  retryScale: number;
  allowPrivate: boolean;
  log?: Log;
  tuning?: Partial<WebhookTuning>;
}

const SILENT: Log = { warn() {}, error() {} };

/** The sealed secret's context: an endpoint's secret opens only on its own row. */
export const secretContext = (webhookId: string) => `webhook:${webhookId}`;

/**
 * Delivers the webhook outbox at least once. A message is leased in the database before it is
 * sent, so dispatchers sharing the database never send it at once, and one of a process killed
 * mid-request is taken again after its lease, with the same `webhook-id`. Each attempt is
 * recorded; a failed one is retried on the documented schedule (schedule.ts); past 3 days the
 * endpoint is disabled with the reason shown. The claim loop is the one the destinations'
 * dispatcher shares (outbox-loop.ts).
 *
 * Fairness (issue 37): the free slots are handed out by fair-share.ts, never by due time alone,
 * so an account whose endpoints hang or whose events flood holds its share of the pool and no
 * more, and an endpoint that keeps timing out is given less time (DEFAULT_TIMEOUTS).
 */
export class WebhookDispatcher {
  readonly owner = `webhooks_${randomBytes(8).toString('hex')}`;
  private readonly tuning: WebhookTuning;
  private readonly log: Log;
  private readonly loop: OutboxLoop;
  /** This instance's requests in flight per account (its share is of this pool). */
  private readonly accountInFlight = new Map<string, number>();
  private readonly rotation: Rotation = { account: '', endpoints: new Map() };
  /** The time the last look claimed at: what was due then and is still pending waits for a slot. */
  private lastLookAt = 0;

  constructor(private readonly options: WebhookDispatcherOptions) {
    this.tuning = { ...DEFAULT_WEBHOOK_TUNING, ...options.tuning };
    this.log = options.log ?? SILENT;
    this.loop = new OutboxLoop(
      {
        // Due messages the last look left are waiting for a slot: a request ending wakes the
        // loop (another instance's, within pollMs). Only what falls due later needs a timer.
        nextDueAt: () => nextMessageDueAfter(options.database.read, this.lastLookAt),
        look: (free) => this.look(free),
      },
      {
        maxInFlight: this.tuning.maxInFlight,
        pollMs: this.tuning.pollMs,
        log: this.log,
        failedLook: 'Webhook dispatcher could not read the outbox',
      },
    );
  }

  start(): void {
    this.loop.start();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
  }

  /** Messages may be due: look soon (coalesced). */
  wake(): void {
    this.loop.wake();
  }

  /**
   * Claims due messages for the free request slots, shared out fairly (fair-share.ts), and sends
   * each. True (look again at once) when an endpoint had fewer due messages than planned and
   * something was claimed: the slots left may serve another.
   */
  private async look(free: number): Promise<boolean> {
    if (free <= 0) return false;
    const now = Date.now();
    this.lastLookAt = now;
    const due = await nextMessageDueAt(this.options.database.read);
    if (due === undefined || due > now) return false;
    const { claimed, short } = await this.options.database.write((trx) => this.claim(trx, free, now));
    for (const { message, timeoutMs } of claimed) {
      const account = message.account_id;
      this.accountInFlight.set(account, (this.accountInFlight.get(account) ?? 0) + 1);
      this.loop.launch(
        () =>
          this.deliver(message, timeoutMs).finally(() => {
            const left = (this.accountInFlight.get(account) ?? 1) - 1;
            if (left > 0) this.accountInFlight.set(account, left);
            else this.accountInFlight.delete(account);
          }),
        (error) => {
          // Recording failed (database unreachable): the message stays leased and is taken again after the lease.
          this.log.error(
            { err: error, webhookId: message.webhook_id, eventId: message.event_id },
            'Webhook delivery not recorded',
          );
        },
      );
    }
    return short && claimed.length > 0;
  }

  /** One claim transaction: the due endpoints, the plan, the endpoints locked, their messages leased. */
  private async claim(trx: Writer, free: number, now: number) {
    const candidates = await dueEndpoints(trx, now);
    const plan = planClaims(candidates, free, this.tuning, (a) => this.accountInFlight.get(a) ?? 0, this.rotation);
    const inFlight = await lockEndpoints(trx, [...plan.keys()], now);
    const byId = new Map(candidates.map((c) => [c.webhookId, c]));
    const claimed: Claimed[] = [];
    let short = false;
    for (const [webhookId, wanted] of plan) {
      const held = inFlight.get(webhookId);
      if (held === undefined) continue; // another instance is claiming for it
      const limit = Math.min(wanted, this.tuning.perEndpoint - held);
      const messages = await claimEndpointMessages(trx, webhookId, {
        owner: this.owner,
        now,
        leaseUntil: now + this.tuning.leaseMs,
        limit,
      });
      if (messages.length < wanted) short = true;
      const endpoint = byId.get(webhookId) as (typeof candidates)[number];
      let probe = false;
      if (
        messages.length > 0 &&
        endpoint.timeoutsInRow >= SHORTER_AFTER &&
        endpoint.probeAt !== null &&
        endpoint.probeAt <= now
      ) {
        probe = await takeProbe(trx, webhookId, now, this.tuning.probeEveryMs);
      }
      for (const [i, message] of messages.entries()) {
        claimed.push({ message, timeoutMs: attemptTimeoutMs(this.ladder, endpoint.timeoutsInRow, probe && i === 0) });
      }
    }
    return { claimed, short };
  }

  private get ladder() {
    const t = this.tuning;
    return { fullMs: t.timeoutMs, shortMs: t.shortTimeoutMs, shortestMs: t.shortestTimeoutMs, probeEveryMs: t.probeEveryMs };
  }

  private async deliver(message: WebhookMessagesTable, timeoutMs: number): Promise<void> {
    const endpoint = await webhookById(this.options.database.read, message.webhook_id);
    if (endpoint?.status !== 'enabled') {
      // Deleted (its messages went with it) or disabled meanwhile: nothing to send.
      await this.options.database.write((trx) =>
        markUnsucceeded(
          trx,
          { webhookId: message.webhook_id, eventId: message.event_id, owner: this.owner },
          { status: 'failed', nextAttemptAt: Date.now(), error: 'The endpoint was disabled' },
        ),
      );
      return;
    }
    const attempt = await this.attempt(endpoint, message, timeoutMs);
    if (attempt.status === 'succeeded') return;
    const now = Date.now();
    const next = nextAttemptAt(message.created_at, attempt.attempt, now, this.options.retryScale);
    const error = attempt.error ?? 'failed';
    await this.options.database.write(async (trx) => {
      const key = { webhookId: message.webhook_id, eventId: message.event_id, owner: this.owner };
      if (next !== undefined) {
        await markUnsucceeded(trx, key, { status: 'pending', nextAttemptAt: next, error });
        return;
      }
      if (await markUnsucceeded(trx, key, { status: 'failed', nextAttemptAt: now, error })) {
        const reason = `Deliveries failed for ${describeLimit(this.options.retryScale)} (event ${message.event_id}, ${attempt.attempt} attempts); last error: ${error}`;
        this.log.warn({ webhookId: endpoint.id, reason }, 'Webhook endpoint disabled');
        await disableWebhook(trx, endpoint.id, reason, now);
      }
    });
    this.wake();
  }

  /**
   * Sends one attempt of a message and records it (its number, status, response code) with the
   * endpoint's run of timeouts; an acknowledgement marks the message succeeded. Used by the loop
   * and by a resend, which gets the full timeout (a check that the endpoint is fixed).
   */
  async attempt(
    endpoint: WebhooksTable,
    message: WebhookMessagesTable,
    timeoutMs = this.tuning.timeoutMs,
  ): Promise<WebhookDeliveriesTable> {
    const secret = this.options.secrets.open(endpoint.secret, secretContext(endpoint.id));
    const headers = signedHeaders(secret, message.event_id, message.payload);
    const sent = await postMessage(endpoint.url, headers, message.payload, {
      allowPrivate: this.options.allowPrivate,
      timeoutMs,
      ca: this.tuning.ca,
      resolve: this.tuning.resolve,
    });
    crashPoint('webhook'); // test hook: the endpoint has the message, the attempt is not recorded
    const at = Date.now();
    return this.options.database.write(async (trx) => {
      const number = (await countAttempt(trx, message.webhook_id, message.event_id)) ?? message.attempts + 1;
      const row: WebhookDeliveriesTable = {
        id: newId('webhookDelivery', at),
        webhook_id: message.webhook_id,
        event_id: message.event_id,
        event_type: message.event_type,
        attempt: number,
        status: sent.ok ? 'succeeded' : 'failed',
        response_code: sent.responseCode,
        error: sent.error,
        duration_ms: sent.durationMs,
        at,
      };
      await insertDelivery(trx, row);
      if (sent.ok) await markSucceeded(trx, message.webhook_id, message.event_id);
      await recordTimeoutRun(
        trx,
        {
          webhookId: endpoint.id,
          url: endpoint.url,
          outcome: sent.ok ? 'success' : sent.timedOut ? 'timeout' : 'other',
          now: at,
        },
        { shortenAt: SHORTER_AFTER, probeEveryMs: this.tuning.probeEveryMs },
      );
      return row;
    });
  }
}

function describeLimit(scale: number): string {
  return scale === 1 ? '3 days' : `3 days × WEBHOOK_RETRY_SCALE ${scale}`;
}
