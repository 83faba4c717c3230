import type { Generated } from 'kysely';

/** Webhook tables (migration 0080-webhooks), merged into DatabaseSchema. Timestamps are epoch ms. */
export interface WebhooksTable {
  id: string;
  url: string;
  /** The HMAC key of the signatures; the endpoint holds the same. */
  secret: string;
  /** 'api' (admin API) or 'config' (the configuration file, its source of truth). */
  origin: string;
  created_at: number;
}

export interface WebhookSubscriptionsTable {
  webhook_id: string;
  event: string;
}

/** The outbox: one row per run event that had a subscriber when it happened. */
export interface RunEventsTable {
  /** Commit order per job (a run's changes are serialised by its lock): the delivery order. */
  seq: Generated<number>;
  event_id: string;
  event: string;
  job_id: number;
  run_id: string;
  /** JSON of RunEventData. */
  data: string;
  created_at: number;
}

export interface WebhookDeliveriesTable {
  id: Generated<number>;
  webhook_id: string;
  event_seq: number;
  job_id: number;
  /** 'pending' | 'delivered' | 'failed' */
  state: string;
  attempts: Generated<number>;
  next_attempt_at: number;
  /** A node's claim runs until then; 0 when unclaimed. */
  claimed_until: Generated<number>;
  claimed_by: string | null;
  created_at: number;
  ended_at: number | null;
}

export interface WebhookAttemptsTable {
  id: Generated<number>;
  delivery_id: number;
  webhook_id: string;
  event_id: string;
  event: string;
  job_id: number;
  run_id: string;
  attempt: number;
  attempted_at: number;
  duration_ms: number;
  status_code: number | null;
  error: string | null;
  /** 'delivered' | 'retry' | 'failed' */
  outcome: string;
  next_attempt_at: number | null;
}

declare module './schema' {
  interface DatabaseSchema {
    webhooks: WebhooksTable;
    webhook_subscriptions: WebhookSubscriptionsTable;
    run_events: RunEventsTable;
    webhook_deliveries: WebhookDeliveriesTable;
    webhook_attempts: WebhookAttemptsTable;
  }
}
