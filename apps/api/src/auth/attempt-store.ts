import type Redis from 'ioredis';
import { UpstreamUnavailableError } from '@gateway/errors';

/** A counter and the most attempts it allows. */
export interface Counter {
  key: string;
  limit: number;
}

export type Reservation = { ok: true } | { ok: false; retryAfterMs: number; refusedBy: number };

/**
 * Login attempts counted per key (a user+address pair, an address). Every operation is atomic, whether
 * the counters live in the process or in Redis: that is what keeps N parallel attempts from all passing
 * one check before any of them is counted.
 */
export interface AttemptStore {
  /**
   * Refuses (with the time left on the counter that refused) when any counter is at its limit; otherwise
   * counts one attempt on every counter — before the password is verified. A counter's window opens with
   * its first attempt.
   */
  reserve(counters: Counter[], windowMs: number): Promise<Reservation>;
  /** The reserved attempt failed: each counter at its limit now is held for `lockMs` from now; true per such counter. */
  fail(counters: Counter[], lockMs: number): Promise<boolean[]>;
  /** The reserved attempt succeeded or was not evaluated: `clear` counters are reset, `refund` ones get their attempt back. */
  release(clear: string[], refund: string[]): Promise<void>;
}

interface Entry {
  count: number;
  expiresAt: number;
}

/** One process's counters (single-node default). JavaScript runs each call to the end, so each is atomic. */
export class MemoryAttemptStore implements AttemptStore {
  private readonly entries = new Map<string, Entry>();

  constructor(
    /** Past this many counters, expired ones are swept, keeping the table bounded under a spray of names or addresses. */
    private readonly sweepAt = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  async reserve(counters: Counter[], windowMs: number): Promise<Reservation> {
    const now = this.now();
    for (let i = 0; i < counters.length; i++) {
      const entry = this.live(counters[i].key, now);
      if (entry && entry.count >= counters[i].limit) return { ok: false, retryAfterMs: entry.expiresAt - now, refusedBy: i };
    }
    this.sweep(now);
    for (const { key } of counters) {
      const entry = this.live(key, now);
      if (entry) entry.count++;
      else this.entries.set(key, { count: 1, expiresAt: now + windowMs });
    }
    return { ok: true };
  }

  async fail(counters: Counter[], lockMs: number): Promise<boolean[]> {
    const now = this.now();
    return counters.map(({ key, limit }) => {
      const entry = this.live(key, now);
      if (!entry || entry.count < limit) return false;
      entry.expiresAt = now + lockMs;
      return true;
    });
  }

  async release(clear: string[], refund: string[]): Promise<void> {
    const now = this.now();
    for (const key of clear) this.entries.delete(key);
    for (const key of refund) {
      const entry = this.live(key, now);
      if (entry && entry.count > 0) entry.count--;
    }
  }

  get size(): number {
    return this.entries.size;
  }

  private live(key: string, now: number): Entry | undefined {
    const entry = this.entries.get(key);
    if (entry && entry.expiresAt <= now) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  private sweep(now: number): void {
    if (this.entries.size < this.sweepAt) return;
    for (const [key, entry] of this.entries) if (entry.expiresAt <= now) this.entries.delete(key);
  }
}

// Lua runs atomically in Redis: no other command of any node interleaves with one script.
const RESERVE = `
for i, k in ipairs(KEYS) do
  local c = tonumber(redis.call('GET', k) or '0')
  if c >= tonumber(ARGV[i + 1]) then
    return {i, redis.call('PTTL', k)}
  end
end
for i, k in ipairs(KEYS) do
  if redis.call('INCR', k) == 1 then redis.call('PEXPIRE', k, ARGV[1]) end
end
return {0, 0}`;

const FAIL = `
local locked = {}
for i, k in ipairs(KEYS) do
  local c = tonumber(redis.call('GET', k) or '0')
  if c >= tonumber(ARGV[i + 1]) then
    redis.call('PEXPIRE', k, ARGV[1])
    locked[i] = 1
  else
    locked[i] = 0
  end
end
return locked`;

const RELEASE = `
local clear = tonumber(ARGV[1])
for i, k in ipairs(KEYS) do
  if i <= clear then
    redis.call('DEL', k)
  elseif tonumber(redis.call('GET', k) or '0') > 0 then
    redis.call('DECR', k)
  end
end
return 0`;

/** Counters shared by every node through Redis (REDIS_URL), each operation one Lua script. */
export class RedisAttemptStore implements AttemptStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  async reserve(counters: Counter[], windowMs: number): Promise<Reservation> {
    const keys = counters.map((c) => this.prefix + c.key);
    const [refusedBy, ttl] = (await this.run(RESERVE, keys, [windowMs, ...counters.map((c) => c.limit)])) as [number, number];
    if (refusedBy === 0) return { ok: true };
    // PTTL is -1 or -2 only for a key without expiry or just expired: refuse for a moment rather than not at all.
    return { ok: false, retryAfterMs: ttl > 0 ? ttl : 1000, refusedBy: refusedBy - 1 };
  }

  async fail(counters: Counter[], lockMs: number): Promise<boolean[]> {
    const keys = counters.map((c) => this.prefix + c.key);
    const locked = (await this.run(FAIL, keys, [lockMs, ...counters.map((c) => c.limit)])) as number[];
    return locked.map((l) => l === 1);
  }

  async release(clear: string[], refund: string[]): Promise<void> {
    const keys = [...clear, ...refund].map((k) => this.prefix + k);
    if (keys.length === 0) return;
    await this.run(RELEASE, keys, [clear.length]);
  }

  /** Without Redis the lock-out cannot be enforced: logins fail closed (503) rather than go uncounted. */
  private async run(script: string, keys: string[], args: number[]): Promise<unknown> {
    try {
      return await this.redis.eval(script, keys.length, ...keys, ...args);
    } catch (e) {
      throw new UpstreamUnavailableError(`The login lock-out store (Redis) is unavailable: ${(e as Error).message}`);
    }
  }
}
