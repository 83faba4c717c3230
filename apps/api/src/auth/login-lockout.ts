import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { TooManyRequestsError } from '@gateway/connector-api';

export interface LockoutPolicy {
  /** Failed logins of one user from one address, within `lockoutSeconds`, that lock that pair out. */
  maxFailures: number;
  /** How long a lock lasts, counted from the failure that set it; also the window failures are counted in. */
  lockoutSeconds: number;
}

/**
 * Locks a user+address pair out after repeated failed logins. Keyed by the pair, so a stranger
 * spraying wrong passwords locks only their own address out, never the user everywhere.
 */
export class LoginLockout {
  /** Counts failures per pair within the window. */
  private readonly failures: RateLimiterMemory;
  /** Locked pairs and when their lock ends; checked synchronously on every request. */
  private readonly lockedUntil = new Map<string, number>();

  constructor(
    private readonly policy: LockoutPolicy,
    /** Past this many locks, expired ones are swept, keeping the table bounded under a spray of names or addresses. */
    private readonly sweepAt = 10_000,
  ) {
    this.failures = new RateLimiterMemory({ points: policy.maxFailures, duration: policy.lockoutSeconds });
  }

  /** Throws TooManyRequestsError, with the seconds left, while the pair is locked out. */
  assertNotLockedOut(username: string, clientAddress: string): void {
    // Stryker disable next-line ConditionalExpression: a shortcut only; with no lock at all the look-up below finds none either
    if (this.lockedUntil.size === 0) return;
    const key = lockKey(username, clientAddress);
    const until = this.lockedUntil.get(key);
    if (until === undefined) return;
    const remaining = until - Date.now();
    if (remaining <= 0) {
      this.lockedUntil.delete(key);
      return;
    }
    const seconds = Math.ceil(remaining / 1000);
    throw new TooManyRequestsError(`Too many failed logins for this user from this address; retry in ${seconds} s`, seconds);
  }

  /** Counts a failed login of the pair; returns true when this failure locked the pair out. */
  async recordFailure(username: string, clientAddress: string): Promise<boolean> {
    const key = lockKey(username, clientAddress);
    // Concurrent failures can all pass the lock check before the first one counts; the ones past the limit
    // are refused by the limiter, and still count as reaching it.
    const counted = await this.failures.consume(key).catch((e: unknown) => {
      // Stryker disable next-line ConditionalExpression: the memory limiter rejects with nothing but a RateLimiterRes
      if (e instanceof RateLimiterRes) return e;
      throw e;
    });
    if (counted.consumedPoints < this.policy.maxFailures) return false;
    this.sweepExpiredLocks();
    // The lock runs for its full length from the last failure, not from the first. It outlasts the counting
    // window (opened by the first failure), so the pair starts afresh when the lock ends.
    this.lockedUntil.set(key, Date.now() + this.policy.lockoutSeconds * 1000);
    return true;
  }

  /** A successful login clears the pair's failures. */
  async recordSuccess(username: string, clientAddress: string): Promise<void> {
    await this.failures.delete(lockKey(username, clientAddress));
  }

  /** Locks held in memory, expired ones not yet swept included. */
  get lockCount(): number {
    return this.lockedUntil.size;
  }

  private sweepExpiredLocks(): void {
    if (this.lockedUntil.size < this.sweepAt) return;
    const now = Date.now();
    for (const [key, until] of this.lockedUntil) if (until <= now) this.lockedUntil.delete(key);
  }
}

function lockKey(username: string, clientAddress: string): string {
  return `${username}\0${clientAddress}`;
}
