import { Inject, Injectable, Logger } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { ConflictError, NotFoundError, InvalidArgumentError } from '@gateway/connector-api';
import { UsersRepository, type UserRecord } from '@gateway/persistence';
import { GATEWAY_CONFIG } from '../config/config.module';
import type { GatewayConfig } from '../config/gateway-config';
import type { Role } from '../config/config.schema';
import type { AuthenticatedUser } from './auth.decorators';
import { PasswordHasher } from './password-hasher';
import { LoginLockout } from './login-lockout';
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
  private readonly lockout: LoginLockout;

  constructor(
    private readonly users: UsersRepository,
    private readonly hasher: PasswordHasher,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {
    this.cache = new VerificationCache(config.auth.cacheTtlMs);
    this.lockout = new LoginLockout({ maxFailures: config.auth.maxFailures, lockoutSeconds: config.auth.lockoutSeconds });
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
   * TooManyRequestsError while this user+address pair is locked out.
   */
  async verify(username: string, password: string, clientAddress: string): Promise<AuthenticatedUser | undefined> {
    const cached = this.verifyCached(username, password, clientAddress);
    if (cached) return cached;

    const record = await this.users.find(username);
    const ok = record ? await this.hasher.verify(record.passwordHash, password) : (await this.hasher.verifyAgainstNothing(password), false);
    if (!record || !ok) {
      if (await this.lockout.recordFailure(username, clientAddress)) {
        this.logger.warn({ username, clientAddress }, 'Login locked out after repeated failures');
      }
      return undefined;
    }
    await this.lockout.recordSuccess(username, clientAddress);
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
}

function dedupe(roles: string[]): string[] {
  return [...new Set(roles)];
}

function toView(record: UserRecord): UserView {
  return { username: record.username, roles: record.roles as Role[], createdDate: record.createdAt };
}
