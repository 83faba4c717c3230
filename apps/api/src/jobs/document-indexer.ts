import { GatewayError, UpstreamThrottledError, UpstreamTimeoutError, UpstreamUnavailableError, type Connector, type ContentConnector, type IndexCapability, type ItemInfo, type SearchDocument } from '@gateway/connector-api';
import type { ClaimedDoc, DocOutcome, IndexStateRecord } from '@gateway/persistence';
import type { ExtractionResult, TextExtractor } from '@gateway/text-extraction';
import { joinPath, type CopyGuard } from './document-copier';
import { DocumentFilter } from './document-filter';
import { INDEX_JOB_DEFAULTS, type JobDefinition } from '../config/job-definition.dto';
import type { JobStore } from './job-store';
import { compileMapping, indexedProperties, mapDocument, type CompiledMapping } from './mapping/property-mapping';
import { Cancelled } from './run-watcher';
import type { DocItem } from './task-plan';

/** Index documents removed per delete call and audit transition in a run's sweep. */
export const SWEEP_BATCH = 500;
/** The task that deletes, at the end of a complete run, what is gone from the source. */
export const SWEEP_TASK_KEY = 'x.sweep';

/** CMIS permissions that include reading (cmis:write and cmis:all imply cmis:read). */
const READ_PERMISSIONS = new Set(['cmis:read', 'cmis:write', 'cmis:all']);

/** A search connector as an indexing job writes to it. */
export type IndexTarget = Connector & { index: IndexCapability };

interface Pending {
  doc: SearchDocument;
  stamp: string;
  sourcePath: string;
}

/**
 * One indexing run's documents, in this process (issue 14). The executor drives it like the
 * DocumentCopier: `copy` reads one document (metadata, ACL, extracted text) into an index
 * document and answers its provisional outcome; the index write happens in `beforeOutcomes`,
 * which the executor calls with each batch of outcomes just before it records them. So a
 * batch is one bulk write (up to a task's 100 documents), and the audit never says a document
 * was indexed before the engine accepted it: a kill cuts documents still being read (no
 * outcome, resume redoes them), and a crash between the write and the audit leaves them
 * claimed (redone, the upsert by id is idempotent).
 *
 * Incremental: what was indexed is kept per job (job_index_state: source id → stamp); a
 * document whose stamp is unchanged is skipped (`s`), and the sweep at the end of a complete
 * run deletes from the index what the run did not list (`removed`).
 */
export class DocumentIndexer {
  private readonly filter: DocumentFilter;
  private readonly pending = new Map<string, Pending>();
  /** What earlier runs indexed, loaded per task in one query (prefetch) instead of one query per document. */
  private readonly known = new Map<string, IndexStateRecord | null>();
  private ensured?: Promise<void>;
  readonly collection: string;
  private readonly extract: boolean;
  private readonly maxContentChars: number;
  private readonly defaultAcl: string;
  private readonly mapping?: CompiledMapping;

  constructor(
    readonly def: JobDefinition,
    readonly source: ContentConnector,
    private readonly target: IndexTarget,
    private readonly repo: JobStore,
    private readonly extractor: TextExtractor | undefined,
    private readonly jobId: number,
    private readonly runId: string,
    /** A dry run (document-planner.ts): plan from the stamps, read no content, write nothing (no index write, no stamp). */
    private readonly dryRun = false,
  ) {
    this.filter = new DocumentFilter(def.options);
    this.collection = def.target.collection!;
    this.extract = def.options.extract ?? INDEX_JOB_DEFAULTS.extract;
    this.maxContentChars = def.options.maxContentChars ?? INDEX_JOB_DEFAULTS.maxContentChars;
    this.defaultAcl = def.options.defaultAcl ?? INDEX_JOB_DEFAULTS.defaultAcl;
    if (def.options.mapping) this.mapping = compileMapping(def.options.mapping);
  }

  sourcePath(item: DocItem): string {
    return item.path ?? joinPath(this.def.source.folderPath, item.rel);
  }

  /** The index document's id: stable across runs. */
  indexId(docId: string): string {
    return `${this.source.id}:${docId}`;
  }

  /**
   * Loads in one query what earlier runs indexed of a task's documents; copy() takes each one's
   * state from there (once) and asks the store itself only for a document not prefetched.
   */
  async prefetch(docIds: readonly string[]): Promise<void> {
    if (docIds.length === 0) return;
    const states = await this.repo.indexStates(this.jobId, docIds);
    for (const id of docIds) this.known.set(id, states.get(id) ?? null);
  }

  private async knownState(docId: string): Promise<IndexStateRecord | undefined> {
    const prefetched = this.known.get(docId);
    if (prefetched !== undefined) {
      this.known.delete(docId);
      return prefetched ?? undefined;
    }
    return (await this.repo.indexStates(this.jobId, [docId])).get(docId);
  }

  /**
   * One document: its provisional outcome (a `p` is confirmed or turned into `e` by
   * beforeOutcomes), or undefined when cancelled (kill, shutdown): it stays claimed.
   */
  async copy(item: DocItem, claim: Pick<ClaimedDoc, 'fresh' | 'claimedAt'>, _fetch: boolean, guard: CopyGuard): Promise<DocOutcome | undefined> {
    const sourcePath = this.sourcePath(item);
    const skip = this.filter.skipReason(item);
    if (skip) return { docId: item.id, outcome: 's', sourcePath, message: skip };
    const targetId = this.indexId(item.id);
    try {
      if (guard.cancelled) throw new Cancelled();
      const info = await this.source.getItem(item.id);
      // The job's mapping names the prop_ fields (mapping/property-mapping.ts); unmapped: fail fails the document here.
      const mapped = this.mapping ? mapDocument(this.mapping, info) : undefined;
      if (mapped?.failure) return { docId: item.id, outcome: 'e', sourcePath, targetId, message: mapped.failure };
      if (mapped) info.properties = indexedProperties(mapped);
      const aclRead = await this.aclRead(item.id);
      const stamp = this.stamp(info, aclRead);
      const known = await this.knownState(item.id);
      if (known && known.stamp === stamp) {
        // A resumed (or retried) run finds its own earlier write: that was this run's `p`.
        if (known.runId === this.runId && !claim.fresh) {
          return { docId: item.id, outcome: 'p', sourcePath, targetId, message: 'recovered: indexed by an earlier attempt of this run' };
        }
        return { docId: item.id, outcome: 's', sourcePath, targetId, message: 'Unchanged since it was indexed' };
      }
      if (this.dryRun) {
        const plan = known ? 'overwrite' : 'create';
        return { docId: item.id, outcome: 'p', sourcePath, targetId, message: known ? `changed since it was indexed: into ${this.collection}` : `into ${this.collection}`, plan };
      }
      const notes: string[] = [];
      let content: string | undefined;
      if (this.extract) {
        const extracted = await this.extractText(info, guard);
        if (extracted.text !== '') content = extracted.text;
        if (extracted.truncated) notes.push(`content cut at ${this.maxContentChars} characters (options.maxContentChars)`);
        if (extracted.warning) notes.push(`indexed without text: ${extracted.warning}`);
      }
      if (guard.cancelled) throw new Cancelled();
      this.pending.set(item.id, { doc: this.document(targetId, info, aclRead, content), stamp, sourcePath });
      return { docId: item.id, outcome: 'p', sourcePath, targetId, ...(notes.length > 0 ? { message: `warning: ${notes.join('; ')}` } : {}) };
    } catch (e) {
      if (guard.cancelled || e instanceof Cancelled) return undefined;
      return { docId: item.id, outcome: 'e', sourcePath, targetId, message: errorMessage(e) };
    }
  }

  /**
   * Writes the index documents of a batch of outcomes (one bulk write; one by one when the
   * batch is refused, so a document the engine refuses fails alone), records what was indexed,
   * and answers the outcomes to record: a document whose write failed becomes an `e`.
   * Never rejects: a write failure is the documents' outcome.
   */
  async beforeOutcomes(batch: DocOutcome[]): Promise<DocOutcome[]> {
    const ready = batch.filter((o) => o.outcome === 'p' && this.pending.has(o.docId));
    if (ready.length === 0) return batch;
    const failed = new Map<string, string>();
    const written: string[] = [];
    try {
      await this.ensureCollection();
      await this.target.index.write(this.collection, ready.map((o) => this.pending.get(o.docId)!.doc));
      written.push(...ready.map((o) => o.docId));
    } catch (e) {
      // An engine that cannot be reached, does not answer or throttles refuses every document alike:
      // trying each one alone would cost a time-out per document (a batch of 100 held a shutdown for
      // an hour when the engine had gone).
      if (ready.length === 1 || isEngineWide(e)) for (const o of ready) failed.set(o.docId, errorMessage(e));
      else {
        for (const o of ready) {
          try {
            await this.target.index.write(this.collection, [this.pending.get(o.docId)!.doc]);
            written.push(o.docId);
          } catch (single) {
            failed.set(o.docId, errorMessage(single));
          }
        }
      }
    }
    try {
      await this.repo.saveIndexStates(
        this.jobId,
        this.runId,
        written.map((docId) => {
          const p = this.pending.get(docId)!;
          return { docId, sourcePath: p.sourcePath, stamp: p.stamp };
        }),
        Date.now(),
      );
    } catch (e) {
      // Indexed but not remembered: the next run indexes them again (their outcome stands).
      for (const docId of written) failed.set(docId, `indexed, but its state was not recorded: ${errorMessage(e)}`);
    }
    for (const o of ready) this.pending.delete(o.docId);
    if (failed.size === 0) return batch;
    return batch.map((o) => (failed.has(o.docId) ? { ...o, outcome: 'e' as const, message: failed.get(o.docId) } : o));
  }

  /**
   * The end of a complete run: documents indexed before and not listed by this run are gone
   * from the source; they leave the index, then their removal is recorded (a crash in between
   * deletes them again next time: deleting is idempotent). False when halted meanwhile.
   */
  async sweep(halted: () => boolean): Promise<boolean> {
    for (;;) {
      if (halted()) return false;
      const gone = await this.repo.goneFromSource(this.jobId, this.runId, SWEEP_BATCH);
      if (gone.length === 0) return true;
      await this.ensureCollection();
      await this.target.index.delete(this.collection, gone.map((g) => this.indexId(g.docId)));
      const removed = gone.map((g) => ({ docId: g.docId, sourcePath: g.sourcePath, targetId: this.indexId(g.docId), message: 'removed from the index: gone from the source' }));
      await this.repo.transition(this.runId, (locked) => locked.recordRemoved(this.jobId, removed, Date.now()));
    }
  }

  /** Makes what was written visible now (end, pause, abort, kill of a run); engines commit within commitWithinMs meanwhile. */
  async commit(): Promise<void> {
    await this.ensureCollection();
    await this.target.index.commit(this.collection);
  }

  /** Once per run and process (a failure is tried again by the next write). */
  ensureCollection(): Promise<void> {
    if (!this.ensured) {
      this.ensured = this.target.index.ensureCollection(this.collection);
      this.ensured.catch(() => (this.ensured = undefined));
    }
    return this.ensured;
  }

  /** Principals that may read the document: from the source's ACL where it has one, else the job's defaultAcl. */
  private async aclRead(id: string): Promise<string[]> {
    if (!this.source.acls) return [this.defaultAcl];
    return readPrincipals(await this.source.acls.getAcl(id));
  }

  /** What the index entry depends on: when it differs from the last run's, the document is indexed again. */
  private stamp(info: ItemInfo, aclRead: string[]): string {
    return JSON.stringify([
      this.def.target.connectorId,
      this.collection,
      this.extract,
      this.maxContentChars,
      info.etag ?? null,
      info.modified?.getTime() ?? null,
      info.size ?? null,
      info.versionLabel ?? null,
      info.path,
      aclRead,
      ...(this.def.options.mapping ? [this.def.options.mapping] : []),
    ]);
  }

  private async extractText(info: ItemInfo, guard: CopyGuard): Promise<ExtractionResult> {
    if (!this.extractor) return { text: '', truncated: false, method: 'none', warning: 'no text extractor in this gateway' };
    const controller = new AbortController();
    const stream = guard.track(await this.source.openContent(info.id));
    stream.once('close', () => {
      if (!stream.readableEnded) controller.abort(new Cancelled());
    });
    try {
      return await this.extractor.extract(
        stream,
        { name: info.name, ...(info.mimeType ? { mimeType: info.mimeType } : {}), ...(info.size !== undefined ? { size: info.size } : {}) },
        { maxChars: this.maxContentChars, signal: controller.signal },
      );
    } finally {
      if (!stream.destroyed) stream.destroy();
    }
  }

  private document(id: string, info: ItemInfo, aclRead: string[], content: string | undefined): SearchDocument {
    const doc: SearchDocument = {
      id,
      title: info.properties?.title || info.name,
      name: info.name,
      path: info.path,
      source_connector: this.source.id,
      source_id: info.id,
      acl_read: aclRead,
    };
    if (info.mimeType) doc.mime_type = info.mimeType;
    if (info.size !== undefined) doc.size = info.size;
    if (info.created) doc.created = info.created.toISOString();
    if (info.modified) doc.modified = info.modified.toISOString();
    const author = info.createdBy ?? info.modifiedBy;
    if (author) doc.author = author;
    if (content !== undefined) doc.content = content;
    for (const [key, value] of Object.entries(info.properties ?? {})) {
      if (value !== null && value !== '') doc[propertyField(key)] = value;
    }
    return doc;
  }
}

/** `prop_<name>`, the name cut to characters every engine takes in a field name (CMIS's `my:prop` → `prop_my_prop`). */
export function propertyField(name: string): string {
  return `prop_${name.replace(/[^A-Za-z0-9_]/g, '_')}`;
}

/**
 * Principals of ACL entries (`<principal>:<permission>,...`) holding a permission that includes
 * reading. The repository's "anyone" principal (OpenCMIS: `anyone`; the CMIS default name
 * `cmis:anyone`) is everybody: it becomes `__everyone__`, the value search trimming matches for
 * every caller.
 */
export function readPrincipals(entries: readonly string[]): string[] {
  const out = new Set<string>();
  for (const entry of entries) {
    // Permissions start with `cmis:`; a principal may too (cmis:anyone), so the split is at the first `:cmis:`.
    let split = entry.indexOf(':cmis:');
    if (split < 0) split = entry.indexOf(':');
    if (split <= 0) continue;
    const principal = entry.slice(0, split);
    const permissions = entry.slice(split + 1).split(',').map((p) => p.trim());
    if (permissions.some((p) => READ_PERMISSIONS.has(p))) out.add(ANYONE.has(principal) ? INDEX_JOB_DEFAULTS.defaultAcl : principal);
  }
  return [...out].sort();
}

const ANYONE = new Set(['anyone', 'cmis:anyone']);

function isEngineWide(e: unknown): boolean {
  return e instanceof UpstreamUnavailableError || e instanceof UpstreamTimeoutError || e instanceof UpstreamThrottledError;
}

function errorMessage(e: unknown): string {
  return e instanceof GatewayError ? `${e.code}: ${e.message}` : `INTERNAL: ${(e as Error)?.message ?? String(e)}`;
}
