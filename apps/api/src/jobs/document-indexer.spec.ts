import * as fsp from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { InvalidArgumentError, UpstreamTimeoutError, UpstreamUnavailableError, type Actor, type ContentConnector, type IndexCapability, type SearchDocument } from '@gateway/connector-api';
import { FilesystemConnectorType } from '@gateway/connector-filesystem';
import type { ExtractionInput, ExtractionLimits, ExtractionResult, TextExtractor } from '@gateway/text-extraction';
import type { CopyGuard } from './document-copier';
import { DocumentIndexer, propertyField, readPrincipals, type IndexTarget } from './document-indexer';
import { InMemoryJobStore } from '../../../../test/support/in-memory-job-store';
import type { JobDefinition } from '../config/job-definition.dto';
import type { DocItem } from './task-plan';

const actor: Actor = { username: 'alice' };

/** An index in memory with the IndexCapability contract; `refuse` makes it refuse documents by name. */
class MemoryIndex implements IndexCapability {
  readonly collections = new Map<string, Map<string, SearchDocument>>();
  ensured = 0;
  writes = 0;
  commits = 0;
  refuse?: RegExp;
  /** Thrown by every write: the engine itself failing (unreachable, time-out), not one document. */
  down?: Error;
  async ensureCollection(collection: string): Promise<void> {
    this.ensured++;
    if (!this.collections.has(collection)) this.collections.set(collection, new Map());
  }
  async write(collection: string, documents: SearchDocument[]): Promise<void> {
    this.writes++;
    if (this.down) throw this.down;
    const bad = documents.find((d) => this.refuse?.test(String(d.name)));
    if (bad) throw new InvalidArgumentError('document', `document ${bad.id} refused`);
    for (const d of documents) this.collections.get(collection)!.set(d.id, d);
  }
  async delete(collection: string, ids: string[]): Promise<void> {
    for (const id of ids) this.collections.get(collection)?.delete(id);
  }
  async commit(): Promise<void> {
    this.commits++;
  }
  docs(collection = 'docs'): Map<string, SearchDocument> {
    return this.collections.get(collection) ?? new Map();
  }
}

/** Reads the stream as UTF-8 and cuts at maxChars; `warning` makes it a metadata-only answer (what a Tika failure gives). */
class FakeExtractor implements TextExtractor {
  warning?: string;
  calls: ExtractionInput[] = [];
  async extract(content: Readable, input: ExtractionInput, limits: ExtractionLimits): Promise<ExtractionResult> {
    this.calls.push(input);
    const chunks: Buffer[] = [];
    for await (const c of content) chunks.push(c as Buffer);
    if (this.warning) return { text: '', truncated: false, method: 'none', warning: this.warning };
    const text = Buffer.concat(chunks).toString('utf8');
    return { text: text.slice(0, limits.maxChars), truncated: text.length > limits.maxChars, method: 'native' };
  }
}

const guard = (cancelled = false): CopyGuard => ({ cancelled, track: (s) => s });

describe('DocumentIndexer', () => {
  let dir: string;
  let source: ContentConnector;
  let index: MemoryIndex;
  let target: IndexTarget;
  let store: InMemoryJobStore;
  let extractor: FakeExtractor;

  beforeEach(async () => {
    dir = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), 'indexer-')));
    source = await new FilesystemConnectorType().create({ id: 'src', typeId: 'filesystem', description: 'src', params: { root: path.join(dir, 'src') } }, { dataDir: dir });
    index = new MemoryIndex();
    target = { id: 'idx', typeId: 'memory', description: 'idx', publicParams: {}, checkHealth: async () => undefined, index };
    store = new InMemoryJobStore();
    extractor = new FakeExtractor();
  });
  afterEach(() => fsp.rm(dir, { recursive: true, force: true }));

  function definition(options: Partial<JobDefinition['options']> = {}): JobDefinition {
    return {
      jobName: 'ix',
      jobGroup: 'g',
      source: { connectorId: 'src', folderPath: '/in', recursive: true },
      target: { connectorId: 'idx', collection: 'docs' },
      options: { onExisting: 'skip', copyVersions: false, maxErrors: 0, removeSource: false, exclude: [], extract: true, maxContentChars: 1000, defaultAcl: '__everyone__', ...options },
    };
  }

  /** A job with a run; the indexer of that run. */
  function runOf(options: Partial<JobDefinition['options']> = {}, withExtractor = true) {
    const def = definition(options);
    const job = store.jobs.size === 0 ? store.addJob(def) : [...store.jobs.values()][0];
    const run = store.addRun(job.id);
    return { run, indexer: new DocumentIndexer(def, source, target, store, withExtractor ? extractor : undefined, job.id, run.id) };
  }

  async function put(name: string, text: string): Promise<DocItem> {
    const folderId = await source.folders!.createFolder('/in', actor);
    const id = await source.createFile({ folderId, fileName: name, mimeType: 'text/plain', content: Readable.from([Buffer.from(text)]) }, actor);
    return { id, rel: name, path: `/in/${name}` };
  }

  /** Claims the items in the run (as the executor does), indexes each, writes the batch, records the outcomes. */
  async function indexAll(indexer: DocumentIndexer, runId: string, items: DocItem[]) {
    const jobId = [...store.jobs.values()][0].id;
    const claims = await store.claimDocs(jobId, runId, items.map((i) => ({ docId: i.id, relPath: i.rel, sourcePath: i.path! })), Date.now());
    const provisional = [];
    for (const item of items) provisional.push(await indexer.copy(item, claims.get(item.id)!, false, guard()));
    const outcomes = await indexer.beforeOutcomes(provisional.filter((o) => o !== undefined));
    await store.finishDocs(jobId, runId, outcomes, Date.now());
    return Object.fromEntries(outcomes.map((o) => [path.basename(o.sourcePath), o]));
  }

  it('writes one index document per source document, with its metadata, text and acl_read, in one batch', async () => {
    const a = await put('a.txt', 'alpha text');
    const b = await put('b.txt', 'bravo text');
    const { run, indexer } = runOf();
    const outcomes = await indexAll(indexer, run.id, [a, b]);
    expect(outcomes['a.txt']).toMatchObject({ outcome: 'p', targetId: `src:${a.id}` });
    expect(index.writes).toBe(1);
    expect(index.docs().get(`src:${a.id}`)).toMatchObject({
      id: `src:${a.id}`,
      title: 'a.txt',
      name: 'a.txt',
      path: '/in/a.txt',
      mime_type: 'text/plain',
      size: 10,
      source_connector: 'src',
      source_id: a.id,
      content: 'alpha text',
      acl_read: ['__everyone__'],
    });
    expect(typeof index.docs().get(`src:${a.id}`)!.modified).toBe('string');
    expect(store.runs.get(run.id)).toMatchObject({ read: 2, written: 2, failed: 0 });
  });

  it('names the prop_ fields by the job mapping: mapped and transformed, constants, unmapped kept or dropped, fail an e naming the property', async () => {
    const a = await put('a.txt', 'alpha');
    await source.propertyUpdate!.updateProperties(a.id, { 'my:keywords': 'x; y', other: 'o' }, actor);
    const mapping = { properties: { 'my:keywords': { to: 'tags', transform: [{ split: ';' }, 'trim'] as never } }, constants: { wave: '1' } };
    const kept = runOf({ mapping });
    await indexAll(kept.indexer, kept.run.id, [a]);
    const doc = index.docs().get(`src:${a.id}`)!;
    expect(doc).toMatchObject({ prop_tags: 'x,y', prop_wave: '1', prop_other: 'o' });
    expect(doc).not.toHaveProperty('prop_my_keywords');
    store.jobs.clear();
    const dropped = runOf({ mapping: { ...mapping, unmapped: 'drop' } });
    await indexAll(dropped.indexer, dropped.run.id, [a]);
    expect(index.docs().get(`src:${a.id}`)).not.toHaveProperty('prop_other');
    store.jobs.clear();
    const failing = runOf({ mapping: { properties: {}, unmapped: 'fail' } });
    const outcomes = await indexAll(failing.indexer, failing.run.id, [a]);
    expect(outcomes['a.txt']).toMatchObject({ outcome: 'e', message: "UNMAPPED_PROPERTY: property 'my:keywords' is not mapped (mapping.unmapped is fail)" });
  });

  it('skips unchanged documents on the next run, re-indexes changed ones and removes the gone ones in the sweep', async () => {
    const a = await put('a.txt', 'alpha');
    const b = await put('b.txt', 'bravo');
    const c = await put('c.txt', 'charlie');
    const first = runOf();
    await indexAll(first.indexer, first.run.id, [a, b, c]);
    expect(index.docs().size).toBe(3);

    await source.contentUpdate!.updateContent(b.id, { content: Readable.from([Buffer.from('bravo changed')]), mimeType: 'text/plain' }, actor);
    await source.deleteItem(c.id, true, actor);
    const second = runOf();
    const outcomes = await indexAll(second.indexer, second.run.id, [a, b]);
    expect(outcomes['a.txt']).toMatchObject({ outcome: 's', message: 'Unchanged since it was indexed' });
    expect(outcomes['b.txt'].outcome).toBe('p');
    expect(index.docs().get(`src:${b.id}`)!.content).toBe('bravo changed');
    expect(await second.indexer.sweep(() => false)).toBe(true);
    expect([...index.docs().keys()].sort()).toEqual([`src:${a.id}`, `src:${b.id}`].sort());
    expect(store.runs.get(second.run.id)).toMatchObject({ read: 2, written: 1, skipped: 1, removed: 1 });
    expect(await store.latestAudit(1, c.id, 'p')).toMatchObject({ message: 'removed from the index: gone from the source', targetId: `src:${c.id}` });
    // Swept once: the next sweep finds nothing more.
    await second.indexer.sweep(() => false);
    expect(store.runs.get(second.run.id)!.removed).toBe(1);
  });

  it('a prefetched task asks the store once for what earlier runs indexed, and decides each document as without it', async () => {
    const a = await put('a.txt', 'alpha');
    const b = await put('b.txt', 'bravo');
    const c = await put('c.txt', 'charlie');
    const first = runOf();
    await indexAll(first.indexer, first.run.id, [a, b]);
    await source.contentUpdate!.updateContent(b.id, { content: Readable.from([Buffer.from('bravo changed')]), mimeType: 'text/plain' }, actor);

    const second = runOf();
    const queried: string[][] = [];
    const indexStates = store.indexStates.bind(store);
    store.indexStates = (jobId, ids) => (queried.push([...ids]), indexStates(jobId, ids));
    await second.indexer.prefetch([a.id, b.id, c.id]);
    const outcomes = await indexAll(second.indexer, second.run.id, [a, b, c]);
    expect(queried).toEqual([[a.id, b.id, c.id]]);
    expect(outcomes['a.txt']).toMatchObject({ outcome: 's', message: 'Unchanged since it was indexed' });
    expect(outcomes['b.txt'].outcome).toBe('p');
    expect(outcomes['c.txt'].outcome).toBe('p');
    expect(index.docs().get(`src:${b.id}`)!.content).toBe('bravo changed');

    // A prefetched state is used once: the same document again is looked up afresh (it was just written).
    const again = await indexAll(second.indexer, second.run.id, [b]);
    expect(queried).toEqual([[a.id, b.id, c.id], [b.id]]);
    expect(again['b.txt'].outcome).not.toBe('e');
  });

  it('a sweep halted before its first batch deletes nothing', async () => {
    const a = await put('a.txt', 'alpha');
    const first = runOf();
    await indexAll(first.indexer, first.run.id, [a]);
    const second = runOf();
    expect(await second.indexer.sweep(() => true)).toBe(false);
    expect(index.docs().size).toBe(1);
  });

  it('a document the index refuses fails alone; the others of the batch are written', async () => {
    const a = await put('a.txt', 'alpha');
    const bad = await put('bad.txt', 'refused');
    const { run, indexer } = runOf();
    index.refuse = /^bad/;
    const outcomes = await indexAll(indexer, run.id, [a, bad]);
    expect(outcomes['a.txt'].outcome).toBe('p');
    expect(outcomes['bad.txt']).toMatchObject({ outcome: 'e', message: expect.stringContaining(`document src:${bad.id} refused`) });
    expect([...index.docs().keys()]).toEqual([`src:${a.id}`]);
    expect(store.runs.get(run.id)).toMatchObject({ written: 1, failed: 1 });
    // Not remembered as indexed: the next run tries it again.
    expect((await store.indexStates(1, [bad.id])).size).toBe(0);
  });

  it('an engine that cannot be reached or does not answer fails the batch with one write, not one write per document', async () => {
    for (const down of [new UpstreamUnavailableError('Solr cannot be reached'), new UpstreamTimeoutError('Solr did not answer within 1000 ms')]) {
      const items = [await put(`a-${index.writes}.txt`, 'alpha'), await put(`b-${index.writes}.txt`, 'bravo'), await put(`c-${index.writes}.txt`, 'charlie')];
      const { run, indexer } = runOf();
      index.down = down;
      const before = index.writes;
      const outcomes = Object.values(await indexAll(indexer, run.id, items));
      expect(index.writes - before).toBe(1);
      expect(outcomes.map((o) => [o.outcome, o.message])).toEqual(items.map(() => ['e', `${down instanceof UpstreamTimeoutError ? 'UPSTREAM_TIMEOUT' : 'UPSTREAM_UNAVAILABLE'}: ${down.message}`]));
      expect((await store.indexStates(1, items.map((i) => i.id))).size).toBe(0);
    }
  });

  it('records truncation and extraction warnings on the outcome; the document is indexed all the same', async () => {
    const long = await put('long.txt', 'x'.repeat(50));
    const { run, indexer } = runOf({ maxContentChars: 10 });
    const cut = await indexAll(indexer, run.id, [long]);
    expect(cut['long.txt']).toMatchObject({ outcome: 'p', message: 'warning: content cut at 10 characters (options.maxContentChars)' });
    expect(index.docs().get(`src:${long.id}`)!.content).toBe('x'.repeat(10));

    const other = await put('scan.pdf', '%PDF-1.4 not really');
    extractor.warning = 'Tika failed: connect ECONNREFUSED 127.0.0.1:9';
    const next = runOf({ maxContentChars: 10 });
    const meta = await indexAll(next.indexer, next.run.id, [other]);
    expect(meta['scan.pdf']).toMatchObject({ outcome: 'p', message: 'warning: indexed without text: Tika failed: connect ECONNREFUSED 127.0.0.1:9' });
    expect(index.docs().get(`src:${other.id}`)).toMatchObject({ name: 'scan.pdf' });
    expect(index.docs().get(`src:${other.id}`)!.content).toBeUndefined();
  });

  it('with extract false, or without an extractor, indexes metadata only and never opens the content', async () => {
    const a = await put('a.txt', 'alpha');
    const { run, indexer } = runOf({ extract: false });
    expect((await indexAll(indexer, run.id, [a]))['a.txt']).toEqual(expect.objectContaining({ outcome: 'p' }));
    expect(extractor.calls).toHaveLength(0);
    expect(index.docs().get(`src:${a.id}`)!.content).toBeUndefined();

    const b = await put('b.txt', 'bravo');
    const none = runOf({}, false);
    expect((await indexAll(none.indexer, none.run.id, [b]))['b.txt']).toMatchObject({ outcome: 'p', message: 'warning: indexed without text: no text extractor in this gateway' });
  });

  it('a cancelled document has no outcome and nothing is written for it', async () => {
    const a = await put('a.txt', 'alpha');
    const { indexer } = runOf();
    expect(await indexer.copy(a, { fresh: true, claimedAt: Date.now() }, false, guard(true))).toBeUndefined();
    expect(await indexer.beforeOutcomes([])).toEqual([]);
    expect(index.writes).toBe(0);
  });

  it('a resumed run recognises its own earlier write as written, not skipped', async () => {
    const a = await put('a.txt', 'alpha');
    const { run, indexer } = runOf();
    const jobId = [...store.jobs.values()][0].id;
    await store.claimDocs(jobId, run.id, [{ docId: a.id, relPath: 'a.txt', sourcePath: '/in/a.txt' }], Date.now());
    const provisional = await indexer.copy(a, { fresh: true, claimedAt: Date.now() }, false, guard());
    await indexer.beforeOutcomes([provisional!]); // indexed, then the process died before the outcome was recorded
    const again = new DocumentIndexer(definition(), source, target, store, extractor, jobId, run.id);
    expect(await again.copy(a, { fresh: false, claimedAt: Date.now() }, false, guard())).toMatchObject({ outcome: 'p', message: 'recovered: indexed by an earlier attempt of this run' });
  });

  it('excluded names are skipped', async () => {
    const a = await put('a.tmp', 'alpha');
    const { indexer } = runOf({ exclude: ['*.tmp'] });
    expect(await indexer.copy(a, { fresh: true, claimedAt: 0 }, false, guard())).toMatchObject({ outcome: 's', message: 'Excluded by pattern ^.*\\.tmp$' });
  });
});

describe('readPrincipals', () => {
  it('keeps principals with read, write or all; "anyone" is __everyone__', () => {
    expect(
      readPrincipals(['bob:cmis:read', 'carol:cmis:write', 'admin:cmis:all', 'anyone:cmis:read', 'dave:cmis:custom', 'cmis:anyone:cmis:all', 'eve:cmis:read,cmis:write']),
    ).toEqual(['__everyone__', 'admin', 'bob', 'carol', 'eve']);
    expect(readPrincipals([])).toEqual([]);
  });

  it('names custom property fields prop_<name> with characters every engine takes', () => {
    expect(propertyField('color')).toBe('prop_color');
    expect(propertyField('my:prop.name')).toBe('prop_my_prop_name');
  });
});
