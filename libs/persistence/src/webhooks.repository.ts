import { Inject, Injectable } from '@nestjs/common';
import { sql, type Kysely } from 'kysely';
import { DATABASE } from './tokens';
import type { Database } from './database';
import type { DatabaseSchema } from './schema';
import type { RunEventData, RunEventName } from './run-events';

export type WebhookOrigin = 'api' | 'config';
export type DeliveryState = 'pending' | 'delivered' | 'failed';
/** An attempt's result: delivered (2xx), retry (another attempt is due at nextAttemptAt), failed (given up). */
export type AttemptOutcome = 'delivered' | 'retry' | 'failed';

export interface WebhookRecord {
  id: string;
  url: string;
  secret: string;
  origin: WebhookOrigin;
  events: RunEventName[];
  createdAt: number;
}

/** A delivery this node claimed, with what sending it needs. */
export interface ClaimedDelivery {
  id: number;
  webhookId: string;
  url: string;
  secret: string;
  /** Attempts made before this one. */
  attempts: number;
  /** The claim's end: also the token that says the claim is still this node's. */
  claimedUntil: number;
  eventId: string;
  event: RunEventName;
  jobId: number;
  runId: string;
  data: RunEventData;
  /** When the event happened: retries end 24 h (the configured window) after it. */
  createdAt: number;
}

export interface AttemptResult {
  attempt: number;
  attemptedAt: number;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  outcome: AttemptOutcome;
  /** outcome retry: when the next attempt is due. */
  nextAttemptAt: number | null;
}

export interface AttemptRecord extends AttemptResult {
  id: number;
  deliveryId: number;
  webhookId: string;
  eventId: string;
  event: RunEventName;
  jobId: number;
  runId: string;
}

/**
 * Webhooks, their run events (the outbox written by run transitions: run-events.ts) and deliveries.
 * Deliveries are claimed with a lease so that every node may send them: a claim is an update that only
 * succeeds while the row is unclaimed (or its claim ran out), and only the earliest pending delivery of
 * an endpoint and job is eligible, which keeps each job's events in order.
 */
@Injectable()
export class WebhooksRepository {
  constructor(@Inject(DATABASE) private readonly database: Database) {}

  private get db(): Kysely<DatabaseSchema> {
    return this.database.db;
  }

  /** Inserts or replaces a webhook and its events. */
  async saveWebhook(hook: Omit<WebhookRecord, 'createdAt'>, now: number): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('webhooks')
        .values({ id: hook.id, url: hook.url, secret: hook.secret, origin: hook.origin, created_at: now })
        .onConflict((oc) => oc.column('id').doUpdateSet({ url: hook.url, secret: hook.secret, origin: hook.origin }))
        .execute();
      // Nodes starting together save the same file's webhooks: no step may fail on another's rows.
      await trx.deleteFrom('webhook_subscriptions').where('webhook_id', '=', hook.id).where('event', 'not in', hook.events).execute();
      await trx
        .insertInto('webhook_subscriptions')
        .values(hook.events.map((event) => ({ webhook_id: hook.id, event })))
        .onConflict((oc) => oc.columns(['webhook_id', 'event']).doNothing())
        .execute();
    });
  }

  async listWebhooks(): Promise<WebhookRecord[]> {
    const rows = await this.db.selectFrom('webhooks').selectAll().orderBy('created_at').orderBy('id').execute();
    const subs = await this.db.selectFrom('webhook_subscriptions').selectAll().execute();
    const events = new Map<string, RunEventName[]>();
    for (const s of subs) events.set(s.webhook_id, [...(events.get(s.webhook_id) ?? []), s.event as RunEventName]);
    return rows.map((r) => ({
      id: r.id,
      url: r.url,
      secret: r.secret,
      origin: r.origin === 'config' ? 'config' : 'api',
      events: events.get(r.id) ?? [],
      createdAt: Number(r.created_at),
    }));
  }

  async findWebhook(id: string): Promise<WebhookRecord | undefined> {
    return (await this.listWebhooks()).find((w) => w.id === id);
  }

  /** Deletes a webhook with its deliveries and attempts; false when there is none. */
  async deleteWebhook(id: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('webhook_attempts').where('webhook_id', '=', id).execute();
      await trx.deleteFrom('webhook_deliveries').where('webhook_id', '=', id).execute();
      await trx.deleteFrom('webhook_subscriptions').where('webhook_id', '=', id).execute();
      const result = await trx.deleteFrom('webhooks').where('id', '=', id).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    });
  }

  /**
   * Claims up to `limit` due deliveries until `claimedUntil`: pending, due, unclaimed or with a claim that
   * ran out, and the earliest pending one of their endpoint and job (a later event waits until the earlier
   * one was delivered or given up). Safe with several nodes: a row claimed meanwhile fails the update's
   * own condition (PostgreSQL re-checks it on the row another transaction changed).
   */
  async claimDue(now: number, claimedUntil: number, node: string, limit: number): Promise<ClaimedDelivery[]> {
    const due = this.db
      .selectFrom('webhook_deliveries as d')
      .select('d.id')
      .where('d.state', '=', sql.lit('pending'))
      .where('d.next_attempt_at', '<=', now)
      .where('d.claimed_until', '<=', now)
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('webhook_deliveries as e')
              .select(sql.lit(1).as('one'))
              .whereRef('e.webhook_id', '=', 'd.webhook_id')
              .whereRef('e.job_id', '=', 'd.job_id')
              .where('e.state', '=', sql.lit('pending'))
              .whereRef('e.event_seq', '<', 'd.event_seq'),
          ),
        ),
      )
      .orderBy('d.next_attempt_at')
      .orderBy('d.id')
      .limit(limit);
    const claimed = await this.db
      .updateTable('webhook_deliveries')
      .set({ claimed_until: claimedUntil, claimed_by: node })
      .where('id', 'in', due)
      .where('state', '=', 'pending')
      .where('claimed_until', '<=', now)
      .returning('id')
      .execute();
    if (claimed.length === 0) return [];
    const rows = await this.db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhooks as w', 'w.id', 'd.webhook_id')
      .innerJoin('run_events as v', 'v.seq', 'd.event_seq')
      .select(['d.id', 'd.webhook_id', 'd.attempts', 'd.claimed_until', 'w.url', 'w.secret', 'v.event_id', 'v.event', 'v.job_id', 'v.run_id', 'v.data', 'v.created_at'])
      .where(
        'd.id',
        'in',
        claimed.map((c) => Number(c.id)),
      )
      .where('d.claimed_by', '=', node)
      .orderBy('d.id')
      .execute();
    return rows.map((r) => ({
      id: Number(r.id),
      webhookId: r.webhook_id,
      url: r.url,
      secret: r.secret,
      attempts: Number(r.attempts),
      claimedUntil: Number(r.claimed_until),
      eventId: r.event_id,
      event: r.event as RunEventName,
      jobId: Number(r.job_id),
      runId: r.run_id,
      data: JSON.parse(r.data) as RunEventData,
      createdAt: Number(r.created_at),
    }));
  }

  /**
   * Records an attempt of a claimed delivery and moves it on (delivered, failed, or pending until the
   * next attempt), releasing the claim. A claim that is no longer this one's (it ran out and another node
   * took the delivery, or the webhook was deleted) changes nothing but the attempt's own record.
   */
  async recordAttempt(delivery: ClaimedDelivery, result: AttemptResult): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const ended = result.outcome !== 'retry';
      const updated = await trx
        .updateTable('webhook_deliveries')
        .set({
          state: result.outcome === 'retry' ? 'pending' : result.outcome,
          attempts: result.attempt,
          next_attempt_at: result.nextAttemptAt ?? result.attemptedAt,
          claimed_until: 0,
          claimed_by: null,
          ended_at: ended ? result.attemptedAt + result.durationMs : null,
        })
        .where('id', '=', delivery.id)
        .where('claimed_until', '=', delivery.claimedUntil)
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) === 0) {
        const exists = await trx.selectFrom('webhook_deliveries').select('id').where('id', '=', delivery.id).executeTakeFirst();
        if (!exists) return;
      }
      await trx
        .insertInto('webhook_attempts')
        .values({
          delivery_id: delivery.id,
          webhook_id: delivery.webhookId,
          event_id: delivery.eventId,
          event: delivery.event,
          job_id: delivery.jobId,
          run_id: delivery.runId,
          attempt: result.attempt,
          attempted_at: result.attemptedAt,
          duration_ms: Math.round(result.durationMs),
          status_code: result.statusCode,
          error: result.error,
          outcome: result.outcome,
          next_attempt_at: result.nextAttemptAt,
        })
        .execute();
    });
  }

  /** Gives claims back without an attempt (a node stopping before it sent them). */
  async release(deliveries: readonly ClaimedDelivery[]): Promise<void> {
    for (const d of deliveries) {
      await this.db.updateTable('webhook_deliveries').set({ claimed_until: 0, claimed_by: null }).where('id', '=', d.id).where('claimed_until', '=', d.claimedUntil).execute();
    }
  }

  /** A webhook's attempts, newest first; `before`: attempts older than that attempt id (keyset paging). */
  async listAttempts(webhookId: string, query: { before?: number; limit: number }): Promise<AttemptRecord[]> {
    let q = this.db.selectFrom('webhook_attempts').selectAll().where('webhook_id', '=', webhookId).orderBy('id', 'desc').limit(query.limit);
    if (query.before !== undefined) q = q.where('id', '<', query.before);
    return (await q.execute()).map((r) => ({
      id: Number(r.id),
      deliveryId: Number(r.delivery_id),
      webhookId: r.webhook_id,
      eventId: r.event_id,
      event: r.event as RunEventName,
      jobId: Number(r.job_id),
      runId: r.run_id,
      attempt: Number(r.attempt),
      attemptedAt: Number(r.attempted_at),
      durationMs: Number(r.duration_ms),
      statusCode: r.status_code === null ? null : Number(r.status_code),
      error: r.error,
      outcome: r.outcome as AttemptOutcome,
      nextAttemptAt: r.next_attempt_at === null ? null : Number(r.next_attempt_at),
    }));
  }

  /** Deliveries of a webhook not ended yet (pending, in back-off or in flight). */
  async pendingCount(webhookId: string): Promise<number> {
    const row = await this.db
      .selectFrom('webhook_deliveries')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('webhook_id', '=', webhookId)
      .where('state', '=', 'pending')
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Forgets attempts, ended deliveries and events with no delivery left, older than `before`. */
  async prune(before: number): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('webhook_attempts').where('attempted_at', '<', before).execute();
      await trx.deleteFrom('webhook_deliveries').where('state', '!=', 'pending').where('ended_at', '<', before).execute();
      await trx
        .deleteFrom('run_events')
        .where('created_at', '<', before)
        .where((eb) => eb.not(eb.exists(eb.selectFrom('webhook_deliveries as d').select(sql.lit(1).as('one')).whereRef('d.event_seq', '=', 'run_events.seq'))))
        .execute();
    });
  }
}
