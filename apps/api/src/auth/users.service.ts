import { Inject, Injectable, Logger } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { ConflictError, NotFoundError, TooManyRequestsError, InvalidArgumentError } from '@gateway/connector-api';
import { UsersRepository, type UserRecord } from '@gateway/persistence';
import { GATEWAY_CONFIG } from '../config/config.module';
import type { GatewayConfig } from '../config/gateway-config';
import type { Role } from '../config/config.schema';
import type { AuthenticatedUser } from './auth.decorators';
import { PasswordHasher } from './password-hasher';
import { VerificationCache } from './verification-cache';

export interface UserView {
  username: string;
  roles: Role[];
  createdDate: number;
}

@Injectable()
export class UsersService {
  private readonly logger = new Logger(UsersService.name);
  private readonly cache: VerificationCache;
  private readonly failures: RateLimiterMemory;

  constructor(
    private readonly users: UsersRepository,
    private readonly hasher: PasswordHasher,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {
    this.cache = new VerificationCache(config.auth.cacheTtlMs);
    this.failures = new RateLimiterMemory({
      keyPrefix: 'login-failures',
      points: config.auth.maxFailures,
      duration: config.auth.lockoutSeconds,
      blockDuration: config.auth.lockoutSeconds,
    });
  }

  /**
   * Verifies Basic credentials. Returns undefined for wrong ones; throws
   * TooManyRequestsError while this user+address pair is locked out.
   */
  async verify(username: string, password: string, clientAddress: string): Promise<AuthenticatedUser | undefined> {
    const throttleKey = `${username}\0${clientAddress}`;
    const state = await this.failures.get(throttleKey);
    if (state && state.consumedPoints >= this.config.auth.maxFailures && state.msBeforeNext > 0) {
      throw this.lockedOut(state);
    }

    const cached = this.cache.get(username, password);
    if (cached) return cached;

    const record = await this.users.find(username);
    const ok = record ? await this.hasher.verify(record.passwordHash, password) : (await this.hasher.verifyAgainstNothing(password), false);
    if (!record || !ok) {
      const counted = await this.failures.consume(throttleKey).catch((e: unknown) => {
        if (e instanceof RateLimiterRes) return e;
        throw e;
      });
      if (counted.consumedPoints >= this.config.auth.maxFailures) {
        // The lock-out runs for its full length from the last failure, not from the first.
        await this.failures.block(throttleKey, this.config.auth.lockoutSeconds);
        this.logger.warn({ username, clientAddress }, 'Login locked out after repeated failures');
      }
      return undefined;
    }
    await this.failures.delete(throttleKey);
    const user: AuthenticatedUser = { username: record.username, roles: record.roles as Role[] };
    this.cache.set(username, password, user);
    return user;
  }

  async create(username: string, password: string, roles: Role[]): Promise<UserView> {
    const record: UserRecord = {
      username,
      passwordHash: await this.hasher.hash(password),
      roles: dedupe(roles),
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
    this.cache.forget(username);
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
        createdAt: Date.now(),
      });
      this.cache.forget(u.username);
    }
    const adminName = this.config.adminUser;
    const existing = await this.users.find(adminName);
    if (existing) {
      if (this.config.adminPassword && !(await this.hasher.verify(existing.passwordHash, this.config.adminPassword))) {
        await this.users.upsert({ ...existing, passwordHash: await this.hasher.hash(this.config.adminPassword), roles: dedupe([...existing.roles, 'admin']) });
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

  private lockedOut(state: RateLimiterRes): TooManyRequestsError {
    const seconds = Math.max(1, Math.ceil(state.msBeforeNext / 1000));
    return new TooManyRequestsError(`Too many failed logins for this user from this address; retry in ${seconds} s`, seconds);
  }
}

function dedupe(roles: string[]): string[] {
  return [...new Set(roles)];
}

function toView(record: UserRecord): UserView {
  return { username: record.username, roles: record.roles as Role[], createdDate: record.createdAt };
}
