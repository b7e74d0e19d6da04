import { sql } from 'kysely';
import type { Reader, Writer } from '../database.js';
import { engineOf } from '../engine.js';
import { rowLimit } from '../row-limit.js';
import type { WebhookMessagesTable } from '../schema.js';

// The webhook dispatcher's fair claim (webhooks/fair-share.ts decides; this reads and leases).
// `status = 'pending'` and `claimed_by is not null` are written as literals: they are the
// conditions of migration 0023's partial indexes, which a planner uses only for a literal.
const pending = (table = 'webhook_messages') => sql<boolean>`${sql.ref(`${table}.status`)} = 'pending'`;
const leased = (table = 'webhook_messages') => sql<boolean>`${sql.ref(`${table}.claimed_by`)} is not null`;

/** An endpoint with a due message, with its requests in flight and its run of timeouts. */
export interface DueEndpoint {
  webhookId: string;
  accountId: string;
  inFlight: number;
  timeoutsInRow: number;
  probeAt: number | null;
}

/**
 * The endpoints with at least one message due at `now` (one index probe each, whatever their
 * backlog), with their requests in flight: leased messages whose lease still runs, any
 * instance's. Every endpoint is looked at, disabled ones too: a message written for one as it
 * was disabled is claimed and given up (dispatcher.ts) rather than left pending.
 */
export async function dueEndpoints(db: Writer, now: number): Promise<DueEndpoint[]> {
  const rows = await db
    .selectFrom('webhooks as w')
    .leftJoin('webhook_timeouts as t', (join) => join.onRef('t.webhook_id', '=', 'w.id').onRef('t.url', '=', 'w.url'))
    .select((eb) => [
      'w.id',
      'w.account_id',
      't.timeouts_in_row',
      't.probe_at',
      eb
        .selectFrom('webhook_messages as f')
        .select((f) => f.fn.countAll<number | string>().as('n'))
        .whereRef('f.webhook_id', '=', 'w.id')
        .where(leased('f'))
        .where('f.next_attempt_at', '>', now)
        .as('in_flight'),
    ])
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('webhook_messages as m')
          .select(sql.lit(1).as('one'))
          .whereRef('m.webhook_id', '=', 'w.id')
          .where(pending('m'))
          .where('m.next_attempt_at', '<=', now),
      ),
    )
    .execute();
  return rows.map((r) => ({
    webhookId: r.id,
    accountId: r.account_id,
    inFlight: Number(r.in_flight ?? 0),
    timeoutsInRow: r.timeouts_in_row ?? 0,
    probeAt: r.probe_at === null ? null : Number(r.probe_at),
  }));
}

/**
 * Locks the endpoints a claim is about to serve and answers those it got with their requests in
 * flight as they are now. On PostgreSQL an endpoint another instance is claiming for is skipped
 * (`SKIP LOCKED`), and the count is read after the lock, so the endpoint's limit holds across
 * instances; SQLite's one writer serializes claims anyway.
 */
export async function lockEndpoints(db: Writer, ids: string[], now: number): Promise<Map<string, number>> {
  if (ids.length === 0) return new Map();
  const locked = await db
    .selectFrom('webhooks')
    .select('id')
    .where('id', 'in', ids)
    .orderBy('id')
    .$call(engineOf(db).locks.claim)
    .execute();
  const inFlight = new Map(locked.map((r) => [r.id, 0]));
  if (locked.length === 0) return inFlight;
  const counts = await db
    .selectFrom('webhook_messages')
    .select((eb) => ['webhook_id', eb.fn.countAll<number | string>().as('n')])
    .where(
      'webhook_id',
      'in',
      locked.map((r) => r.id),
    )
    .where(leased())
    .where('next_attempt_at', '>', now)
    .groupBy('webhook_id')
    .execute();
  for (const row of counts) inFlight.set(row.webhook_id, Number(row.n));
  return inFlight;
}

/**
 * Leases up to `limit` of one endpoint's due messages, oldest first, to `owner` until
 * `leaseUntil`. Two statements: the rows are chosen and locked first (SKIP LOCKED on
 * PostgreSQL), then exactly those are leased. (One `update … where event_id in (select … limit n
 * for update skip locked)` is not bounded by its limit on PostgreSQL: a concurrent change to a
 * row makes it evaluate the sub-select again, and it leased 7 rows for a limit of 1.)
 */
export async function claimEndpointMessages(
  db: Writer,
  webhookId: string,
  claim: { owner: string; now: number; leaseUntil: number; limit: number },
): Promise<WebhookMessagesTable[]> {
  if (claim.limit <= 0) return [];
  const chosen = await db
    .selectFrom('webhook_messages')
    .select('event_id')
    .where('webhook_id', '=', webhookId)
    .where(pending())
    .where('next_attempt_at', '<=', claim.now)
    .orderBy('next_attempt_at')
    .limit(rowLimit(claim.limit))
    .$call(engineOf(db).locks.claim)
    .execute();
  if (chosen.length === 0) return [];
  return db
    .updateTable('webhook_messages')
    .set({ claimed_by: claim.owner, next_attempt_at: claim.leaseUntil })
    .where('webhook_id', '=', webhookId)
    .where(
      'event_id',
      'in',
      chosen.map((r) => r.event_id),
    )
    .where(pending())
    .where('next_attempt_at', '<=', claim.now)
    .returningAll()
    .execute();
}

/**
 * Takes the full-timeout attempt of an endpoint whose timeouts were shortened, if one is due
 * (probe_at passed): true for the one claim that got it, and the next is due `everyMs` later.
 */
export async function takeProbe(db: Writer, webhookId: string, now: number, everyMs: number): Promise<boolean> {
  const taken = await db
    .updateTable('webhook_timeouts')
    .set({ probe_at: now + everyMs, updated_at: now })
    .where('webhook_id', '=', webhookId)
    .where('probe_at', '<=', now)
    .executeTakeFirst();
  return Number(taken.numUpdatedRows) > 0;
}

/**
 * Records how an attempt at `url` ended for the endpoint's run of timeouts: a timeout adds one
 * (a first one at a new URL starts the run again), and the run reaching `shortenAt` schedules the
 * first full-timeout attempt `probeEveryMs` later; a 2xx ends the run. Other failures (an answer
 * that is not 2xx, a refused connection) leave it: the endpoint answered, or failed fast.
 */
export async function recordTimeoutRun(
  db: Writer,
  attempt: { webhookId: string; url: string; outcome: 'timeout' | 'success' | 'other'; now: number },
  probe: { shortenAt: number; probeEveryMs: number },
): Promise<void> {
  if (attempt.outcome === 'other') return;
  if (attempt.outcome === 'success') {
    await db.deleteFrom('webhook_timeouts').where('webhook_id', '=', attempt.webhookId).execute();
    return;
  }
  const probeAt = attempt.now + probe.probeEveryMs;
  // Insert from the endpoint's row: nothing is written for an endpoint deleted meanwhile.
  await db
    .insertInto('webhook_timeouts')
    .columns(['webhook_id', 'url', 'timeouts_in_row', 'probe_at', 'updated_at'])
    .expression((eb) =>
      eb
        .selectFrom('webhooks')
        .select([
          'id',
          sql<string>`cast(${attempt.url} as text)`.as('url'),
          sql<number>`1`.as('timeouts_in_row'),
          sql<number | null>`cast(null as bigint)`.as('probe_at'),
          sql<number>`cast(${attempt.now} as bigint)`.as('updated_at'),
        ])
        .where('id', '=', attempt.webhookId),
    )
    .onConflict((oc) =>
      oc.column('webhook_id').doUpdateSet({
        timeouts_in_row: sql`case when webhook_timeouts.url = excluded.url then webhook_timeouts.timeouts_in_row + 1 else 1 end`,
        probe_at: sql`case
          when webhook_timeouts.url <> excluded.url then excluded.probe_at
          when webhook_timeouts.probe_at is null and webhook_timeouts.timeouts_in_row + 1 >= ${probe.shortenAt}
            then cast(${probeAt} as bigint)
          else webhook_timeouts.probe_at end`,
        url: sql`excluded.url`,
        updated_at: sql`excluded.updated_at`,
      }),
    )
    .execute();
}

/** The endpoints of an account in one mode, counted with the account's row locked (two creations take turns). */
export async function countEndpointsLocked(db: Writer, accountId: string, livemode: number): Promise<number> {
  await engineOf(db).locks.lockRows(db.selectFrom('accounts').select('id').where('id', '=', accountId));
  const row = await db
    .selectFrom('webhooks')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('account_id', '=', accountId)
    .where('livemode', '=', livemode)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** When the next message falls due after `after` (a lease end counts: it is taken again then). */
export async function nextMessageDueAfter(db: Reader, after: number): Promise<number | undefined> {
  const row = await db
    .selectFrom('webhook_messages')
    .select((eb) => eb.fn.min('next_attempt_at').as('next'))
    .where('status', '=', 'pending')
    .where('next_attempt_at', '>', after)
    .executeTakeFirst();
  return row?.next === null || row?.next === undefined ? undefined : Number(row.next);
}
