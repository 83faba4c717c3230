import { TooManyRequestsError } from '@gateway/connector-api';
import { MemoryAttemptStore, type AttemptStore, type Counter } from './attempt-store';

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
 * Each attempt is reserved (counted) before its password is verified and given back when it succeeds, so
 * N attempts in parallel are never more than the limit evaluated: the (limit+1)-th is refused before any
 * argon2 work. The counters live in an AttemptStore: the process's memory, or Redis across nodes.
 */
export class LoginLockout {
  /**
   * Locked pairs and when their lock ends, checked synchronously on the cached fast path: filled by this
   * node's locks and by the ones other nodes announce.
   */
  private readonly lockedUntil = new Map<string, number>();

  constructor(
    private readonly policy: LockoutPolicy,
    private readonly store: AttemptStore = new MemoryAttemptStore(),
    /** Past this many locks, expired ones are swept, keeping the table bounded under a spray of names or addresses. */
    private readonly sweepAt = 10_000,
  ) {}

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
    const reservation = await this.store.reserve(this.counters(username, clientAddress), this.policy.lockoutSeconds * 1000);
    if (reservation.ok) return;
    if (reservation.refusedBy === 0) throw pairLocked(reservation.retryAfterMs);
    const seconds = Math.max(1, Math.ceil(reservation.retryAfterMs / 1000));
    throw new TooManyRequestsError(`Too many failed logins from this address; retry in ${seconds} s`, seconds);
  }

  /** The reserved attempt failed; returns true when it locked the pair out. */
  async recordFailure(username: string, clientAddress: string): Promise<boolean> {
    const [pair] = await this.store.fail(this.counters(username, clientAddress), this.policy.lockoutSeconds * 1000);
    if (!pair) return false;
    // The lock runs for its full length from the last failure, not from the first.
    this.noteLock(username, clientAddress, Date.now() + this.policy.lockoutSeconds * 1000);
    return true;
  }

  /** The reserved attempt succeeded: the pair's failures are cleared, the address gets its attempt back. */
  async recordSuccess(username: string, clientAddress: string): Promise<void> {
    await this.store.release([pairKey(username, clientAddress)], [addressKey(clientAddress)]);
  }

  /** The reserved attempt was never evaluated (no thread free): both counters get it back. */
  async release(username: string, clientAddress: string): Promise<void> {
    await this.store.release([], [pairKey(username, clientAddress), addressKey(clientAddress)]);
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

  private counters(username: string, clientAddress: string): Counter[] {
    return [
      { key: pairKey(username, clientAddress), limit: this.policy.maxFailures },
      { key: addressKey(clientAddress), limit: this.policy.maxFailuresPerAddress },
    ];
  }

  private sweepExpiredLocks(): void {
    if (this.lockedUntil.size < this.sweepAt) return;
    const now = Date.now();
    for (const [key, until] of this.lockedUntil) if (until <= now) this.lockedUntil.delete(key);
  }
}

function pairLocked(remainingMs: number): TooManyRequestsError {
  const seconds = Math.max(1, Math.ceil(remainingMs / 1000));
  return new TooManyRequestsError(`Too many failed logins for this user from this address; retry in ${seconds} s`, seconds);
}

// The user name is encoded so that no name can forge another pair's or an address's key.
function pairKey(username: string, clientAddress: string): string {
  return `login:u:${encodeURIComponent(username)}:${clientAddress}`;
}

function addressKey(clientAddress: string): string {
  return `login:a:${clientAddress}`;
}
