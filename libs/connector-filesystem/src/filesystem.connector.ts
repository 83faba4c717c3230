import { constants, lstatSync, renameSync } from 'node:fs';
import * as fsp from 'node:fs/promises';
import type { Readable } from 'node:stream';
import {
  UpstreamError,
  UpstreamUnavailableError,
  group,
  type Actor,
  type ByteRange,
  type CheckInOutCapability,
  type ConnectorDefinition,
  type ContentConnector,
  type ContentUpdateCapability,
  type ContentHashCapability,
  type DirectCopyCapability,
  type FolderCapability,
  type FolderInfo,
  type FolderPage,
  type ItemInfo,
  type ListFolderOptions,
  nameViolations,
  type NamingRules,
  type LocalFilesCapability,
  type MoveCapability,
  type NewFile,
  type PropertyUpdateCapability,
  type RepositoryDescription,
  type UnverifiedFile,
  type VersioningCapability,
  type VersionStampCapability,
} from '@gateway/connector-api';
import { ContentHashes } from './content-hashes';
import { openContent } from './content-reads';
import { DirectCopies } from './direct-copies';
import { DocumentChanges } from './document-changes';
import { DocumentMoves } from './document-moves';
import { FolderChanges } from './folder-changes';
import { FolderListing } from './folder-listing';
import { FILESYSTEM_NAMING_RULES, WINDOWS_FILESYSTEM_NAMING_RULES } from './naming-rules';
import { errnoCode, mapFsError } from './fs-errors';
import { DOCUMENT_TYPE, documentItem, folderItem } from './item-info';
import { MetadataStore, identityOf, latestVersion, unlinkIfPresent } from './metadata-store';
import { decodeId, encodeId, invalid, joinRel, parseFolderPath, parseName, repoPath } from './paths';
import { describeDocuments } from './item-batches';
import { initialProperties } from './properties';
import { VersionStampsOnFiles } from './version-stamps';
import { RepositoryFiles, alreadyExists, assertNotHeldByOther, checkType, documentLocks, placeNew } from './repository-files';

export { encodeId } from './paths';
export { DIRECT_COPY_MAX_BYTES } from './direct-copies';

/**
 * A real folder as a repository. Content is the files themselves, so files
 * dropped in by hand are part of it; what a plain folder cannot express
 * (versions, check-out, authors, custom properties) lives in the hidden
 * metadata folder (see MetadataStore), which no id or path can reach.
 *
 * Symbolic links are not part of the repository: they are left out of
 * listings, and an id or path that reaches anything through a link is not
 * found. This holds for links pointing inside the root too, so there is one
 * rule to reason about instead of a containment check per use.
 *
 * The core calls are here; each capability group is a room of its own (document-changes.ts,
 * folder-changes.ts, direct-copies.ts, folder-listing.ts, content-reads.ts) over the shared
 * RepositoryFiles (repository-files.ts).
 *
 * Threat model: clients of the API. Someone who can rename entries inside the
 * root while a request runs could race the checks; that is a local user with
 * write access to the repository, out of scope.
 */
export class FilesystemConnector implements ContentConnector {
  readonly id: string;
  readonly typeId = 'filesystem';
  readonly description: string;
  readonly publicParams: Record<string, unknown>;

  private readonly store: MetadataStore;
  private readonly files: RepositoryFiles;
  private readonly listing: FolderListing;
  private readonly changes: DocumentChanges;
  private readonly copies: DirectCopies;

  readonly contentUpdate: ContentUpdateCapability;
  readonly versioning: VersioningCapability;
  readonly checkInOut: CheckInOutCapability;
  readonly folders: Required<FolderCapability>;
  readonly propertyUpdate: PropertyUpdateCapability;
  readonly directCopy: DirectCopyCapability;
  readonly contentHash: ContentHashCapability;
  readonly localFiles: LocalFilesCapability;
  readonly namingRules: NamingRules;
  readonly move: MoveCapability;
  readonly versionStamps: VersionStampCapability;

  /** `root` must already be a real path (no links); call init() before use. `windowsNames`: refuse names Windows cannot hold too. */
  constructor(
    definition: ConnectorDefinition,
    readonly root: string,
    windowsNames = false,
  ) {
    this.id = definition.id;
    this.description = definition.description;
    this.publicParams = { root, ...(windowsNames ? { windowsNames } : {}) };
    this.namingRules = windowsNames ? WINDOWS_FILESYSTEM_NAMING_RULES : FILESYSTEM_NAMING_RULES;
    this.store = new MetadataStore(root);
    this.files = new RepositoryFiles(root, this.store);
    this.listing = new FolderListing(this.files);
    this.changes = new DocumentChanges(this.files);
    this.copies = new DirectCopies(this.files);
    this.contentUpdate = group(this.changes, 'updateContent');
    this.versioning = group(this.changes, 'listVersions');
    this.checkInOut = group(this.changes, 'checkOut', 'checkIn');
    // createFile and copyFrom write the first record with the properties (properties.ts initialProperties).
    this.propertyUpdate = { ...group(this.changes, 'updateProperties'), propertiesOnCreate: true };
    this.folders = group(new FolderChanges(this.files), 'createFolder', 'deleteFolder');
    this.directCopy = group(this.copies, 'copyFrom');
    this.move = group(new DocumentMoves(this.files), 'moveItem');
    this.versionStamps = new VersionStampsOnFiles(this.files);
    this.contentHash = new ContentHashes(this.files.written, (id) => this.localPath(id));
    this.localFiles = { root, localPath: (id) => this.localPath(id), unverifiedFile: (id) => this.unverifiedFile(id) };
  }

  init(): Promise<void> {
    return this.store.init();
  }

  async close(): Promise<void> {
    this.store.close();
    this.copies.forget();
  }

  async describeRepository(): Promise<RepositoryDescription> {
    return {
      repositoryId: this.id,
      repositoryName: this.files.rootName,
      repositoryDescription: this.description || `Filesystem repository at ${this.root}`,
      rootFolderId: encodeId(''),
    };
  }

  async rootFolder(): Promise<FolderInfo> {
    return { folderId: encodeId(''), folderName: this.files.rootName, folderPath: '/' };
  }

  async types(): Promise<Record<string, string>> {
    return { [DOCUMENT_TYPE]: 'File' };
  }

  async checkHealth(): Promise<void> {
    try {
      await fsp.access(this.root, constants.R_OK | constants.W_OK);
      await fsp.access(this.store.base, constants.R_OK | constants.W_OK);
    } catch (e) {
      throw new UpstreamUnavailableError(`Repository folder ${this.root} is not accessible (${errnoCode(e) ?? 'error'})`);
    }
  }

  // ---- reading ------------------------------------------------------------

  async getItem(id: string): Promise<ItemInfo> {
    const { rel, version } = decodeId(id, 'id');
    const located = await this.files.locate(rel, id);
    if (located.stat.isDirectory()) {
      if (version !== undefined) throw invalid('id', 'folders have no versions');
      return folderItem(rel, located.stat, this.files.rootName);
    }
    const meta = await this.files.currentMeta(located);
    if (version === undefined) return documentItem({ id, rel, stat: located.stat, meta, record: latestVersion(meta) });
    const target = await this.files.versionTarget(located, meta, version, id);
    return documentItem({ id, rel, stat: target.stat, meta, record: target.record });
  }

  /** getItem of many documents, each folder's records in one query (item-batches.ts). */
  getItems(ids: readonly string[]): Promise<Map<string, ItemInfo>> {
    return describeDocuments(this.files, ids);
  }

  openContent(id: string, range?: ByteRange): Promise<Readable> {
    return openContent(this.files, id, range);
  }

  /** The file openContent would read; reached without links (locate), so the offload serves nothing outside the root. */
  private async localPath(id: string): Promise<string> {
    const { rel, version } = decodeId(id, 'id');
    const located = await this.files.locate(rel, id);
    if (located.stat.isDirectory()) throw invalid('id', `'${id}' names a folder; a document is expected`);
    if (version === undefined) return located.abs;
    return (await this.files.versionTarget(located, await this.files.currentMeta(located), version, id)).file;
  }

  /** Where a current document's file would be, for the copy thread to check as openContent does (direct-copy.ts). */
  private unverifiedFile(id: string): UnverifiedFile | undefined {
    const { rel, version } = decodeId(id, 'id');
    if (version !== undefined) return undefined;
    return { file: this.files.abs(rel), foldersAbove: this.files.foldersAbove(rel) };
  }

  async idByPath(folderPath: string, fileName: string): Promise<string> {
    const folderRel = parseFolderPath(folderPath, 'folderPath');
    const rel = joinRel(folderRel, parseName(fileName, 'fileName', folderRel));
    await this.files.locate(rel, repoPath(rel));
    return encodeId(rel);
  }

  listFolder(folderId: string, options?: ListFolderOptions): Promise<FolderPage> {
    return this.listing.listFolder(folderId, options);
  }

  folderBatches(folderId: string, options: { batchSize: number; cursor?: string }): AsyncGenerator<ItemInfo[]> {
    return this.listing.folderBatches(folderId, options);
  }

  // ---- writing ------------------------------------------------------------

  async createFile(input: NewFile, actor: Actor): Promise<string> {
    checkType(input.type);
    const folderRel = decodeId(input.folderId, 'folderId').rel;
    const rel = joinRel(folderRel, parseName(input.fileName, 'fileName', folderRel));
    // With windowsNames, what Windows refuses besides what paths.ts refuses everywhere.
    const problems = nameViolations(input.fileName, this.namingRules);
    if (problems.length > 0) throw invalid('fileName', problems.join('; '));
    const properties = initialProperties(input.properties);
    await this.files.locateFolder(input.folderId, 'folderId');
    const abs = this.files.abs(rel);
    // Refuse before reading a possibly large upload; checked again under the lock.
    if (this.files.exists(abs, rel)) throw alreadyExists(rel);
    const staged = await this.files.stage(input.content, repoPath(rel));
    try {
      return await documentLocks.run(abs, async () => {
        // A record without a file belongs to a document deleted by hand: the new one starts its own
        // history. (Usually there is none, and link() below refuses a name taken meanwhile by itself.)
        if (this.store.has(rel)) {
          if (this.files.exists(abs, rel)) throw alreadyExists(rel);
          await this.store.remove(rel);
        }
        // The folder was checked above; one removed since makes link() fail with ENOENT (404).
        placeNew(staged, abs, rel);
        await this.files.recordNew(rel, lstatSync(abs, { bigint: true }), actor, input.mimeType, properties);
        return encodeId(rel);
      });
    } catch (e) {
      throw mapFsError(e, repoPath(rel), 'fileName');
    } finally {
      unlinkIfPresent(staged);
    }
  }

  async deleteItem(id: string, allVersions: boolean, actor: Actor): Promise<string> {
    const { rel } = await this.files.writableDocument(id, 'id', 'folders are deleted by path');
    return this.files.mutate(rel, id, 'id', async ({ abs, meta }) => {
      assertNotHeldByOther(meta, actor, rel);
      // Only an explicit false keeps older versions (the spec's default is true).
      if (allVersions !== false || meta.versions.length === 1) {
        // On the thread pool: an unlink can take a millisecond in the kernel (a sync run's overwrites and deletions).
        await fsp.unlink(abs);
        await this.store.remove(rel);
        return encodeId(rel);
      }
      const previous = meta.versions[meta.versions.length - 2];
      try {
        renameSync(this.store.versionFile(rel, previous.n), abs);
      } catch (e) {
        if (errnoCode(e) === 'ENOENT') throw new UpstreamError(`Version ${previous.n} of '${repoPath(rel)}' is missing from the metadata folder`);
        throw e;
      }
      meta.versions.pop();
      meta.current = identityOf(lstatSync(abs, { bigint: true }));
      await this.store.write(rel, meta);
      return encodeId(rel);
    });
  }
}
