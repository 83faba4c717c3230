import { DATABASE_KINDS, useDatabase } from '../../../test/support/databases';
import { UsersRepository, type UserRecord } from './users.repository';

const alice: UserRecord = { username: 'alice', passwordHash: 'hash-a', roles: ['user', 'admin'], groups: ['finance', 'staff'], createdAt: 1_700_000_000_000 };
const bob: UserRecord = { username: 'bob', passwordHash: 'hash-b', roles: ['user'], groups: [], createdAt: 1_700_000_000_001 };

describe.each(DATABASE_KINDS)('UsersRepository (%s)', (kind) => {
  const database = useDatabase(kind);
  let users: UsersRepository;
  beforeEach(() => {
    users = new UsersRepository(database());
  });

  it('stores a user and finds it again as it was', async () => {
    expect(await users.insert(alice)).toBe(true);
    expect(await users.find('alice')).toEqual(alice);
    expect(await users.find('nobody')).toBeUndefined();
  });

  it('refuses a second user of the same name, keeping the first', async () => {
    await users.insert(alice);
    expect(await users.insert({ ...alice, passwordHash: 'other' })).toBe(false);
    expect((await users.find('alice'))?.passwordHash).toBe('hash-a');
    expect(await users.count()).toBe(1);
  });

  it('keeps a user without roles as an empty list', async () => {
    await users.insert({ ...bob, roles: [] });
    expect((await users.find('bob'))?.roles).toEqual([]);
  });

  it('lists users by name', async () => {
    await users.insert(bob);
    await users.insert(alice);
    expect((await users.list()).map((u) => u.username)).toEqual(['alice', 'bob']);
    expect(await users.count()).toBe(2);
  });

  it('upserts: creates a missing user, and replaces the password and roles of an existing one but not its creation date', async () => {
    await users.upsert(bob);
    expect(await users.find('bob')).toEqual(bob);
    await users.upsert({ ...bob, passwordHash: 'new', roles: ['admin'], groups: ['staff'], createdAt: 5 });
    expect(await users.find('bob')).toEqual({ ...bob, passwordHash: 'new', roles: ['admin'], groups: ['staff'] });
  });

  it('changes the groups alone, and keeps a user written without groups as having none', async () => {
    await users.insert({ username: 'carol', passwordHash: 'h', roles: ['user'], createdAt: 1 });
    expect((await users.find('carol'))?.groups).toEqual([]);
    expect(await users.update('carol', { groups: ['finance', 'staff'] })).toBe(true);
    expect(await users.find('carol')).toEqual({ username: 'carol', passwordHash: 'h', roles: ['user'], groups: ['finance', 'staff'], createdAt: 1 });
    expect(await users.update('carol', { groups: [] })).toBe(true);
    expect((await users.find('carol'))?.groups).toEqual([]);
    expect(await users.update('nobody', { groups: ['staff'] })).toBe(false);
  });

  it('deletes a user, and says when there was none', async () => {
    await users.insert(alice);
    await users.insert(bob);
    expect(await users.delete('alice')).toBe(true);
    expect(await users.delete('alice')).toBe(false);
    expect(await users.find('alice')).toBeUndefined();
    expect(await users.find('bob')).toEqual(bob);
  });
});
