import { Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { WebhooksRepository, type ClaimedDelivery } from '@gateway/persistence';
import { GATEWAY_CONFIG } from '../config/config.module';
import type { GatewayConfig } from '../config/gateway-config';
import { webhookBody, webhookHeaders } from './webhook-message';
import { attemptResult, type RetryPolicy } from './webhook-retry';

/** A claim outlives the attempt's time-out by this much, so only a node that died leaves one to run out. */
const CLAIM_MARGIN_MS = 20_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

type Store = Pick<WebhooksRepository, 'claimDue' | 'recordAttempt' | 'prune'>;

/**
 * Sends the outbox's deliveries, on every node: every `pollMs` (and as soon as a delivery of its own ends)
 * it claims the due ones, up to `concurrency` in flight, and POSTs each with Node's fetch. It runs beside
 * the jobs, never in their path: a run's transition only wrote rows, and nothing here waits on a job or
 * makes one wait. At shutdown it claims nothing more and lets the attempts in flight finish (each is
 * bounded by the time-out); a node killed outright leaves claims that run out after the time-out plus
 * CLAIM_MARGIN_MS, when any node takes them again (the receiver may then see an event twice: its id says so).
 */
@Injectable()
export class WebhookDeliveryWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Webhooks');
  private readonly inFlight = new Set<Promise<void>>();
  private readonly policy: RetryPolicy;
  private timer?: NodeJS.Timeout;
  private pruneTimer?: NodeJS.Timeout;
  private polling = false;
  /** A poll was asked for while one ran: run another right after it. */
  private pollAgain = false;
  private stopped = false;

  constructor(
    @Inject(WebhooksRepository) private readonly store: Store,
    @Inject(GATEWAY_CONFIG) private readonly config: Pick<GatewayConfig, 'webhooks' | 'nodeId'>,
  ) {
    const { retryBaseMs, retryMaxMs, retryWindowMs } = config.webhooks;
    this.policy = { baseMs: retryBaseMs, maxMs: retryMaxMs, windowMs: retryWindowMs };
  }

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => this.poll(), this.config.webhooks.pollMs);
    this.timer.unref();
    const days = this.config.webhooks.retentionDays;
    if (days > 0) {
      this.pruneTimer = setInterval(() => {
        this.store.prune(Date.now() - days * DAY_MS).catch((e: unknown) => this.logger.warn({ err: e }, 'Webhook history pruning failed'));
      }, HOUR_MS);
      this.pruneTimer.unref();
    }
    this.poll();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    clearInterval(this.pruneTimer);
    await Promise.allSettled([...this.inFlight]);
  }

  /** Looks for due deliveries now (tests and the worker itself; a poll already running is followed by another). */
  poll(): void {
    if (this.stopped) return;
    if (this.polling) {
      this.pollAgain = true;
      return;
    }
    this.polling = true;
    void this.claimAndSend()
      .catch((e: unknown) => this.logger.warn({ err: e }, 'Webhook deliveries could not be claimed'))
      .finally(() => {
        this.polling = false;
        if (this.pollAgain) {
          this.pollAgain = false;
          this.poll();
        }
      });
  }

  /** Deliveries this node is sending now. */
  get busy(): number {
    return this.inFlight.size;
  }

  private async claimAndSend(): Promise<void> {
    const free = this.config.webhooks.concurrency - this.inFlight.size;
    if (free <= 0) return;
    const now = Date.now();
    const claimed = await this.store.claimDue(now, now + this.config.webhooks.timeoutMs + CLAIM_MARGIN_MS, this.config.nodeId, free);
    for (const delivery of claimed) {
      const sending = this.send(delivery)
        .catch((e: unknown) => this.logger.warn({ err: e, webhookId: delivery.webhookId, eventId: delivery.eventId }, 'Webhook attempt could not be recorded'))
        .finally(() => {
          this.inFlight.delete(sending);
          // The next event of the same job may be due at once: no wait for the next tick.
          this.poll();
        });
      this.inFlight.add(sending);
    }
  }

  private async send(delivery: ClaimedDelivery): Promise<void> {
    const attempt = delivery.attempts + 1;
    const body = webhookBody(delivery);
    const started = Date.now();
    let statusCode: number | null = null;
    let error: string | null = null;
    try {
      const res = await fetch(delivery.url, {
        method: 'POST',
        body,
        headers: webhookHeaders(delivery, body, attempt, Math.floor(started / 1000)),
        // A redirect is an answer about the URL: recorded, not followed with the signature to somewhere else.
        redirect: 'manual',
        signal: AbortSignal.timeout(this.config.webhooks.timeoutMs),
      });
      statusCode = res.status;
      // The answer's body is not used; cancelling it frees the connection.
      await res.body?.cancel();
    } catch (e) {
      error = describeFailure(e, this.config.webhooks.timeoutMs);
    }
    const ended = Date.now();
    const { outcome, nextAttemptAt } = attemptResult(this.policy, statusCode, attempt, delivery.createdAt, ended);
    await this.store.recordAttempt(delivery, { attempt, attemptedAt: started, durationMs: ended - started, statusCode, error, outcome, nextAttemptAt });
    if (outcome === 'failed') {
      this.logger.warn(
        { webhookId: delivery.webhookId, eventId: delivery.eventId, event: delivery.event, attempt, statusCode, error },
        statusCode !== null && statusCode < 500 ? 'Webhook delivery refused by the endpoint: not retried' : 'Webhook delivery given up: retry window over',
      );
    }
  }
}

/** A failed exchange in one line: the time-out, or the network error's code and message. */
function describeFailure(e: unknown, timeoutMs: number): string {
  const err = e as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (err.name === 'TimeoutError') return `timed out after ${timeoutMs} ms`;
  const cause = err.cause;
  if (cause?.code) return `${cause.code}: ${cause.message ?? ''}`.trim();
  return String(cause?.message ?? err.message ?? e);
}
