import * as path from 'node:path/posix';
import { pipeline, type Readable } from 'node:stream';
import { ConflictError, GatewayError, NotFoundError, type Actor, type ContentConnector, type VersionStamp } from '@gateway/connector-api';
import type { ClaimedDoc, DocOutcome } from '@gateway/persistence';
import { DocumentFilter } from './document-filter';
import { AclCarrier, type PlannedAcl } from './mapping/acl-carrier';
import type { JobDefinition, OnExisting } from '../config/job-definition.dto';
import { CopyVerifier, type HashingPassThrough, type SentContent, type Verification } from './copy-verification';
import { Cancelled } from './run-watcher';
import { NameRefused, TargetNames, renameNote, sourceNameOf, type TargetNaming } from './target-names';
import { MappedProperties, PropertiesRefused, type PreparedProperties } from './mapping/mapped-properties';
import type { DocItem } from './task-plan';
import { VersionStamps } from './version-stamps';

/** Timestamps of coarse filesystems: a target modified this close before the claim still counts as ours. */
export const CLOCK_TOLERANCE_MS = 1000;

/** What a copy asks of the run it belongs to: whether to cut now, and to follow the streams it opens. */
export interface CopyGuard {
  readonly cancelled: boolean;
  track(stream: Readable): Readable;
  /** Aborted once the run takes no more documents (RunWatch.halted): a direct copy still queued gives up its place. */
  readonly halted?: AbortSignal;
}

/** A write made and checked: the target id, what was sent, and how the copy was verified. */
interface CheckedWrite {
  id: string;
  sent: SentContent;
  verification: Verification;
  /** The mapped properties went with the content (the target's propertyUpdate.propertiesOnCreate). */
  propertiesCarried?: boolean;
}

/** A written copy that failed its check (copy-verification.ts): the document's outcome is an error. */
class CopyMismatch extends Error {
  constructor(
    readonly write: CheckedWrite,
    /** The write added a version to a document that was there before (only that version is removed). */
    readonly addedVersion: boolean,
  ) {
    super(write.verification.mismatch);
  }
}

/**
 * Copies one document of a run from the source connector to the target, by the job's options
 * (exclude, onExisting, copyVersions, removeSource, verify, onMismatch), and says how it ended.
 * One copier per run and process: it remembers the target folders it made.
 */
export class DocumentCopier {
  private readonly folders = new Map<string, Promise<string>>();
  private readonly filter: DocumentFilter;
  private readonly verifier: CopyVerifier;
  private readonly names: TargetNames;
  /** options.copyAcls: the permissions carried to each copy (jobs/mapping/). */
  private readonly acls?: AclCarrier;
  private readonly mapping?: MappedProperties;
  /** options.copyVersions: each version's original dates and authors (version-stamps.ts). */
  private readonly stamps?: VersionStamps;

  constructor(
    readonly def: JobDefinition,
    readonly source: ContentConnector,
    private readonly target: ContentConnector,
    private readonly actor: Actor,
    dataDir?: string,
  ) {
    this.filter = new DocumentFilter(def.options);
    if (def.options.copyAcls) this.acls = new AclCarrier(def.options.aclMapping, source, target, dataDir);
    this.verifier = new CopyVerifier(target, def.options.verify, def.options.onMismatch);
    this.names = new TargetNames(target.namingRules, def.options.names ?? 'sanitize');
    if (def.options.mapping) this.mapping = new MappedProperties(def.options.mapping, source, target, actor);
    if (def.options.copyVersions) this.stamps = new VersionStamps(source, target);
  }

  /**
   * Where a document goes at the target: the folder of its relative path and its name, each fitted to the
   * target's naming rules (TargetNames; NameRefused under `names: refuse`). The sync copier moves documents here too.
   */
  targetPlace(item: Pick<DocItem, 'rel' | 'sourceName'>): { dir: string; name: string } {
    const targetFolder = this.def.target.folderPath ?? '/'; // always set on a copy job (definitions service)
    const dir = this.names.folder(targetFolder, path.dirname(item.rel));
    return { dir, name: this.names.name(dir, sourceNameOf(item)) };
  }

  /** Where the document is read from, for the audit trail. */
  sourcePath(item: DocItem): string {
    return item.path ?? joinPath(this.def.source.folderPath, item.rel);
  }

  /**
   * One document: its outcome, or undefined when cancelled (kill or shutdown), so that it
   * stays claimed and is redone later. A document claimed before (not fresh) may have been
   * written by the attempt that claimed it: a target written since the claim counts as done.
   */
  async copy(
    item: DocItem,
    claim: Pick<ClaimedDoc, 'fresh' | 'claimedAt'>,
    fetch: boolean,
    guard: CopyGuard,
    /** A sync job's choice for this document (sync/sync-copier.ts): onExisting, and whether it knows the target has it (looked up first, not written blind). */
    sync?: { onExisting: OnExisting; existsAtTarget: boolean },
  ): Promise<DocOutcome | undefined> {
    const onExisting = sync?.onExisting ?? this.def.options.onExisting;
    const sourcePath = this.sourcePath(item);
    const sourceName = sourceNameOf(item);
    const skip = this.filter.skipReason(item);
    if (skip) return { docId: item.id, outcome: 's', sourcePath, message: skip };
    // Outside the try: a mapping file that cannot be read fails the run, not one document.
    // (Each optional step is awaited only when the job has it: a turn of the event loop per await, per document.)
    if (this.acls) await this.acls.ready();
    try {
      // Before anything is written: under aclMapping.unmapped: fail an unmapped entry fails the document here.
      const acl = this.acls && (await this.acls.plan(item.id));
      let info = item;
      if (fetch) {
        const fresh = await this.source.getItem(item.id);
        info = { ...item, path: fresh.path, mimeType: fresh.mimeType, size: fresh.size };
      }
      // Mapped and checked against the target before a byte is written (mapping/mapped-properties.ts).
      const mapped = this.mapping ? await this.mapping.prepare(item.id) : undefined;
      if (mapped?.failure) return { docId: item.id, outcome: 'e', sourcePath, message: mapped.failure };
      const { dir: targetDir, name: placed } = this.targetPlace(item);
      let name = placed;
      const written = (targetId: string, message?: string, write?: CheckedWrite, addedVersion = false) =>
        this.written(item, sourcePath, targetId, acl, message, write, { sourceName, targetPath: joinPath(targetDir, name), renamed: name !== path.basename(item.rel) }, mapped, addedVersion);
      const folderId = await this.ensureFolder(targetDir);

      // Without copyVersions the document alone, with no await for it.
      const { ids: contents, note, stamps } = this.stamps ? await this.versionsToCopy(item.id, this.stamps) : { ids: [item.id], note: undefined, stamps: undefined };
      let existing: string | undefined;
      if (!claim.fresh || sync?.existsAtTarget) {
        // Redone after a crash, stall, kill or resume: did the earlier attempt's write land?
        ({ name, existing } = await this.names.place(this.target, targetDir, name, sourceName));
        if (existing !== undefined && !claim.fresh) {
          const t = await this.target.getItem(existing);
          const since = claim.claimedAt - CLOCK_TOLERANCE_MS;
          // A stamped copy reports the source's date, not its write's (version-stamps.ts).
          const landed = this.stamps ? this.stamps.writtenSince(t.modified, stamps?.get(contents[contents.length - 1]), since) : (t.modified?.getTime() ?? 0) >= since;
          if (landed && (info.size === undefined || t.size === undefined || t.size === info.size)) {
            // Whether that write made the document or added a version is not known: under `version`, a refusal removes only the latest version.
            return await written(existing, 'recovered: written by an earlier attempt of this run', undefined, onExisting === 'version');
          }
        }
      }

      const noted = (message?: string) => [message, note].filter((m) => m !== undefined).join('; ') || undefined;
      if (existing === undefined) {
        try {
          const write = await this.writeNew(guard, folderId, name, info.mimeType, contents, mapped, stamps);
          return await written(write.id, noted(), write);
        } catch (e) {
          if (!(e instanceof ConflictError)) throw e;
          const taken = name;
          ({ name, existing } = await this.names.place(this.target, targetDir, name, sourceName));
          if (existing === undefined && name === taken) throw e;
          if (existing === undefined) {
            // Another source's document holds the name: this one goes to its hashed name.
            const write = await this.writeNew(guard, folderId, name, info.mimeType, contents, mapped, stamps);
            return await written(write.id, noted(), write);
          }
        }
      }
      if (onExisting === 'skip') {
        return { docId: item.id, outcome: 'd', sourcePath, targetId: existing, message: 'Already exists at the target' };
      }
      if (onExisting === 'overwrite') {
        await this.target.deleteItem(existing, true, this.actor);
        const write = await this.writeNew(guard, folderId, name, info.mimeType, contents, mapped, stamps);
        return await written(write.id, noted('overwritten'), write);
      }
      let write: CheckedWrite | undefined;
      for (const versionId of contents) write = await this.addVersion(guard, write?.id ?? existing, versionId, name, info.mimeType, true, stamps?.get(versionId));
      return await written(write!.id, noted('new version'), write, true);
    } catch (e) {
      if (e instanceof CopyMismatch) return await this.mismatched(item, sourcePath, e);
      if (e instanceof PropertiesRefused) return e.outcome(item.id, sourcePath);
      if (guard.cancelled || e instanceof Cancelled) return undefined;
      if (e instanceof NameRefused) return { docId: item.id, outcome: 'e', sourcePath, message: `NAME_REFUSED: ${e.message}` };
      return { docId: item.id, outcome: 'e', sourcePath, message: errorMessage(e) };
    }
  }

  private async written(
    item: DocItem,
    sourcePath: string,
    targetId: string,
    acl: PlannedAcl | undefined,
    message?: string,
    write?: CheckedWrite,
    naming?: TargetNaming,
    mapped?: PreparedProperties,
    addedVersion = false,
  ): Promise<DocOutcome> {
    // The mapped properties first: a refusal removes the copy (PropertiesRefused) before anything else is done to it.
    if (mapped && !write?.propertiesCarried) await this.mapping!.apply(targetId, mapped, addedVersion);
    const renamed = naming?.renamed ? await renameNote(this.target, targetId, naming, sourcePath, this.actor) : undefined;
    const aclWarning = acl && (await this.acls!.apply(targetId, acl, this.actor));
    message = [message, renamed, aclWarning, this.stamps?.warningFor(targetId)].filter(Boolean).join('; ') || undefined;
    let removed = false;
    if (this.def.options.removeSource) {
      try {
        await this.source.deleteItem(item.id, true, this.actor);
        removed = true;
      } catch (e) {
        if (!(e instanceof NotFoundError)) throw e;
      }
    }
    return {
      docId: item.id,
      outcome: 'p',
      sourcePath,
      targetId,
      ...(message ? { message } : {}),
      removed,
      ...(item.size !== undefined ? { bytes: item.size } : {}),
      ...(write ? { checksum: write.sent.sha256, verified: write.verification.method } : {}),
    };
  }

  /** A copy that failed its check: an error naming both hashes; the copy removed unless onMismatch is keep (a later run writes it again). */
  private async mismatched(item: DocItem, sourcePath: string, e: CopyMismatch): Promise<DocOutcome> {
    const { id, sent, verification } = e.write;
    let fate: string;
    try {
      fate = await this.verifier.discard(id, e.addedVersion, this.actor);
    } catch (d) {
      fate = `the copy could not be removed (${(d as Error)?.message ?? String(d)})`;
    }
    return { docId: item.id, outcome: 'e', sourcePath, targetId: id, message: `${e.message}; ${fate}`, checksum: sent.sha256, verified: verification.method };
  }

  /**
   * Under copyVersions, the source ids whose content is written, oldest first: every version. A target
   * that keeps no versions (no versioning group: S3 without bucket versioning) gets the current version,
   * and the outcome says so (`note`): later versions written over earlier ones would lose them silently.
   */
  private async versionsToCopy(id: string, versionStamps: VersionStamps): Promise<{ ids: string[]; note?: string; stamps?: Map<string, VersionStamp> }> {
    if (!this.source.versioning) return { ids: [id], ...(await versionStamps.plan(id, undefined)) };
    if (!this.target.versioning || !this.target.contentUpdate) {
      const { stamps, note } = await versionStamps.plan(id, undefined);
      return { ids: [id], stamps, note: ['copyVersions: the target keeps no versions, the current version only was copied', note].filter(Boolean).join('; ') };
    }
    const versions = await this.source.versioning.listVersions(id);
    // listVersions is newest first in the repository's own order. A sort by modified date put
    // versions written within one second (SharePoint's dates are to the second) in any order.
    const ids = versions.length === 0 ? [id] : versions.map((v) => v.id).reverse();
    return { ids, ...(await versionStamps.plan(id, versions)) };
  }

  private async writeNew(guard: CopyGuard, folderId: string, name: string, mimeType: string | undefined, contents: string[], mapped?: PreparedProperties, stamps?: Map<string, VersionStamp>): Promise<CheckedWrite> {
    const properties = this.mapping?.onCreate(mapped);
    if (!properties) return this.writeFirst(guard, folderId, name, mimeType, contents, mapped?.type, undefined, stamps);
    try {
      return { ...(await this.writeFirst(guard, folderId, name, mimeType, contents, mapped?.type, properties, stamps)), propertiesCarried: true };
    } catch (e) {
      throw this.mapping!.refusedAtCreate(e, properties) ?? e;
    }
  }

  private async writeFirst(guard: CopyGuard, folderId: string, name: string, mimeType: string | undefined, contents: string[], type?: string, properties?: Record<string, string>, stamps?: Map<string, VersionStamp>): Promise<CheckedWrite> {
    if (guard.cancelled) throw new Cancelled();
    // A target that copies the files of a localFiles source itself (between two filesystem
    // connectors: on its copy thread, off the event loop, hashing what it reads); undefined when it cannot, and the content streams.
    const local = this.source.localFiles;
    const target = properties ? { folderId, fileName: name, mimeType, type, properties } : { folderId, fileName: name, mimeType, type };
    const direct = local && (await this.target.directCopy?.copyFrom(local, contents[0], target, this.actor, guard.halted));
    let write: CheckedWrite;
    if (direct) {
      const sent: SentContent = this.verifier.targetHashesSha256 ? { sha256: direct.sha256, bytes: direct.size, targetHash: direct.sha256 } : { sha256: direct.sha256, bytes: direct.size };
      write = await this.checked(direct.id, sent, false, direct.sha256);
      if (this.stamps) await this.stamps.afterWrite(write.id, stamps?.get(contents[0]), this.actor);
    } else {
      write = await this.streamNew(guard, folderId, name, mimeType, contents[0], type, properties, stamps?.get(contents[0]));
    }
    for (let i = 1; i < contents.length; i++) write = await this.addVersion(guard, write.id, contents[i], name, mimeType, false, stamps?.get(contents[i]));
    return write;
  }

  private async streamNew(
    guard: CopyGuard,
    folderId: string,
    name: string,
    mimeType: string | undefined,
    sourceId: string,
    type?: string,
    properties?: Record<string, string>,
    stamp?: VersionStamp,
  ): Promise<CheckedWrite> {
    const first = await this.open(guard, sourceId);
    const hashing = this.verifier.passThrough();
    try {
      const content = through(first, hashing);
      const id = await this.target.createFile(
        { folderId, fileName: name, mimeType, content, ...(type !== undefined ? { type } : {}), ...(properties ? { properties } : {}), ...this.stamps?.withWrite(stamp) },
        this.actor,
      );
      const write = await this.checked(id, hashing.sent(), false);
      if (this.stamps) await this.stamps.afterWrite(id, stamp, this.actor);
      return write;
    } finally {
      // A target that refused before reading (it exists, bad name) leaves the stream open.
      if (!first.readableEnded) first.destroy();
    }
  }

  /** `addedVersion`: the document was there before this write (a failed check then removes only the version). */
  private async addVersion(guard: CopyGuard, targetId: string, sourceVersionId: string, name: string, mimeType: string | undefined, addedVersion: boolean, stamp?: VersionStamp): Promise<CheckedWrite> {
    const content = await this.open(guard, sourceVersionId);
    const hashing = this.verifier.passThrough();
    try {
      const id = await this.target.contentUpdate!.updateContent(targetId, { content: through(content, hashing), mimeType, fileName: name, ...this.stamps?.withWrite(stamp) }, this.actor);
      const write = await this.checked(id, hashing.sent(), addedVersion);
      if (this.stamps) await this.stamps.afterWrite(id, stamp, this.actor);
      return write;
    } finally {
      if (!content.readableEnded) content.destroy();
    }
  }

  /** The written copy checked by the job's `verify`; a failed check throws CopyMismatch. */
  private async checked(id: string, sent: SentContent, addedVersion: boolean, reportedByWrite?: string): Promise<CheckedWrite> {
    const write = { id, sent, verification: await this.verifier.verify(id, sent, reportedByWrite) };
    if (write.verification.mismatch !== undefined) throw new CopyMismatch(write, addedVersion);
    return write;
  }

  /** Opens a source stream that kill (or shutdown) can cut; a cut stream makes the target write fail, leaving nothing. */
  private async open(guard: CopyGuard, id: string): Promise<Readable> {
    if (guard.cancelled) throw new Cancelled();
    return guard.track(await this.source.openContent(id));
  }

  /** The target folder's id, made once per run and process (a failure is retried by the next document); the sync copier shares it. */
  ensureFolder(folderPath: string): Promise<string> {
    let p = this.folders.get(folderPath);
    if (!p) {
      p = this.target.folders ? this.target.folders.createFolder(folderPath, this.actor) : resolveFolderId(this.target, folderPath);
      p.catch(() => this.folders.delete(folderPath));
      this.folders.set(folderPath, p);
    }
    return p;
  }
}

/** The id of `name` in `folderPath` at `connector`, or undefined when there is none. */
export async function findId(connector: ContentConnector, folderPath: string, name: string): Promise<string | undefined> {
  try {
    return await connector.idByPath(folderPath, name);
  } catch (e) {
    if (e instanceof NotFoundError) return undefined;
    throw e;
  }
}

/** A document's failure as its outcome message: `CODE: message` for the gateway's typed errors. */
export function errorMessage(e: unknown): string {
  return e instanceof GatewayError ? `${e.code}: ${e.message}` : `INTERNAL: ${(e as Error)?.message ?? String(e)}`;
}

export async function resolveFolderId(connector: ContentConnector, folderPath: string): Promise<string> {
  if (folderPath === '/' || folderPath === '') return (await connector.rootFolder()).folderId;
  return connector.idByPath(path.dirname(folderPath), path.basename(folderPath));
}

/** The source stream through the hashing pass-through: an error or a cut (kill) of either side ends both, as the bare source did. */
function through(source: Readable, hashing: HashingPassThrough): Readable {
  // The target sees the error through `hashing`; nothing is left to report here.
  pipeline(source, hashing, () => undefined);
  return hashing;
}

export function joinPath(folder: string, rel: string): string {
  return folder === '/' ? `/${rel}` : `${folder}/${rel}`;
}

export { globToRegExp } from './document-filter';
