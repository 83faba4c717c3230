import { hashSync } from '@node-rs/argon2';
import { ConflictError, InvalidArgumentError, NotFoundError, TooManyRequestsError } from '@gateway/connector-api';
import type { UserRecord, UsersRepository } from '@gateway/persistence';
import type { GatewayConfig } from '../config/gateway-config';
import { Coordination } from '../coordination/coordination.service';
import { PasswordHasher } from './password-hasher';
import { UsersService } from './users.service';

/** The users table in memory, with UsersRepository's contract; counts look-ups so the cache can be seen working. */
class FakeUsersRepository {
  readonly rows = new Map<string, UserRecord>();
  finds = 0;

  async find(username: string): Promise<UserRecord | undefined> {
    this.finds++;
    const row = this.rows.get(username);
    return row && { ...row, roles: [...row.roles] };
  }

  async list(): Promise<UserRecord[]> {
    return [...this.rows.values()].sort((a, b) => a.username.localeCompare(b.username));
  }

  async insert(user: UserRecord): Promise<boolean> {
    if (this.rows.has(user.username)) return false;
    this.rows.set(user.username, { ...user });
    return true;
  }

  async upsert(user: UserRecord): Promise<void> {
    const existing = this.rows.get(user.username);
    this.rows.set(user.username, existing ? { ...existing, passwordHash: user.passwordHash, roles: user.roles } : { ...user });
  }

  async update(username: string, change: { passwordHash?: string; roles?: string[]; groups?: string[] }, expectedHash?: string): Promise<boolean> {
    const row = this.rows.get(username);
    if (!row || (expectedHash !== undefined && row.passwordHash !== expectedHash)) return false;
    this.rows.set(username, {
      ...row,
      ...(change.passwordHash ? { passwordHash: change.passwordHash } : {}),
      ...(change.roles ? { roles: change.roles } : {}),
      ...(change.groups ? { groups: change.groups } : {}),
    });
    return true;
  }

  async delete(username: string): Promise<boolean> {
    return this.rows.delete(username);
  }
}

function configWith(overrides: Partial<GatewayConfig> = {}, auth: Partial<GatewayConfig['auth']> = {}): GatewayConfig {
  return {
    adminUser: 'admin',
    users: [],
    ...overrides,
    dataDir: '/nonexistent',
    nodeId: 'test-node',
    jobs: {},
    auth: { cacheTtlMs: 60_000, maxFailures: 2, maxFailuresPerAddress: 100, lockoutSeconds: 60, disabled: false, verifyThreads: 1, verifyQueue: 100, ...auth },
  } as GatewayConfig;
}

/** The real argon2id at its lowest cost: the gateway's own parameters are slow on purpose, and are not what is tested here. */
class CheapPasswordHasher extends PasswordHasher {
  override async hash(password: string): Promise<string> {
    return hashSync(password, { algorithm: 2, memoryCost: 1024, timeCost: 1 });
  }
}

const hasher = new CheapPasswordHasher(configWith());
afterAll(() => hasher.onApplicationShutdown());
let aliceHash: Promise<string>;
beforeAll(() => {
  aliceHash = hasher.hash('alice-password');
});

describe('UsersService', () => {
  let users: FakeUsersRepository;
  let service: UsersService;

  async function withAlice(config = configWith()): Promise<void> {
    users = new FakeUsersRepository();
    users.rows.set('alice', { username: 'alice', passwordHash: await aliceHash, roles: ['user'], createdAt: 1 });
    service = new UsersService(users as unknown as UsersRepository, hasher, config, new Coordination(config));
  }

  describe('verify', () => {
    beforeEach(() => withAlice());

    it('answers the user for the right password, and nothing for a wrong one or an unknown user', async () => {
      expect(await service.verify('alice', 'alice-password', '10.0.0.1')).toEqual({ username: 'alice', roles: ['user'], groups: [] });
      expect(await service.verify('alice', 'wrong', '10.0.0.2')).toBeUndefined();
      expect(await service.verify('mallory', 'alice-password', '10.0.0.3')).toBeUndefined();
    });

    it('remembers a verified password without asking the database again, and never a wrong one', async () => {
      expect(service.verifyCached('alice', 'alice-password', '10.0.0.1')).toBeUndefined();
      await service.verify('alice', 'alice-password', '10.0.0.1');
      const finds = users.finds;
      expect(service.verifyCached('alice', 'alice-password', '10.0.0.9')).toEqual({ username: 'alice', roles: ['user'], groups: [] });
      expect(await service.verify('alice', 'alice-password', '10.0.0.9')).toEqual({ username: 'alice', roles: ['user'], groups: [] });
      expect(users.finds).toBe(finds);
      await service.verify('alice', 'wrong', '10.0.0.1');
      expect(service.verifyCached('alice', 'wrong', '10.0.0.1')).toBeUndefined();
    });

    it('locks a user out from one address after maxFailures wrong passwords, even for the right password and a cached one', async () => {
      await service.verify('alice', 'alice-password', '10.0.0.1');
      await service.verify('alice', 'wrong-1', '10.0.0.1');
      await service.verify('alice', 'wrong-2', '10.0.0.1');
      await expect(service.verify('alice', 'alice-password', '10.0.0.1')).rejects.toThrow(TooManyRequestsError);
      expect(() => service.verifyCached('alice', 'alice-password', '10.0.0.1')).toThrow(TooManyRequestsError);
      // The same user from elsewhere is not locked out.
      expect(await service.verify('alice', 'alice-password', '10.0.0.2')).toEqual({ username: 'alice', roles: ['user'], groups: [] });
    });

    it('counts wrong passwords for unknown users too', async () => {
      await service.verify('mallory', 'x', '10.0.0.1');
      await service.verify('mallory', 'y', '10.0.0.1');
      await expect(service.verify('mallory', 'z', '10.0.0.1')).rejects.toThrow(TooManyRequestsError);
    });

    it('forgets earlier failures after a successful login', async () => {
      await service.verify('alice', 'wrong-1', '10.0.0.1');
      await service.verify('alice', 'alice-password', '10.0.0.1');
      await service.verify('alice', 'wrong-2', '10.0.0.1');
      // One failure since the success: below the limit of two.
      expect(service.verifyCached('alice', 'alice-password', '10.0.0.1')).toEqual({ username: 'alice', roles: ['user'], groups: [] });
    });

    it('rehashes, after a successful login, a hash made with older parameters, unless it changed meanwhile', async () => {
      const real = new PasswordHasher(configWith());
      try {
        users = new FakeUsersRepository();
        const old = hashSync('legacy-password', { algorithm: 2, memoryCost: 4096, timeCost: 3, parallelism: 2 });
        users.rows.set('legacy', { username: 'legacy', passwordHash: old, roles: ['user'], createdAt: 1 });
        service = new UsersService(users as unknown as UsersRepository, real, configWith(), new Coordination(configWith()));
        expect(await service.verify('legacy', 'legacy-password', '10.0.0.1')).toEqual({ username: 'legacy', roles: ['user'], groups: [] });
        for (let i = 0; i < 200 && users.rows.get('legacy')!.passwordHash === old; i++) await new Promise((r) => setTimeout(r, 20));
        const rehashed = users.rows.get('legacy')!.passwordHash;
        expect(rehashed).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
        expect(await real.verify(rehashed, 'legacy-password')).toBe(true);
        // A compare-and-set: a hash that is no longer the one verified is left alone.
        expect(await users.update('legacy', { passwordHash: 'x' }, old)).toBe(false);
      } finally {
        await real.onApplicationShutdown();
      }
    });

    it('verifies every time when the cache is off', async () => {
      await withAlice(configWith({}, { cacheTtlMs: 0 }));
      await service.verify('alice', 'alice-password', '10.0.0.1');
      expect(service.verifyCached('alice', 'alice-password', '10.0.0.1')).toBeUndefined();
    });
  });

  describe('managing users', () => {
    beforeEach(() => withAlice());

    it('creates a user with its roles once each, and refuses a taken name', async () => {
      const view = await service.create('bob', 'bob-password', ['user', 'admin', 'user']);
      expect(view).toEqual({ username: 'bob', roles: ['user', 'admin'], groups: [], createdDate: expect.any(Number) });
      expect(await service.verify('bob', 'bob-password', '10.0.0.1')).toEqual({ username: 'bob', roles: ['user', 'admin'], groups: [] });
      await expect(service.create('bob', 'other-password', ['user'])).rejects.toThrow(ConflictError);
      await expect(service.create('bob', 'other-password', ['user'])).rejects.toMatchObject({ message: "User 'bob' already exists" });
    });

    it('lists users as views, without their hashes', async () => {
      expect(await service.list()).toEqual([{ username: 'alice', roles: ['user'], groups: [], createdDate: 1 }]);
    });

    it('deletes a user, whose cached password stops working at once', async () => {
      await service.verify('alice', 'alice-password', '10.0.0.1');
      expect(await service.delete('alice', 'admin')).toEqual({ username: 'alice', roles: ['user'], groups: [], createdDate: 1 });
      expect(users.rows.has('alice')).toBe(false);
      expect(service.verifyCached('alice', 'alice-password', '10.0.0.1')).toBeUndefined();
      await expect(service.delete('alice', 'admin')).rejects.toThrow(NotFoundError);
    });

    it('creates a user with groups, and a change of groups ends the cached verification here and on every node', async () => {
      expect(await service.create('bob', 'bob-password', ['user'], ['staff', 'finance', 'staff'])).toMatchObject({ groups: ['staff', 'finance'] });
      expect(await service.verify('bob', 'bob-password', '10.0.0.1')).toEqual({ username: 'bob', roles: ['user'], groups: ['staff', 'finance'] });
      const broadcast = jest.spyOn(Coordination.prototype, 'broadcast');
      expect(await service.update('bob', { groups: ['audit'] })).toMatchObject({ username: 'bob', roles: ['user'], groups: ['audit'] });
      expect(broadcast).toHaveBeenCalledWith({ type: 'user-changed', username: 'bob' });
      broadcast.mockRestore();
      // The cached user (with the old groups) is gone: the next request is verified again and carries the new ones.
      expect(service.verifyCached('bob', 'bob-password', '10.0.0.1')).toBeUndefined();
      expect(await service.verify('bob', 'bob-password', '10.0.0.1')).toEqual({ username: 'bob', roles: ['user'], groups: ['audit'] });
    });

    it('refuses to let an administrator delete their own account', async () => {
      await expect(service.delete('alice', 'alice')).rejects.toThrow(InvalidArgumentError);
      expect(users.rows.has('alice')).toBe(true);
    });
  });

  describe('provision', () => {
    let printed: string;
    beforeEach(() => {
      printed = '';
      jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
        printed += String(chunk);
        return true;
      });
    });
    afterEach(() => jest.restoreAllMocks());

    it('creates the admin with a generated password on the first start, printed once and working', async () => {
      await withAlice();
      await service.provision();
      const match = /Created admin user 'admin' with generated password: (\S+)/.exec(printed);
      expect(match).not.toBeNull();
      expect(users.rows.get('admin')?.roles).toEqual(['admin', 'user']);
      expect(await service.verify('admin', match![1], '10.0.0.1')).toEqual({ username: 'admin', roles: ['admin', 'user'], groups: [] });
      printed = '';
      await service.provision();
      expect(printed).toBe('');
    });

    it('creates the admin with GATEWAY_ADMIN_PASSWORD without printing it, and applies it again when it changes', async () => {
      await withAlice(configWith({ adminPassword: 'first-admin-pw' }));
      await service.provision();
      expect(printed).not.toContain('first-admin-pw');
      users.rows.set('admin', { ...users.rows.get('admin')!, roles: ['user'] });
      const unchanged = users.rows.get('admin')!.passwordHash;
      await service.provision();
      expect(users.rows.get('admin')!.passwordHash).toBe(unchanged);

      service = new UsersService(users as unknown as UsersRepository, hasher, configWith({ adminPassword: 'second-admin-pw' }), new Coordination(configWith()));
      await service.provision();
      expect(await service.verify('admin', 'second-admin-pw', '10.0.0.1')).toEqual({ username: 'admin', roles: ['user', 'admin'], groups: [] });
      expect(await service.verify('admin', 'first-admin-pw', '10.0.0.2')).toBeUndefined();
    });

    it('leaves an existing admin alone when no password is configured', async () => {
      await withAlice(configWith({ adminUser: 'alice' }));
      await service.provision();
      expect(users.rows.get('alice')?.passwordHash).toBe(await aliceHash);
      expect(printed).toBe('');
    });

    it('applies the users of the config file, whose old cached passwords stop working', async () => {
      await withAlice(configWith({ adminUser: 'alice', users: [{ username: 'alice', password: 'from-the-file', roles: ['admin', 'admin'] }] }));
      await service.verify('alice', 'alice-password', '10.0.0.1');
      await service.provision();
      expect(users.rows.get('alice')?.roles).toEqual(['admin']);
      expect(service.verifyCached('alice', 'alice-password', '10.0.0.1')).toBeUndefined();
      expect(await service.verify('alice', 'from-the-file', '10.0.0.1')).toEqual({ username: 'alice', roles: ['admin'], groups: [] });
    });
  });
});
