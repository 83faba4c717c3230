import { DownloadLinksRepository, type DownloadLinkRecord } from './download-links.repository';
import { DATABASE_KINDS, useDatabase } from '../../../test/support/databases';
import { UserFilesRepository, type UserFileRecord } from './user-files.repository';
import { UsersRepository } from './users.repository';

function exportFile(id: string, overrides: Partial<UserFileRecord> = {}): UserFileRecord {
  return {
    id,
    owner: 'alice',
    fileName: `${id}.zip`,
    type: 'export',
    mimeType: 'application/zip',
    state: 'running',
    size: 0,
    createdAt: 1000,
    expiresAt: 10_000,
    entriesTotal: 3,
    entriesDone: 0,
    bytesDone: 0,
    errorCount: 0,
    ...overrides,
  };
}

function linkTo(fileId: string, key: string, internal: boolean): DownloadLinkRecord {
  return { key, owner: 'alice', internal, connectorId: 'files', docId: fileId, fileName: 'f.zip', createdAt: 1, expiresAt: 99_999, used: 0 };
}

const progress = { entriesDone: 2, bytesDone: 2048, errorCount: 1 };

describe.each(DATABASE_KINDS)('UserFilesRepository (%s)', (kind) => {
  const database = useDatabase(kind);
  let files: UserFilesRepository;
  let links: DownloadLinksRepository;
  beforeEach(() => {
    files = new UserFilesRepository(database());
    links = new DownloadLinksRepository(database());
  });

  it('stores a file and finds it again as it was, optional fields included', async () => {
    const ready = exportFile('f1', { state: 'ready', size: 5, completedAt: 2000, message: 'done with 1 error' });
    await files.insert(ready);
    await files.insert(exportFile('f2'));
    expect(await files.find('f1')).toEqual(ready);
    const running = await files.find('f2');
    expect(running).toEqual(exportFile('f2'));
    expect(running?.completedAt).toBeUndefined();
    expect(running?.message).toBeUndefined();
    expect(await files.find('nope')).toBeUndefined();
  });

  it("finds a file for its owner only: another user's file does not exist for them", async () => {
    await files.insert(exportFile('f1'));
    expect((await files.findOwned('f1', 'alice'))?.id).toBe('f1');
    expect(await files.findOwned('f1', 'bob')).toBeUndefined();
  });

  it("lists an owner's files, newest first and by id among equals", async () => {
    await files.insert(exportFile('b', { createdAt: 1000 }));
    await files.insert(exportFile('a', { createdAt: 1000 }));
    await files.insert(exportFile('c', { createdAt: 3000 }));
    await files.insert(exportFile('z', { owner: 'bob' }));
    expect((await files.listByOwner('alice')).map((f) => f.id)).toEqual(['c', 'a', 'b']);
  });

  it('records progress while the export runs, and not after', async () => {
    await files.insert(exportFile('f1'));
    await files.updateProgress('f1', progress);
    expect(await files.find('f1')).toMatchObject({ ...progress, state: 'running' });
    await files.markEnded('f1', 'stopped', 5000, 'stopped by alice');
    await files.updateProgress('f1', { entriesDone: 3, bytesDone: 9999, errorCount: 0 });
    expect(await files.find('f1')).toMatchObject(progress);
  });

  it('moves running → ready once, with its size, completion time and final progress', async () => {
    await files.insert(exportFile('f1'));
    await files.insert(exportFile('f2'));
    expect(await files.markReady('f1', 4096, 5000, progress)).toBe(true);
    expect(await files.find('f1')).toEqual({ ...exportFile('f1'), ...progress, state: 'ready', size: 4096, completedAt: 5000 });
    expect(await files.markReady('f1', 1, 6000, progress)).toBe(false);
    expect((await files.find('f1'))?.size).toBe(4096);
    expect((await files.find('f2'))?.state).toBe('running');
  });

  it('moves running → stopped or failed once, with the reason cut to 1024 characters', async () => {
    await files.insert(exportFile('f1'));
    await files.insert(exportFile('f2'));
    expect(await files.markEnded('f1', 'failed', 5000, 'x'.repeat(2000))).toBe(true);
    expect(await files.find('f1')).toMatchObject({ state: 'failed', size: 0, completedAt: 5000, message: 'x'.repeat(1024) });
    expect(await files.markEnded('f1', 'stopped', 6000, 'late')).toBe(false);
    expect(await files.markReady('f1', 1, 6000, progress)).toBe(false);
    expect((await files.find('f1'))?.state).toBe('failed');
    expect((await files.find('f2'))?.state).toBe('running');
  });

  it('fails the running exports no live node builds: its own after a restart, unleased and expired ones', async () => {
    expect(await files.failAbandoned('node-a', 5000, 'restarted')).toEqual([]);
    await files.insert(exportFile('mine', { nodeId: 'node-a', leaseExpiresAt: 9000 }));
    await files.insert(exportFile('theirs-live', { nodeId: 'node-b', leaseExpiresAt: 9000 }));
    await files.insert(exportFile('theirs-dead', { nodeId: 'node-b', leaseExpiresAt: 4999 }));
    await files.insert(exportFile('unleased'));
    await files.insert(exportFile('done', { state: 'ready', size: 7, completedAt: 2000, nodeId: 'node-a', leaseExpiresAt: 1 }));
    expect((await files.failAbandoned('node-a', 5000, 'restarted')).sort()).toEqual(['mine', 'theirs-dead', 'unleased']);
    expect(await files.find('mine')).toMatchObject({ state: 'failed', size: 0, completedAt: 5000, message: 'restarted' });
    expect(await files.find('theirs-live')).toMatchObject({ state: 'running', nodeId: 'node-b', leaseExpiresAt: 9000 });
    expect(await files.find('done')).toMatchObject({ state: 'ready', size: 7, completedAt: 2000 });
    expect(await files.readyIds()).toEqual(new Set(['done']));
    expect(await files.runningIds()).toEqual(new Set(['theirs-live']));
    // Without a node of its own (the periodic check), only expired leases count.
    await files.insert(exportFile('mine-again', { nodeId: 'node-a', leaseExpiresAt: 9000 }));
    expect(await files.failAbandoned(undefined, 8000, 'lost')).toEqual([]);
    expect((await files.failAbandoned(undefined, 9001, 'lost')).sort()).toEqual(['mine-again', 'theirs-live']);
  });

  it('renews the lease of its own running export only', async () => {
    await files.insert(exportFile('r', { nodeId: 'node-a', leaseExpiresAt: 1000 }));
    expect(await files.renewLease('r', 'node-a', 2000)).toBe(true);
    expect((await files.find('r'))?.leaseExpiresAt).toBe(2000);
    expect(await files.renewLease('r', 'node-b', 3000)).toBe(false);
    await files.markEnded('r', 'stopped', 2500, 'Stopped');
    expect(await files.renewLease('r', 'node-a', 3000)).toBe(false);
    expect(await files.renewLease('missing', 'node-a', 3000)).toBe(false);
  });

  it('only pushes the expiry forward', async () => {
    await files.insert(exportFile('f1', { expiresAt: 10_000 }));
    await files.extendExpiry('f1', 5_000);
    expect((await files.find('f1'))?.expiresAt).toBe(10_000);
    await files.extendExpiry('f1', 20_000);
    expect((await files.find('f1'))?.expiresAt).toBe(20_000);
  });

  it("deletes the owner's file with its internal links, keeping other links and other owners' files", async () => {
    await files.insert(exportFile('f1'));
    await links.insert(linkTo('f1', 'internal-1', true));
    await links.insert(linkTo('f1', 'document-1', false));
    expect(await files.delete('f1', 'bob')).toBe(false);
    expect(await files.find('f1')).toBeDefined();
    expect(await files.delete('f1', 'alice')).toBe(true);
    expect(await files.find('f1')).toBeUndefined();
    expect(await links.find('internal-1')).toBeUndefined();
    expect(await links.find('document-1')).toBeDefined();
    expect(await files.delete('f1', 'alice')).toBe(false);
  });

  it('keeps the links when told to', async () => {
    await files.insert(exportFile('f1'));
    await links.insert(linkTo('f1', 'internal-1', true));
    expect(await files.delete('f1', 'alice', { withLinks: false })).toBe(true);
    expect(await links.find('internal-1')).toBeDefined();
  });

  it('lists expired files that no export is writing, soonest expired first, up to the limit', async () => {
    await files.insert(exportFile('later', { state: 'ready', expiresAt: 2000 }));
    await files.insert(exportFile('sooner', { state: 'failed', expiresAt: 1000 }));
    await files.insert(exportFile('exact', { state: 'stopped', expiresAt: 3000 }));
    await files.insert(exportFile('writing', { state: 'running', expiresAt: 1000 }));
    await files.insert(exportFile('fresh', { state: 'ready', expiresAt: 3001 }));
    expect((await files.listExpired(3000)).map((f) => f.id)).toEqual(['sooner', 'later', 'exact']);
    expect((await files.listExpired(3000, 2)).map((f) => f.id)).toEqual(['sooner', 'later']);
  });

  it('lists the files whose owner no longer exists, running or not', async () => {
    const users = new UsersRepository(database());
    await users.insert({ username: 'alice', passwordHash: 'h', roles: ['user'], createdAt: 1 });
    await files.insert(exportFile('kept'));
    await files.insert(exportFile('orphan-1', { owner: 'gone' }));
    await files.insert(exportFile('orphan-2', { owner: 'gone', state: 'ready' }));
    expect((await files.listOrphaned()).map((f) => f.id).sort()).toEqual(['orphan-1', 'orphan-2']);
    expect(await files.listOrphaned(1)).toHaveLength(1);
  });
});
