import { DownloadLinksRepository, type DownloadLinkRecord } from './download-links.repository';
import { DATABASE_KINDS, useDatabase } from '../../../test/support/databases';
import { UsersRepository } from './users.repository';

function link(key: string, overrides: Partial<DownloadLinkRecord> = {}): DownloadLinkRecord {
  return {
    key,
    owner: 'alice',
    internal: false,
    connectorId: 'docs',
    docId: 'fs-YQ',
    fileName: 'a.txt',
    createdAt: 1000,
    expiresAt: 5000,
    used: 0,
    ...overrides,
  };
}

describe.each(DATABASE_KINDS)('DownloadLinksRepository (%s)', (kind) => {
  const database = useDatabase(kind);
  let links: DownloadLinksRepository;
  beforeEach(() => {
    links = new DownloadLinksRepository(database());
  });

  it('stores a link and finds it again as it was, internal or not', async () => {
    await links.insert(link('k1'));
    await links.insert(link('k2', { internal: true, connectorId: 'files', used: 3 }));
    expect(await links.find('k1')).toEqual(link('k1'));
    expect(await links.find('k2')).toEqual(link('k2', { internal: true, connectorId: 'files', used: 3 }));
    expect(await links.find('missing')).toBeUndefined();
  });

  it("lists an owner's links, newest first and by key among equals", async () => {
    await links.insert(link('b'));
    await links.insert(link('a'));
    await links.insert(link('c', { createdAt: 2000 }));
    await links.insert(link('z', { owner: 'bob' }));
    expect((await links.listByOwner('alice')).map((l) => l.key)).toEqual(['c', 'a', 'b']);
  });

  it("deletes the owner's link and answers it as it was; not another user's", async () => {
    await links.insert(link('k1'));
    expect(await links.delete('k1', 'bob')).toBeUndefined();
    expect(await links.find('k1')).toBeDefined();
    expect(await links.delete('k1', 'alice')).toEqual(link('k1'));
    expect(await links.find('k1')).toBeUndefined();
    expect(await links.delete('k1', 'alice')).toBeUndefined();
  });

  it('counts every one of concurrent downloads, until the link expires', async () => {
    await links.insert(link('k1', { expiresAt: 5000 }));
    const counted = await Promise.all(Array.from({ length: 20 }, () => links.incrementUsed('k1', 4999)));
    expect(counted.every(Boolean)).toBe(true);
    expect((await links.find('k1'))?.used).toBe(20);
    expect(await links.incrementUsed('k1', 5000)).toBe(false);
    expect(await links.incrementUsed('gone', 0)).toBe(false);
    expect((await links.find('k1'))?.used).toBe(20);
  });

  it('removes the links that expired before a time, and says how many', async () => {
    await links.insert(link('old', { expiresAt: 1000 }));
    await links.insert(link('edge', { expiresAt: 2000 }));
    await links.insert(link('new', { expiresAt: 3000 }));
    expect(await links.deleteExpired(2000)).toBe(1);
    expect(await links.find('old')).toBeUndefined();
    expect(await links.find('edge')).toBeDefined();
  });

  it('removes the links of users that no longer exist', async () => {
    const users = new UsersRepository(database());
    await users.insert({ username: 'alice', passwordHash: 'h', roles: [], createdAt: 1 });
    await links.insert(link('kept'));
    await links.insert(link('orphan-1', { owner: 'gone' }));
    await links.insert(link('orphan-2', { owner: 'gone' }));
    expect(await links.deleteOrphaned()).toBe(2);
    expect(await links.find('kept')).toBeDefined();
    expect(await links.find('orphan-1')).toBeUndefined();
  });
});
