import { randomBytes } from 'node:crypto';
import { crashPoint } from '../crash-point.js';
import type { Database } from '../db/database.js';
import {
  claimMessages,
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
import { nextAttemptAt } from './schedule.js';
import { postMessage, type SendOptions } from './send.js';
import { signedHeaders } from './signing.js';

export interface WebhookTuning {
  maxInFlight: number;
  /** How long a claimed message stays reserved (longer than a request and its recording). */
  leaseMs: number;
  /** Longest sleep between looks at the outbox. */
  pollMs: number;
  timeoutMs: number;
  /** Extra CAs (tests); production trusts the system's and NODE_EXTRA_CA_CERTS. */
  ca?: SendOptions['ca'];
  resolve?: SendOptions['resolve'];
}

export const DEFAULT_WEBHOOK_TUNING: WebhookTuning = { maxInFlight: 8, leaseMs: 20_000, pollMs: 1000, timeoutMs: 15_000 };

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
 */
export class WebhookDispatcher {
  readonly owner = `webhooks_${randomBytes(8).toString('hex')}`;
  private readonly tuning: WebhookTuning;
  private readonly log: Log;
  private readonly loop: OutboxLoop;

  constructor(private readonly options: WebhookDispatcherOptions) {
    this.tuning = { ...DEFAULT_WEBHOOK_TUNING, ...options.tuning };
    this.log = options.log ?? SILENT;
    this.loop = new OutboxLoop(
      { nextDueAt: () => nextMessageDueAt(options.database.read), look: (free) => this.look(free) },
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

  /** Claims the due messages the free request slots can take, and sends each. */
  private async look(free: number): Promise<boolean> {
    if (free <= 0) return false;
    const now = Date.now();
    const due = await nextMessageDueAt(this.options.database.read);
    if (due === undefined || due > now) return false;
    const claimed = await this.options.database.write((trx) =>
      claimMessages(trx, { owner: this.owner, now, leaseUntil: now + this.tuning.leaseMs, limit: free }),
    );
    for (const message of claimed) {
      this.loop.launch(
        () => this.deliver(message),
        (error) => {
          // Recording failed (database unreachable): the message stays leased and is taken again after the lease.
          this.log.error(
            { err: error, webhookId: message.webhook_id, eventId: message.event_id },
            'Webhook delivery not recorded',
          );
        },
      );
    }
    return false;
  }

  private async deliver(message: WebhookMessagesTable): Promise<void> {
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
    const attempt = await this.attempt(endpoint, message);
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
   * Sends one attempt of a message and records it (its number, status, response code); an
   * acknowledgement marks the message succeeded. Used by the loop and by a resend.
   */
  async attempt(endpoint: WebhooksTable, message: WebhookMessagesTable): Promise<WebhookDeliveriesTable> {
    const secret = this.options.secrets.open(endpoint.secret, secretContext(endpoint.id));
    const headers = signedHeaders(secret, message.event_id, message.payload);
    const sent = await postMessage(endpoint.url, headers, message.payload, {
      allowPrivate: this.options.allowPrivate,
      timeoutMs: this.tuning.timeoutMs,
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
      return row;
    });
  }
}

function describeLimit(scale: number): string {
  return scale === 1 ? '3 days' : `3 days × WEBHOOK_RETRY_SCALE ${scale}`;
}
