import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { createHash, randomUUID } from 'node:crypto';
import * as path from 'node:path';
import type Redis from 'ioredis';
import { settlesWithin } from '@gateway/concurrency';
import { GATEWAY_CONFIG } from '../config/config.module';
import type { GatewayConfig } from '../config/gateway-config';
import { inProcessRateLimiter, redisRateLimiterFactory, type RateLimiterFactory } from './rate-limiter';

/** What one node tells the others. */
export type ClusterEvent =
  /** A user was deleted or changed: cached verifications of that name are void. */
  | { type: 'user-changed'; username: string }
  /** A user+address pair was locked out until `until` (epoch ms). */
  | { type: 'login-locked'; username: string; address: string; until: number };

type Handler = (event: ClusterEvent) => void;

/**
 * State shared by the gateway's nodes. With REDIS_URL: one command connection (rate limiters' counters) and
 * one subscriber connection (events from other nodes on one channel). Without it: a single node, where
 * events have no one to reach and every counter lives in the process.
 *
 * Keys and the channel are prefixed with a digest of the database, like the BullMQ queue's, so nodes share
 * state exactly when they share a database, and test gateways on one Redis stay apart.
 */
@Injectable()
export class Coordination implements OnApplicationShutdown {
  private readonly logger = new Logger(Coordination.name);
  /** Commands; undefined on a single node. */
  readonly redis?: Redis;
  private readonly subscriber?: Redis;
  readonly prefix: string;
  readonly nodeId: string;
  /** Tells this process's own messages apart, even if two nodes were given one GATEWAY_NODE_ID by mistake. */
  private readonly instance = randomUUID();
  private readonly handlers = new Set<Handler>();
  private readonly resyncs = new Set<() => void>();
  private readonly channel: string;
  /** Rate limiters (rate-limiter-flexible) counting in Redis, for every node at once, or in the process on a single node. */
  readonly rateLimiter: RateLimiterFactory = inProcessRateLimiter;

  constructor(@Inject(GATEWAY_CONFIG) config: GatewayConfig) {
    this.nodeId = config.nodeId;
    const database = config.databaseUrl ?? path.join(config.dataDir, 'gateway.sqlite');
    this.prefix = `gw-${createHash('sha1').update(database).digest('hex').slice(0, 12)}:`;
    this.channel = `${this.prefix}events`;
    const url = config.jobs.redisUrl;
    if (!url) return;
    // Required only with REDIS_URL: ioredis is ~5 MB of idle RSS a single node does without (issue 16).
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- required only with REDIS_URL (above)
    const Redis = (require('ioredis') as typeof import('ioredis')).default;
    // One retry per command: a lock-out check must fail fast (503) while Redis is down, not hang the login.
    this.redis = new Redis(url, { maxRetriesPerRequest: 1, enableAutoPipelining: true });
    this.redis.on('error', (e: Error) => this.logger.warn(`Redis: ${e.message}`));
    this.rateLimiter = redisRateLimiterFactory(this.redis, this.prefix);
    this.subscriber = new Redis(url, { maxRetriesPerRequest: null });
    this.subscriber.on('error', (e: Error) => this.logger.warn(`Redis subscriber: ${e.message}`));
    let connectedBefore = false;
    this.subscriber.on('ready', () => {
      if (!connectedBefore) {
        connectedBefore = true;
        return;
      }
      // Events sent while this node was cut off are lost: drop what they might have voided, once the
      // server has confirmed the subscription again. 'ready' comes before that confirmation, and an
      // entry cached between a resync there and the confirmation could outlive an event it never saw.
      const resync = () => {
        for (const fn of this.resyncs) fn();
      };
      this.subscriber!.subscribe(this.channel).then(resync, (e: unknown) => {
        this.logger.warn(`Redis subscribe: ${(e as Error).message}`);
        resync();
      });
    });
    this.subscriber.on('message', (channel: string, message: string) => {
      if (channel !== this.channel) return;
      let parsed: { from?: string; event?: ClusterEvent };
      try {
        parsed = JSON.parse(message) as { from?: string; event?: ClusterEvent };
      } catch {
        return;
      }
      if (parsed.from === this.instance || !parsed.event) return;
      for (const handler of this.handlers) handler(parsed.event);
    });
    this.subscriber.subscribe(this.channel).catch((e: unknown) => this.logger.warn(`Redis subscribe: ${(e as Error).message}`));
  }

  /** True when state is shared through Redis (several nodes may run). */
  get shared(): boolean {
    return this.redis !== undefined;
  }

  /** Sends an event to every other node; a no-op on a single node. Best effort: caches have a TTL as a backstop. */
  async broadcast(event: ClusterEvent): Promise<void> {
    if (!this.redis) return;
    await this.redis.publish(this.channel, JSON.stringify({ from: this.instance, event })).catch((e: unknown) => {
      this.logger.warn(`Redis publish: ${(e as Error).message}`);
    });
  }

  /** `handler` receives the events of the other nodes. */
  onEvent(handler: Handler): void {
    this.handlers.add(handler);
  }

  /** `resync` runs when the subscription came back after a loss (events may have been missed). */
  onResync(resync: () => void): void {
    this.resyncs.add(resync);
  }

  /** Readiness: throws when Redis is configured and does not answer. */
  async ping(): Promise<void> {
    if (!this.redis) return;
    await this.redis.ping();
  }

  /** After the HTTP server has closed: logins still in flight during shutdown keep their lock-out store. */
  async onApplicationShutdown(): Promise<void> {
    await Promise.all(
      [this.subscriber, this.redis].map(async (client) => {
        if (client && !(await settlesWithin(client.quit(), QUIT_GRACE_MS))) {
          this.logger.warn(`Redis did not answer QUIT within ${QUIT_GRACE_MS} ms; connection dropped`);
          client.disconnect();
        }
      }),
    );
  }
}

/** How long QUIT may wait (it waits for a reconnection while Redis is unreachable) before the connection is dropped. */
const QUIT_GRACE_MS = 5_000;
