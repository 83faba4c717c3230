import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { TooManyRequestsError, UpstreamUnavailableError } from '@gateway/errors';
import { inProcessRateLimiter, type RateLimiterFactory } from '../coordination/rate-limiter';

export interface LockoutPolicy {
  /** Failed logins of one user from one address, within `lockoutSeconds`, that lock that pair out. */
  maxFailures: number;
  /** Failed logins from one address, whatever the user names, that lock the address out of password checks. */
  maxFailuresPerAddress: number;
  /** How long a lock lasts, counted from the failure that set it; also the window failures are counted in. */
  lockoutSeconds: number;
}

/**
 * Locks a user+address pair out after repeated failed logins, and an address after repeated failures
 * across user names. Keyed by the pair, so a stranger spraying wrong passwords locks only their own address
 * out, never the user everywhere.
 *
 * Each attempt is reserved (consumed from the pair's rate limiter, then the address's) before its password
 * is verified, and given back when it succeeds, so N attempts in parallel are never more than the limit
 * evaluated: the (limit+1)-th is refused before any argon2 work. A refused attempt still counts in the
 * pair's window, never on the address. The limiters (rate-limiter-flexible) count in the process, or in Redis across nodes.
 */
export class LoginLockout {
  /**
   * Locked pairs and when their lock ends, checked synchronously on the cached fast path: filled by this
   * node's locks and by the ones other nodes announce.
   */
  private readonly lockedUntil = new Map<string, number>();
  private readonly pairs: RateLimiterAbstract;
  private readonly addresses: RateLimiterAbstract;

  constructor(
    private readonly policy: LockoutPolicy,
    rateLimiter: RateLimiterFactory = inProcessRateLimiter,
    /** Past this many locks, expired ones are swept, keeping the table bounded under a spray of names or addresses. */
    private readonly sweepAt = 10_000,
  ) {
    this.pairs = rateLimiter({ name: 'login-pair', points: policy.maxFailures, durationSeconds: policy.lockoutSeconds });
    this.addresses = rateLimiter({ name: 'login-address', points: policy.maxFailuresPerAddress, durationSeconds: policy.lockoutSeconds });
  }

  /** Throws TooManyRequestsError, with the seconds left, while the pair is known to be locked out. */
  assertNotLockedOut(username: string, clientAddress: string): void {
    // Stryker disable next-line ConditionalExpression: a shortcut only; with no lock at all the look-up below finds none either
    if (this.lockedUntil.size === 0) return;
    const key = pairKey(username, clientAddress);
    const until = this.lockedUntil.get(key);
    if (until === undefined) return;
    const remaining = until - Date.now();
    if (remaining <= 0) {
      this.lockedUntil.delete(key);
      return;
    }
    throw pairLocked(remaining);
  }

  /** Counts the attempt before it is evaluated; throws TooManyRequestsError when the pair or the address is at its limit. */
  async reserve(username: string, clientAddress: string): Promise<void> {
    const pair = pairKey(username, clientAddress);
    const pairRefusal = await take(this.pairs, pair);
    if (pairRefusal) throw pairLocked(pairRefusal.msBeforeNext);
    // Only attempts the pair let through count on the address: a locked-out client retrying on and on
    // does not lock out everyone behind its address.
    let addressRefusal: RateLimiterRes | undefined;
    try {
      addressRefusal = await take(this.addresses, clientAddress);
    } catch (e) {
      await giveBack(this.pairs, pair).catch(() => undefined);
      throw e;
    }
    if (!addressRefusal) return;
    await giveBack(this.pairs, pair);
    const seconds = secondsLeft(addressRefusal.msBeforeNext);
    throw new TooManyRequestsError(`Too many failed logins from this address; retry in ${seconds} s`, seconds);
  }

  /** The reserved attempt failed; returns true when it locked the pair out. */
  async recordFailure(username: string, clientAddress: string): Promise<boolean> {
    const [pair] = await Promise.all([
      this.lockAtLimit(this.pairs, pairKey(username, clientAddress), this.policy.maxFailures),
      this.lockAtLimit(this.addresses, clientAddress, this.policy.maxFailuresPerAddress),
    ]);
    if (!pair) return false;
    // The lock runs for its full length from the last failure, not from the first.
    this.noteLock(username, clientAddress, Date.now() + this.policy.lockoutSeconds * 1000);
    return true;
  }

  /** The reserved attempt succeeded: the pair's failures are cleared, the address gets its attempt back. */
  async recordSuccess(username: string, clientAddress: string): Promise<void> {
    await Promise.all([store(this.pairs.delete(pairKey(username, clientAddress))), giveBack(this.addresses, clientAddress)]);
  }

  /** The reserved attempt was never evaluated (no thread free): both counters get it back. */
  async release(username: string, clientAddress: string): Promise<void> {
    await Promise.all([giveBack(this.pairs, pairKey(username, clientAddress)), giveBack(this.addresses, clientAddress)]);
  }

  /** Records a lock, this node's own or one another node announced. */
  noteLock(username: string, clientAddress: string, until: number): void {
    this.sweepExpiredLocks();
    const key = pairKey(username, clientAddress);
    this.lockedUntil.set(key, Math.max(until, this.lockedUntil.get(key) ?? 0));
  }

  /** Locks held in memory, expired ones not yet swept included. */
  get lockCount(): number {
    return this.lockedUntil.size;
  }

  /** A counter at its limit now is held there for the lock-out's length from now; true when it was. */
  private async lockAtLimit(limiter: RateLimiterAbstract, key: string, limit: number): Promise<boolean> {
    const counted = await store(limiter.get(key));
    if (!counted || counted.consumedPoints < limit) return false;
    await store(limiter.block(key, this.policy.lockoutSeconds));
    return true;
  }

  private sweepExpiredLocks(): void {
    if (this.lockedUntil.size < this.sweepAt) return;
    const now = Date.now();
    for (const [key, until] of this.lockedUntil) if (until <= now) this.lockedUntil.delete(key);
  }
}

/** Consumes one attempt; the limiter's answer when it refused it. */
async function take(limiter: RateLimiterAbstract, key: string): Promise<RateLimiterRes | undefined> {
  try {
    await store(limiter.consume(key));
    return undefined;
  } catch (e) {
    if (e instanceof RateLimiterRes) return e;
    throw e;
  }
}

/** Gives an attempt back; a counter whose window ended meanwhile is not taken below zero into a fresh one. */
async function giveBack(limiter: RateLimiterAbstract, key: string): Promise<void> {
  const counted = await store(limiter.reward(key));
  if (counted.consumedPoints < 0) await store(limiter.delete(key));
}

/** Without its store (Redis) the lock-out cannot be enforced: logins fail closed (503) rather than go uncounted. */
async function store<T>(operation: Promise<T>): Promise<T> {
  try {
    return await operation;
  } catch (e) {
    if (e instanceof RateLimiterRes) throw e;
    throw new UpstreamUnavailableError(`The login lock-out store (Redis) is unavailable: ${(e as Error).message}`);
  }
}

function secondsLeft(remainingMs: number): number {
  return Math.max(1, Math.ceil(remainingMs / 1000));
}

function pairLocked(remainingMs: number): TooManyRequestsError {
  const seconds = secondsLeft(remainingMs);
  return new TooManyRequestsError(`Too many failed logins for this user from this address; retry in ${seconds} s`, seconds);
}

// The user name is encoded (no ':' left in it), so that no name can forge another pair's key.
function pairKey(username: string, clientAddress: string): string {
  return `${encodeURIComponent(username)}:${clientAddress}`;
}
