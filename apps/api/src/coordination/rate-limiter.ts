import type Redis from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, type RateLimiterAbstract } from 'rate-limiter-flexible';

/** Counters per key of at most `points` in a window of `durationSeconds` opened by the key's first point. */
export interface RateLimit {
  /** Names the counters' keys apart from every other limit's. */
  name: string;
  points: number;
  durationSeconds: number;
  /** With Redis: when a command fails, count in this process (per node) rather than reject with the error. */
  inProcessWhenRedisFails?: boolean;
}

export type RateLimiterFactory = (limit: RateLimit) => RateLimiterAbstract;

/** Counters in this process: a single node's. */
export const inProcessRateLimiter: RateLimiterFactory = ({ name, points, durationSeconds }) =>
  new RateLimiterMemory({ keyPrefix: name, points, duration: durationSeconds });

/**
 * Counters in Redis, shared by every node on it: each consume is one Lua script there (rate-limiter-flexible's),
 * so no two nodes' requests interleave within one count.
 */
export function redisRateLimiterFactory(redis: Redis, prefix: string): RateLimiterFactory {
  return (limit) =>
    new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: prefix + limit.name,
      points: limit.points,
      duration: limit.durationSeconds,
      insuranceLimiter: limit.inProcessWhenRedisFails ? inProcessRateLimiter(limit) : undefined,
    });
}
