import type { ItemInfo } from '@gateway/connector-api';
import type { FailedDoc } from '@gateway/persistence';
import type { JobDefinition } from '../config/job-definition.dto';
import { DOCS_PER_TASK, ROOT_TASK_KEY, docsTask, failedDocsTasks, folderPageTasks, isListingKey, parseTask, rootTask, type DocsPayload, type EnumPayload } from './task-plan';

const DEF: JobDefinition = {
  jobName: 'j',
  jobGroup: 'g',
  source: { connectorId: 'src', folderPath: '/in', recursive: true },
  target: { connectorId: 'dst', folderPath: '/out' },
  options: { onExisting: 'skip', copyVersions: false, maxErrors: 0, removeSource: false, exclude: [] },
};

const doc = (id: string, name: string, folder = '/in'): ItemInfo => ({ id, name, path: `${folder}/${name}`, baseType: 'document', mimeType: 'text/plain', size: 3 });
const folder = (id: string, name: string, parent = '/in'): ItemInfo => ({ id, name, path: `${parent}/${name}`, baseType: 'folder' });

describe('task plan', () => {
  it('starts a run with one enum task over the source folder', () => {
    const t = rootTask(DEF);
    expect(t).toEqual({ key: ROOT_TASK_KEY, kind: 'enum', payload: JSON.stringify({ folderPath: '/in', rel: '' }) });
    expect(parseTask(t)).toEqual({ kind: 'enum', payload: { folderPath: '/in', rel: '' } });
  });

  it('turns a docs task into its payload and back', () => {
    const payload: DocsPayload = { items: [{ id: '1', rel: 'a.txt' }], fetch: true };
    const t = docsTask('r.0', payload);
    expect(t.kind).toBe('docs');
    expect(parseTask(t)).toEqual({ kind: 'docs', payload });
  });

  it('cuts a listed page into docs tasks of DOCS_PER_TASK documents with paths relative to the source folder', () => {
    const listed: EnumPayload = { folderPath: '/in/sub', rel: 'sub' };
    const items = Array.from({ length: DOCS_PER_TASK * 2 + 1 }, (_, i) => doc(`d${i}`, `f${i}.txt`, '/in/sub'));
    const tasks = folderPageTasks('e.x', listed, 'folder-1', { items }, true);
    expect(tasks.map((t) => t.kind)).toEqual(['docs', 'docs', 'docs']);
    const batches = tasks.map((t) => (parseTask(t).payload as DocsPayload).items);
    expect(batches.map((b) => b.length)).toEqual([DOCS_PER_TASK, DOCS_PER_TASK, 1]);
    expect(batches[0][0]).toEqual({ id: 'd0', rel: 'sub/f0.txt', path: '/in/sub/f0.txt', mimeType: 'text/plain', size: 3 });
    expect(batches[2][0].id).toBe(`d${DOCS_PER_TASK * 2}`);
    expect(new Set(tasks.map((t) => t.key)).size).toBe(3);
    expect(tasks.every((t) => /^d\.[0-9a-f]{40}$/.test(t.key))).toBe(true);
  });

  it('gives the same work the same keys (a redone enumeration inserts nothing new), other work other keys', () => {
    const items = [doc('d1', 'a.txt'), folder('f1', 'sub')];
    const listed: EnumPayload = { folderPath: '/in', rel: '' };
    const once = folderPageTasks('e.root', listed, 'root', { items, nextCursor: 'c2' }, true);
    expect(folderPageTasks('e.root', listed, 'root', { items, nextCursor: 'c2' }, true)).toEqual(once);
    const elsewhere = folderPageTasks('e.other', listed, 'root', { items, nextCursor: 'c3' }, true);
    expect(elsewhere.map((t) => t.key).filter((k) => once.some((o) => o.key === k))).toEqual([once[0].key]); // the subfolder's task is the same
  });

  it("carries a listed document's source_name, and makes each unaddressable entry a document to skip, with its reason", () => {
    const listed: EnumPayload = { folderPath: '/in/a', rel: 'a' };
    const renamed: ItemInfo = { ...doc('d1', 'x\uff1ay.txt', '/in/a'), properties: { source_name: 'x:y.txt' } };
    const page = { items: [renamed], unaddressable: [{ name: 'b\\c', baseType: 'document' as const, reason: 'the name contains a path separator inside a name' }, { name: 'd\u0007', baseType: 'folder' as const, reason: 'the name contains a control character' }] };
    const items = (parseTask(folderPageTasks('e.x', listed, 'folder-a', page, true)[0]).payload as DocsPayload).items;
    expect(items[0]).toMatchObject({ id: 'd1', rel: 'a/x\uff1ay.txt', sourceName: 'x:y.txt' });
    expect(items.slice(1)).toEqual([
      { id: expect.stringMatching(/^unaddressable\.[0-9a-f]{40}$/), rel: 'a/b\\c', unaddressable: 'the name contains a path separator inside a name' },
      { id: expect.stringMatching(/^unaddressable\.[0-9a-f]{40}$/), rel: 'a/d\u0007', unaddressable: 'the name contains a control character (a folder: nothing in it is listed)' },
    ]);
  });

  it('plans a subfolder only for a recursive job, relative to the listed folder', () => {
    const listed: EnumPayload = { folderPath: '/in/a', rel: 'a' };
    const items = [folder('f1', 'b', '/in/a'), doc('d1', 'x.txt', '/in/a')];
    const recursive = folderPageTasks('e.k', listed, 'fa', { items }, true);
    expect(recursive.map((t) => parseTask(t))).toEqual([
      { kind: 'enum', payload: { folderId: 'f1', folderPath: '/in/a/b', rel: 'a/b' } },
      { kind: 'docs', payload: { items: [{ id: 'd1', rel: 'a/x.txt', path: '/in/a/x.txt', mimeType: 'text/plain', size: 3 }] } },
    ]);
    const flat = folderPageTasks('e.k', listed, 'fa', { items }, false);
    expect(flat.map((t) => t.kind)).toEqual(['docs']);
  });

  it('tells listing tasks from the others by their key alone, as a resume sees them', async () => {
    const listed: EnumPayload = { folderPath: '/in', rel: '' };
    const tasks = [rootTask(DEF), ...folderPageTasks('e.root', listed, 'root', { items: [doc('d1', 'a.txt'), folder('f1', 'sub')], nextCursor: 'c2' }, true)];
    tasks.push(...(await failedDocsTasks('1_1', { failedDocs: async (_run: string, after: string | undefined) => (after ? [] : [{ docId: 'x', relPath: 'x' }]) })));
    expect(tasks.map((t) => [t.kind, isListingKey(t.key)])).toEqual([
      ['enum', true],
      ['enum', true],
      ['docs', false],
      ['enum', true],
      ['docs', false],
    ]);
    // Keys a store might hold that no listing has: the sweep's, and one merely containing the prefix.
    expect(isListingKey('x.sweep')).toBe(false);
    expect(isListingKey('d.e.1')).toBe(false);
    expect(isListingKey('e')).toBe(false);
  });

  it('plans the next page of the same folder, by id and cursor, when the page says more follow', () => {
    const listed: EnumPayload = { folderPath: '/in', rel: '' };
    const tasks = folderPageTasks('e.root', listed, 'root-id', { items: [], nextCursor: 'page-2' }, true);
    expect(tasks.map((t) => parseTask(t))).toEqual([{ kind: 'enum', payload: { folderPath: '/in', rel: '', folderId: 'root-id', cursor: 'page-2' } }]);
    expect(folderPageTasks('e.root', listed, 'root-id', { items: [] }, true)).toEqual([]);
  });

  it('plans a run-errors run over the previous run\'s failed documents, page by page, each fetched again', async () => {
    const failed: FailedDoc[] = Array.from({ length: DOCS_PER_TASK + 5 }, (_, i) => ({ docId: `id-${String(i).padStart(4, '0')}`, relPath: `r/${i}` }));
    const reads: Array<string | undefined> = [];
    const reader = {
      failedDocs: async (runId: string, after: string | undefined, limit: number) => {
        expect(runId).toBe('1_1');
        reads.push(after);
        return failed.filter((d) => after === undefined || d.docId > after).slice(0, limit);
      },
    };
    const tasks = await failedDocsTasks('1_1', reader);
    expect(tasks.map((t) => t.key)).toEqual(['r.0', 'r.1']);
    const second = parseTask(tasks[1]).payload as DocsPayload;
    expect(second.fetch).toBe(true);
    expect(second.items).toEqual(failed.slice(DOCS_PER_TASK).map((d) => ({ id: d.docId, rel: d.relPath })));
    expect(reads).toEqual([undefined, failed[DOCS_PER_TASK - 1].docId]);
  });

  it('reads once more after a full last page, and plans nothing when nothing failed', async () => {
    const failed: FailedDoc[] = Array.from({ length: DOCS_PER_TASK }, (_, i) => ({ docId: `id-${String(i).padStart(4, '0')}`, relPath: `r/${i}` }));
    let reads = 0;
    const reader = {
      failedDocs: async (_: string, after: string | undefined, limit: number) => {
        reads++;
        return failed.filter((d) => after === undefined || d.docId > after).slice(0, limit);
      },
    };
    expect((await failedDocsTasks('1_1', reader)).length).toBe(1);
    expect(reads).toBe(2);
    expect(await failedDocsTasks('1_1', { failedDocs: async () => [] })).toEqual([]);
  });
});
