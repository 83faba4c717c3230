import { createHmac, randomBytes } from 'node:crypto';
import type { AuthenticatedUser } from './auth.decorators';

interface Entry {
  user: AuthenticatedUser;
  expiresAt: number;
}

/**
 * Remembers successful Basic verifications for a short while so the slow
 * argon2 check does not run on every request. Keys are an HMAC of the
 * credentials under a per-process random key: the password itself is never
 * stored, and a dump of the map reveals nothing usable.
 */
export class VerificationCache {
  private readonly key = randomBytes(32);
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Bumped by every forget/clear: a verification that started before one must not fill the cache after it. */
  private generation = 0;

  /** The current generation, to hand back to set() once a verification that starts now has finished. */
  get epoch(): number {
    return this.generation;
  }

  /** The key of the credentials (an HMAC; never the password). */
  credentialsKey(username: string, password: string): string {
    return this.digest(username, password);
  }

  get(username: string, password: string): AuthenticatedUser | undefined {
    // Stryker disable next-line ConditionalExpression,EqualityOperator: a shortcut only; with the cache off, set() stores nothing, so the look-up below finds nothing either
    if (this.ttlMs <= 0) return undefined;
    const k = this.digest(username, password);
    const entry = this.entries.get(k);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(k);
      return undefined;
    }
    return entry.user;
  }

  set(username: string, password: string, user: AuthenticatedUser, epoch = this.generation): void {
    if (this.ttlMs <= 0 || epoch !== this.generation) return;
    if (this.entries.size >= this.maxEntries) {
      // Maps iterate in insertion order: drop the oldest entry.
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(this.digest(username, password), { user, expiresAt: this.now() + this.ttlMs });
  }

  /** Called when a user is deleted or changed, so old credentials stop working at once. */
  forget(username: string): void {
    this.generation++;
    for (const [k, entry] of this.entries) {
      if (entry.user.username === username) this.entries.delete(k);
    }
  }

  /** Forgets everything (events from other nodes may have been missed). */
  clear(): void {
    this.generation++;
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }

  private digest(username: string, password: string): string {
    return createHmac('sha256', this.key).update(username).update('\0').update(password).digest('base64url');
  }
}
