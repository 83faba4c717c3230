import * as fsp from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import type { Actor, ContentConnector } from '@gateway/connector-api';
import { FilesystemConnectorType } from '@gateway/connector-filesystem';
import type { DocOutcome, LockedRun, RemovedDoc, RenameQuery, SyncStateRecord, SyncStateStore } from '@gateway/persistence';
import type { JobDefinition } from '../../config/job-definition.dto';
import { DocumentCopier, resolveFolderId, type CopyGuard } from '../document-copier';
import type { JobStore } from '../job-store';
import { folderPageTasks, parseTask, type DocItem } from '../task-plan';
import { SyncCopier } from './sync-copier';
import { SyncSweep } from './sync-sweep';

const actor: Actor = { username: 'alice' };

/** The repository's contract in memory; `listed` stands for the run's job_run_docs (what goneFromSource excludes). */
class MemorySyncStates implements SyncStateStore {
  readonly rows = new Map<string, SyncStateRecord>();
  readonly listed = new Map<string, Set<string>>();

  async syncStates(_jobId: number, docIds: readonly string[]) {
    return new Map(docIds.filter((d) => this.rows.has(d)).map((d) => [d, { ...this.rows.get(d)! }]));
  }
  async saveSyncStates(_jobId: number, rows: readonly SyncStateRecord[], _now: number, forget: readonly string[] = []) {
    for (const id of forget) this.rows.delete(id);
    for (const r of rows) this.rows.set(r.docId, { ...r });
  }
  async renameCandidates(_jobId: number, runId: string, docs: readonly RenameQuery[], limit: number) {
    const listed = this.listed.get(runId) ?? new Set();
    const out = new Map<string, SyncStateRecord[]>();
    for (const doc of docs) {
      const found = [...this.rows.values()]
        .filter((r) => r.docId !== doc.docId && !listed.has(r.docId) && (r.sourceStamp === doc.stamp || (r.size === doc.size && r.modified === doc.modified)))
        .sort((a, b) => Number(b.sourceStamp === doc.stamp) - Number(a.sourceStamp === doc.stamp) || a.docId.localeCompare(b.docId))
        .slice(0, limit);
      if (found.length > 0) out.set(doc.docId, found);
    }
    return out;
  }
  async goneFromSource(_jobId: number, runId: string, limit: number) {
    const listed = this.listed.get(runId) ?? new Set();
    return [...this.rows.values()].filter((r) => !listed.has(r.docId)).sort((a, b) => a.docId.localeCompare(b.docId)).slice(0, limit);
  }
}

/** Copies and syncs between two real filesystem connectors on temporary folders. */
describe('SyncCopier', () => {
  let dir: string;
  let source: ContentConnector;
  let target: ContentConnector;
  let states: MemorySyncStates;
  let removed: RemovedDoc[];
  let run = 0;

  beforeEach(async () => {
    dir = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), 'sync-')));
    const open = async (id: string) =>
      new FilesystemConnectorType().create({ id, typeId: 'filesystem', description: id, params: { root: path.join(dir, id) } }, { dataDir: dir });
    source = await open('src');
    target = await open('dst');
    states = new MemorySyncStates();
    removed = [];
    run = 0;
  });
  afterEach(() => fsp.rm(dir, { recursive: true, force: true }));

  function definition(options: Partial<JobDefinition['options']>): JobDefinition {
    return {
      jobName: 'j',
      jobGroup: 'g',
      source: { connectorId: 'src', folderPath: '/in', recursive: true },
      target: { connectorId: 'dst', folderPath: '/out' },
      options: { onExisting: 'skip', copyVersions: false, maxErrors: 0, removeSource: false, exclude: [], mode: 'sync', ...options },
    };
  }

  const guard = (): CopyGuard & { opened: number } => ({
    cancelled: false,
    opened: 0,
    track(stream: Readable) {
      this.opened++;
      return stream;
    },
  });

  /** Lists the source folder as a run's enum tasks do (with the sync stamps). */
  async function list(folderPath = '/in', rel = ''): Promise<DocItem[]> {
    const folderId = await resolveFolderId(source, folderPath);
    const tasks = folderPageTasks('e.root', { folderPath, rel }, folderId, await source.listFolder(folderId, { limit: 1000 }), true, true);
    const docs: DocItem[] = [];
    for (const task of tasks) {
      const planned = parseTask(task);
      if (planned.kind === 'docs') docs.push(...planned.payload.items);
      if (planned.kind === 'enum') docs.push(...(await list(planned.payload.folderPath, planned.payload.rel)));
    }
    return docs;
  }

  /** One run: every listed document, then the deletions sweep; answers outcomes by relative path, and the streams opened. */
  async function syncRun(options: Partial<JobDefinition['options']> = {}): Promise<{ outcomes: Map<string, DocOutcome>; opened: number }> {
    run++;
    const runId = `1_${run}`;
    const def = definition(options);
    const sync = new SyncCopier(new DocumentCopier(def, source, target, actor), target, states, 1, runId, actor);
    const docs = await list();
    states.listed.set(runId, new Set(docs.map((d) => d.id)));
    await sync.prefetch(docs.map((d) => d.id));
    const outcomes = new Map<string, DocOutcome>();
    const g = guard();
    const batch: DocOutcome[] = [];
    for (const doc of docs) batch.push((await sync.copy(doc, { fresh: true, claimedAt: Date.now() }, false, g))!);
    // As the executor does: the states of a task's outcomes written just before they are recorded.
    const recorded = await sync.beforeOutcomes(batch);
    docs.forEach((doc, i) => outcomes.set(doc.rel, recorded[i]));
    if (sync.sweeps) {
      const repo = {
        transition: async (_runId: string, fn: (locked: LockedRun) => Promise<void>) =>
          fn({
            recordRemoved: async (_jobId: number, docs: readonly RemovedDoc[]) => {
              removed.push(...docs);
              for (const d of docs) states.rows.delete(d.docId);
            },
          } as unknown as LockedRun),
      } as unknown as JobStore;
      expect(await new SyncSweep(sync, target, states, repo, 1, runId, actor).sweep(() => false)).toBe(true);
    }
    return { outcomes, opened: g.opened };
  }

  async function put(connector: ContentConnector, folder: string, name: string, text: string): Promise<string> {
    const folderId = await connector.folders!.createFolder(folder, actor);
    return connector.createFile({ folderId, fileName: name, mimeType: 'text/plain', content: Readable.from([Buffer.from(text)]) }, actor);
  }

  /** The target tree below /out (and /archive) as path → text. */
  async function tree(connector: ContentConnector, folderPath: string): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    const walk = async (folderId: string, prefix: string) => {
      for (const item of (await connector.listFolder(folderId, { limit: 1000 })).items) {
        if (item.baseType === 'folder') await walk(item.id, `${prefix}${item.name}/`);
        else {
          const chunks: Buffer[] = [];
          for await (const c of await connector.openContent(item.id)) chunks.push(c as Buffer);
          out[`${prefix}${item.name}`] = Buffer.concat(chunks).toString('utf8');
        }
      }
    };
    await walk(await resolveFolderId(connector, folderPath), '');
    return out;
  }

  const src = (rel: string) => path.join(dir, 'src', 'in', rel);
  /**
   * A file's modification time as listings give it (ms, cut down), in seconds for utimes: half a
   * millisecond more, so the float's rounding cannot land in the millisecond before.
   */
  const listedTime = async (file: string) => (Number((await fsp.stat(file, { bigint: true })).mtimeNs / 1_000_000n) + 0.5) / 1000;

  it('skips an unchanged document without opening it, and says since which run', async () => {
    await put(source, '/in/sub', 'a.txt', 'alpha');
    const first = await syncRun();
    expect(first.outcomes.get('sub/a.txt')).toMatchObject({ outcome: 'p', checksum: expect.any(String) });
    const second = await syncRun();
    expect(second.outcomes.get('sub/a.txt')).toMatchObject({ outcome: 's', message: 'unchanged since run 1' });
    expect(second.opened).toBe(0);
    expect(await tree(target, '/out')).toEqual({ 'sub/a.txt': 'alpha' });
  });

  it('writes a document changed at the source over its copy', async () => {
    await put(source, '/in', 'a.txt', 'alpha');
    await syncRun();
    await fsp.writeFile(src('a.txt'), 'alpha, edited');
    expect((await syncRun()).outcomes.get('a.txt')).toMatchObject({ outcome: 'p' });
    expect(await tree(target, '/out')).toEqual({ 'a.txt': 'alpha, edited' });
    expect((await syncRun()).outcomes.get('a.txt')).toMatchObject({ outcome: 's', message: 'unchanged since run 2' });
  });

  it('moves the copy of a document renamed or moved at the source (size, time and SHA-256 match), reading only it', async () => {
    await put(source, '/in', 'a.txt', 'alpha');
    await put(source, '/in', 'b.txt', 'bravo');
    await put(source, '/in', 'c.txt', 'charlie');
    await syncRun({ deletions: 'delete' });
    const before = await target.getItem(await target.idByPath('/out', 'a.txt'));
    await fsp.rename(src('a.txt'), src('renamed.txt'));
    await fsp.mkdir(src('elsewhere'));
    await fsp.rename(src('b.txt'), src('elsewhere/b.txt'));
    const second = await syncRun({ deletions: 'delete' });
    expect(second.outcomes.get('renamed.txt')).toMatchObject({ outcome: 'p', message: expect.stringContaining('moved from a.txt') });
    expect(second.outcomes.get('elsewhere/b.txt')).toMatchObject({ outcome: 'p', message: expect.stringContaining('moved from b.txt') });
    expect(second.outcomes.get('c.txt')).toMatchObject({ outcome: 's' });
    // The same files (inode, size and mtime): nothing read, nothing copied, nothing deleted.
    expect(second.opened).toBe(0);
    expect(removed).toEqual([]);
    expect(await tree(target, '/out')).toEqual({ 'renamed.txt': 'alpha', 'elsewhere/b.txt': 'bravo', 'c.txt': 'charlie' });
    // The same inode, moved: not a new copy.
    expect((await target.getItem(await target.idByPath('/out', 'renamed.txt'))).etag).toBe(before.etag);
    expect((await syncRun({ deletions: 'delete' })).opened).toBe(0);
  });

  it('moves a renamed document to the name the copier gives it, fitted to the target\'s naming rules', async () => {
    target = await new FilesystemConnectorType().create({ id: 'dst', typeId: 'filesystem', description: 'dst', params: { root: path.join(dir, 'dst'), windowsNames: true } }, { dataDir: dir });
    await put(source, '/in', 'a.txt', 'alpha');
    await syncRun({ deletions: 'delete' });
    await fsp.rename(src('a.txt'), src('a:b.txt'));
    const second = await syncRun({ deletions: 'delete' });
    expect(second.outcomes.get('a:b.txt')).toMatchObject({ outcome: 'p', message: expect.stringContaining('moved from a.txt') });
    expect(second.opened).toBe(0);
    // ':' is refused by Windows names: the full-width look-alike, as a first copy of that name would get.
    expect(await tree(target, '/out')).toEqual({ 'a\uff1ab.txt': 'alpha' });
  });

  it('confirms by SHA-256 a rename that made a new file (copied under the new name, same time), reading only it', async () => {
    await put(source, '/in', 'a.txt', 'alpha');
    await put(source, '/in', 'b.txt', 'bravo');
    await syncRun({ deletions: 'delete' });
    const mtime = await listedTime(src('a.txt'));
    await fsp.copyFile(src('a.txt'), src('copied.txt'));
    await fsp.utimes(src('copied.txt'), mtime, mtime);
    await fsp.rm(src('a.txt'));
    const second = await syncRun({ deletions: 'delete' });
    expect(second.outcomes.get('copied.txt')).toMatchObject({ outcome: 'p', message: 'moved from a.txt (renamed at the source: same size, modification time and SHA-256)' });
    expect(second.opened).toBe(1);
    expect(removed).toEqual([]);
    expect(await tree(target, '/out')).toEqual({ 'copied.txt': 'alpha', 'b.txt': 'bravo' });
  });

  it('copies a new document of the same size and time as a deleted one when their content differs', async () => {
    await put(source, '/in', 'a.txt', 'alpha');
    await syncRun({ deletions: 'delete' });
    const mtime = await listedTime(src('a.txt'));
    await fsp.rm(src('a.txt'));
    await fsp.writeFile(src('z.txt'), 'omega');
    await fsp.utimes(src('z.txt'), mtime, mtime);
    const second = await syncRun({ deletions: 'delete' });
    expect(second.outcomes.get('z.txt')).toMatchObject({ outcome: 'p' });
    expect(second.outcomes.get('z.txt')?.message).toBeUndefined();
    expect(removed.map((r) => r.message)).toEqual(['deleted from the target: gone from the source']);
    expect(await tree(target, '/out')).toEqual({ 'z.txt': 'omega' });
  });

  it('keeps a document deleted at the source by default, deletes it with deletions delete, archives it with archive', async () => {
    await put(source, '/in', 'a.txt', 'alpha');
    await put(source, '/in/sub', 'b.txt', 'bravo');
    await put(source, '/in', 'c.txt', 'charlie');
    await syncRun();
    await fsp.rm(src('a.txt'));
    await syncRun();
    expect(await tree(target, '/out')).toEqual({ 'a.txt': 'alpha', 'sub/b.txt': 'bravo', 'c.txt': 'charlie' });
    await syncRun({ deletions: 'delete' });
    expect(await tree(target, '/out')).toEqual({ 'sub/b.txt': 'bravo', 'c.txt': 'charlie' });
    await fsp.rm(src('sub/b.txt'));
    await syncRun({ deletions: 'archive', archiveFolder: '/archive' });
    expect(await tree(target, '/out')).toEqual({ 'c.txt': 'charlie' });
    expect(await tree(target, '/archive')).toEqual({ 'sub/b.txt': 'bravo' });
    expect(removed.map((r) => r.message)).toEqual(['deleted from the target: gone from the source', 'archived to /archive/sub/b.txt: gone from the source']);
    // Forgotten once removed: a later run removes nothing more.
    await syncRun({ deletions: 'delete' });
    expect(removed).toHaveLength(2);
  });

  it('reports a document changed at the target as a conflict naming both stamps, and overwrites it only when told', async () => {
    await put(source, '/in', 'a.txt', 'alpha');
    await syncRun();
    await fsp.writeFile(path.join(dir, 'dst', 'out', 'a.txt'), 'edited at the target');
    await fsp.writeFile(src('a.txt'), 'alpha 2');
    const kept = (await syncRun()).outcomes.get('a.txt')!;
    expect(kept).toMatchObject({ outcome: 'e', message: expect.stringMatching(/^TARGET_CHANGED: .*target stamp etag:\S+, ours etag:\S+; source stamp etag:\S+\); kept/) });
    expect(await tree(target, '/out')).toEqual({ 'a.txt': 'edited at the target' });
    expect((await syncRun({ targetChanged: 'overwrite' })).outcomes.get('a.txt')).toMatchObject({ outcome: 'p' });
    expect(await tree(target, '/out')).toEqual({ 'a.txt': 'alpha 2' });
  });

  it('adds the source content as a new version of a document changed at the target with targetChanged version', async () => {
    await put(source, '/in', 'a.txt', 'alpha');
    await syncRun();
    await fsp.writeFile(path.join(dir, 'dst', 'out', 'a.txt'), 'edited at the target');
    await fsp.writeFile(src('a.txt'), 'alpha 2');
    expect((await syncRun({ targetChanged: 'version' })).outcomes.get('a.txt')).toMatchObject({ outcome: 'p', message: 'new version' });
    const id = await target.idByPath('/out', 'a.txt');
    expect(await tree(target, '/out')).toEqual({ 'a.txt': 'alpha 2' });
    expect((await target.versioning!.listVersions(id)).length).toBe(2);
  });

  it('takes its own state written by an earlier attempt of the same run as done (a resume after kill -9)', async () => {
    const id = await put(source, '/in', 'a.txt', 'alpha');
    await syncRun();
    const runId = `1_${run}`;
    const sync = new SyncCopier(new DocumentCopier(definition({}), source, target, actor), target, states, 1, runId, actor);
    const [doc] = await list();
    expect(doc.id).toBe(id);
    expect(await sync.copy(doc, { fresh: false, claimedAt: Date.now() }, false, guard())).toMatchObject({ outcome: 'p', message: 'recovered: written by an earlier attempt of this run' });
  });
});
