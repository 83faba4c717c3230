import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { ConflictError, NotFoundError, InvalidArgumentError } from '@gateway/connector-api';
import { UsersRepository, type UserRecord } from '@gateway/persistence';
import { GATEWAY_CONFIG } from '../config/config.module';
import type { GatewayConfig } from '../config/gateway-config';
import type { Role } from '../config/config.schema';
import type { AuthenticatedUser } from './auth.decorators';
import { PasswordHasher } from './password-hasher';
import { Coordination } from '../coordination/coordination.service';
import { LoginLockout } from './login-lockout';
import { VerificationCache } from './verification-cache';
import { GatewayMetrics } from '../metrics/gateway-metrics';

export interface UserView {
  username: string;
  roles: Role[];
  groups: string[];
  createdDate: number;
}

/** What one password check found: the user when the password was right. */
interface CheckOutcome {
  user?: AuthenticatedUser;
}

@Injectable()
export class UsersService {
  private readonly logger = new Logger(UsersService.name);
  private readonly cache: VerificationCache;
  private readonly lockout: LoginLockout;
  /** Checks under way, by credentials key: identical credentials arriving together share one argon2 run. */
  private readonly inflight = new Map<string, Promise<CheckOutcome>>();

  constructor(
    private readonly users: UsersRepository,
    private readonly hasher: PasswordHasher,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly coordination: Coordination,
    @Optional() private readonly metrics?: GatewayMetrics,
  ) {
    this.cache = new VerificationCache(config.auth.cacheTtlMs);
    this.lockout = new LoginLockout(
      { maxFailures: config.auth.maxFailures, maxFailuresPerAddress: config.auth.maxFailuresPerAddress, lockoutSeconds: config.auth.lockoutSeconds },
      coordination.rateLimiter,
    );
    coordination.onEvent((event) => {
      if (event.type === 'user-changed') this.cache.forget(event.username);
      else if (event.type === 'login-locked') this.lockout.noteLock(event.username, event.address, event.until);
    });
    coordination.onResync(() => this.cache.clear());
  }

  /**
   * The fast path: credentials verified within the cache TTL, without touching
   * the database or argon2. Throws TooManyRequestsError while the user+address
   * pair is locked out, so a cached password cannot be used to probe a lock-out.
   */
  verifyCached(username: string, password: string, clientAddress: string): AuthenticatedUser | undefined {
    this.lockout.assertNotLockedOut(username, clientAddress);
    return this.cache.get(username, password);
  }

  /**
   * Verifies Basic credentials. Returns undefined for wrong ones; throws
   * TooManyRequestsError while this user+address pair (or the address) is locked
   * out, ServiceBusyError when the password threads' queue is full.
   */
  async verify(username: string, password: string, clientAddress: string): Promise<AuthenticatedUser | undefined> {
    const cached = this.verifyCached(username, password, clientAddress);
    if (cached) return cached;

    const key = this.cache.credentialsKey(username, password);
    const running = this.inflight.get(key);
    if (running) {
      const outcome = await running.catch(() => undefined);
      if (outcome?.user) return outcome.user;
      if (outcome) {
        // The same wrong password, sent again: it still counts as an attempt of its own.
        await this.lockout.reserve(username, clientAddress);
        await this.failed(username, clientAddress);
        return undefined;
      }
    }

    // Counted before it is evaluated: parallel attempts past the limit are refused here, unevaluated.
    await this.lockout.reserve(username, clientAddress);
    const epoch = this.cache.epoch;
    const check = this.check(username, password);
    this.inflight.set(key, check);
    let outcome: CheckOutcome;
    try {
      outcome = await check;
    } catch (e) {
      // Not evaluated (no thread free, database down): the attempt is given back.
      await this.lockout.release(username, clientAddress).catch(() => undefined);
      throw e;
    } finally {
      if (this.inflight.get(key) === check) this.inflight.delete(key);
    }
    if (!outcome.user) {
      await this.failed(username, clientAddress);
      return undefined;
    }
    await this.lockout.recordSuccess(username, clientAddress);
    this.cache.set(username, password, outcome.user, epoch);
    return outcome.user;
  }

  private async check(username: string, password: string): Promise<CheckOutcome> {
    const record = await this.users.find(username);
    if (!record) {
      await this.hasher.verifyAgainstNothing(password);
      return {};
    }
    if (!(await this.hasher.verify(record.passwordHash, password))) return {};
    if (this.hasher.needsRehash(record.passwordHash)) this.rehash(record, password);
    return { user: { username: record.username, roles: record.roles as Role[], groups: record.groups ?? [] } };
  }

  /**
   * Brings a hash made with older argon2 parameters to the current ones, in the background, once per
   * successful login; skipped when the threads are busy (the next login tries again).
   */
  private rehash(record: UserRecord, password: string): void {
    this.hasher
      .hash(password)
      .then((next) => this.users.update(record.username, { passwordHash: next }, record.passwordHash))
      .catch(() => undefined);
  }

  private async failed(username: string, clientAddress: string): Promise<void> {
    if (await this.lockout.recordFailure(username, clientAddress)) {
      this.logger.warn({ username, clientAddress }, 'Login locked out after repeated failures');
      this.metrics?.lockoutStarted();
      await this.coordination.broadcast({
        type: 'login-locked',
        username,
        address: clientAddress,
        until: Date.now() + this.config.auth.lockoutSeconds * 1000,
      });
    }
  }

  /** Void cached verifications of `username` here and on every other node. */
  private async forget(username: string): Promise<void> {
    this.cache.forget(username);
    await this.coordination.broadcast({ type: 'user-changed', username });
  }

  async create(username: string, password: string, roles: Role[], groups: string[] = []): Promise<UserView> {
    const record: UserRecord = {
      username,
      passwordHash: await this.hasher.hash(password),
      roles: dedupe(roles),
      groups: dedupe(groups),
      createdAt: Date.now(),
    };
    if (!(await this.users.insert(record))) {
      throw new ConflictError(`User '${username}' already exists`, 'USER_EXISTS', { username });
    }
    return toView(record);
  }

  async list(): Promise<UserView[]> {
    return (await this.users.list()).map(toView);
  }

  async delete(username: string, actingUser: string): Promise<UserView> {
    if (username === actingUser) {
      throw new InvalidArgumentError('username', 'An administrator cannot delete their own account');
    }
    const record = await this.users.find(username);
    if (!record) throw new NotFoundError('user', username);
    await this.users.delete(username);
    await this.forget(username);
    return toView(record);
  }

  /**
   * Changes a user's password, roles and/or groups; cached verifications of the user end at once, on
   * every node (the cached user carries roles and groups, so a trimmed search sees the change at once).
   */
  async update(username: string, change: { password?: string; roles?: Role[]; groups?: string[] }): Promise<UserView> {
    const passwordHash = change.password === undefined ? undefined : await this.hasher.hash(change.password);
    const roles = change.roles === undefined ? undefined : dedupe(change.roles);
    const groups = change.groups === undefined ? undefined : dedupe(change.groups);
    if (!(await this.users.update(username, { passwordHash, roles, groups }))) throw new NotFoundError('user', username);
    await this.forget(username);
    const record = await this.users.find(username);
    if (!record) throw new NotFoundError('user', username);
    return toView(record);
  }

  /**
   * Creates the bootstrap admin on first start and applies users declared in
   * the config file (the file is the source of truth for those users).
   */
  async provision(): Promise<void> {
    for (const u of this.config.users) {
      await this.users.upsert({
        username: u.username,
        passwordHash: await this.hasher.hash(u.password),
        roles: dedupe(u.roles),
        groups: dedupe(u.groups ?? []),
        createdAt: Date.now(),
      });
      await this.forget(u.username);
    }
    const adminName = this.config.adminUser;
    const existing = await this.users.find(adminName);
    if (existing) {
      if (this.config.adminPassword && !(await this.hasher.verify(existing.passwordHash, this.config.adminPassword))) {
        await this.users.upsert({ ...existing, passwordHash: await this.hasher.hash(this.config.adminPassword), roles: dedupe([...existing.roles, 'admin']) });
        await this.forget(adminName);
        this.logger.log(`Password of admin user '${adminName}' updated from GATEWAY_ADMIN_PASSWORD`);
      }
      return;
    }
    const generated = !this.config.adminPassword;
    const password = this.config.adminPassword ?? randomBytes(18).toString('base64url');
    await this.users.insert({
      username: adminName,
      passwordHash: await this.hasher.hash(password),
      roles: ['admin', 'user'],
      groups: [],
      createdAt: Date.now(),
    });
    if (generated) {
      // Printed once, on the first start only; it is not stored anywhere in clear text.
      process.stdout.write(
        `\n  Created admin user '${adminName}' with generated password: ${password}\n  Store it now: it will not be shown again.\n\n`,
      );
    } else {
      this.logger.log(`Created admin user '${adminName}'`);
    }
  }
}

function dedupe(roles: string[]): string[] {
  return [...new Set(roles)];
}

function toView(record: UserRecord): UserView {
  return { username: record.username, roles: record.roles as Role[], groups: record.groups ?? [], createdDate: record.createdAt };
}
