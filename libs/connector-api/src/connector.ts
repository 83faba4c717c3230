import type { Readable } from 'node:stream';
import type { ChangeFeedCapability } from './changes';
import type { ContentHashCapability } from './content-hash';
import type { NamingRules } from './naming-rules';
import type { PropertyDefinition } from './property-schema';
import type { IndexCapability, SearchCapability } from './search';
import type { MoveCapability } from './move';
import type { VersionStamp, VersionStampCapability } from './version-stamps';

/** Who is acting; drivers record it as creator/modifier and check-out holder. */
export interface Actor {
  username: string;
}

/** Inclusive byte range, already resolved against the content length. */
export interface ByteRange {
  start: number;
  end: number;
}

export type BaseType = 'document' | 'folder';

/** What a driver knows about one repository item. The api maps it to the spec shapes. */
export interface ItemInfo {
  id: string;
  name: string;
  /** Absolute path inside the repository, '/' separated, starting with '/'. */
  path: string;
  baseType: BaseType;
  /** Repository object type, e.g. 'cmis:document' or 'file'. */
  typeId?: string;
  mimeType?: string;
  size?: number;
  created?: Date;
  modified?: Date;
  createdBy?: string;
  modifiedBy?: string;
  description?: string;
  checkedOut?: boolean;
  checkedOutBy?: string;
  checkinComment?: string;
  /** Undefined when the repository does not count versions (rendered as -1). */
  versionCount?: number;
  versionLabel?: string;
  versionSeriesId?: string;
  /** Strong validator of the content (changes whenever the content does). */
  etag?: string;
  /** Custom (non-svc_) properties set on the item. */
  properties?: Record<string, string | null>;
}

/**
 * What serving a document's content needs: its ItemInfo without the path. Some repositories pay
 * a call of their own for the path (CMIS: getObjectParents), which a download never shows.
 */
export type ContentInfo = Omit<ItemInfo, 'path'>;

export interface VersionInfo {
  /** Id that reads this exact version through openContent/getItem. */
  id: string;
  name?: string;
  label: string;
  size: number;
  modified: Date;
  versionSeriesId: string;
  comment?: string;
  /** Who wrote this version, where the repository's version list says (a copy job carries it: version-stamps.ts). */
  modifiedBy?: string;
  /** This version's own custom properties, where the repository keeps them per version (VersioningCapability.versionProperties). */
  properties?: Record<string, string>;
}

export interface FolderPage {
  items: ItemInfo[];
  /** Opaque; present when more items follow. Printable ASCII: it travels in a response header. */
  nextCursor?: string;
  /**
   * Entries of the folder the connector cannot give an id (a filesystem name with `\`, a control
   * character, a percent-encoded separator), with why; on the first page only. A job records each
   * as a skipped document rather than leaving it unseen.
   */
  unaddressable?: UnaddressableEntry[];
}

export interface UnaddressableEntry {
  name: string;
  baseType: BaseType;
  reason: string;
}

export interface ListFolderOptions {
  /** Maximum items in this page; undefined means all. */
  limit?: number;
  cursor?: string;
}

export interface RepositoryDescription {
  repositoryId: string;
  repositoryName: string;
  repositoryDescription: string;
  rootFolderId: string;
}

export interface FolderInfo {
  folderId: string;
  folderName: string;
  folderPath: string;
}

export interface NewFile {
  folderId: string;
  fileName: string;
  type?: string;
  mimeType?: string;
  content: Readable;
  /** The version's original dates and authors, for a connector whose `versionStamps` group takes them with the write. */
  stamp?: VersionStamp;
  /**
   * Custom properties written with the content, in the same step. Only for a target whose
   * propertyUpdate group declares `propertiesOnCreate`; others are given none (set them after).
   */
  properties?: Record<string, string>;
}

export interface NewContent {
  content: Readable;
  mimeType?: string;
  fileName?: string;
  /** As NewFile.stamp. */
  stamp?: VersionStamp;
}

/** Optional capability groups: a driver sets the member when it implements the group. */
export interface ContentUpdateCapability {
  updateContent(id: string, input: NewContent, actor: Actor): Promise<string>;
}

export interface VersioningCapability {
  /**
   * Every version of the document, newest first (the current one first), as CMIS getAllVersions and
   * Graph list them. The order is the repository's own, not a sort by date: versions written within
   * one second (SharePoint's dates are to the second) or on skewed clocks would tie or swap.
   */
  listVersions(id: string): Promise<VersionInfo[]>;
  /**
   * Optional: each version keeps its own custom properties, listed as VersionInfo.properties, and
   * propertyUpdate.updateProperties of a document just written sets those of that newest version only,
   * adding none (CMIS). Absent where the properties are the document's, whichever its version.
   */
  readonly versionProperties?: boolean;
}

export interface CheckInOutCapability {
  checkOut(id: string, actor: Actor): Promise<string>;
  checkIn(id: string, actor: Actor, comment?: string): Promise<string>;
}

export interface FolderCapability {
  /** Creates the folder at an absolute path, and any missing parents. */
  createFolder(path: string, actor: Actor): Promise<string>;
  /** Present only where folders can be deleted by path (filesystem). */
  deleteFolder?(path: string, actor: Actor): Promise<string>;
}

export interface PropertyUpdateCapability {
  updateProperties(id: string, properties: Record<string, string>, actor: Actor): Promise<string>;
  /**
   * Optional: createFile (and directCopy.copyFrom) write NewFile.properties with the content in one
   * step, checked as updateProperties checks them: a refused property is updateProperties' error
   * (an InvalidArgumentError naming it) and nothing is written.
   */
  readonly propertiesOnCreate?: boolean;
  /** Optional: the properties a document of `type` (a key of types(); default: the type createFile uses) has, writable or not (property-schema.ts). */
  describeProperties?(type?: string): Promise<PropertyDefinition[]>;
}

export interface AclCapability {
  getAcl(id: string): Promise<string[]>;
  /** Replaces the permissions of each given principal; returns the resulting entries. */
  applyAcl(id: string, entries: Record<string, string[]>, actor: Actor): Promise<string[]>;
  /**
   * Removes the principals; returns those removed. A principal the item only inherits is a ConflictError
   * naming where it is inherited from, unless `breakInheritance` (then the item gets its own copy of the
   * inherited entries first, as SharePoint's breakroleinheritance(copyRoleAssignments=true) does).
   */
  removeAcl(id: string, principals: string[], actor: Actor, options?: AclRemoveOptions): Promise<string[]>;
}

export interface AclRemoveOptions {
  breakInheritance?: boolean;
}

export interface RelationshipCapability {
  getRelationships(id: string): Promise<unknown[]>;
  createRelationship(sourceId: string, targetId: string, type: string, actor: Actor): Promise<string>;
}

export interface SiteCapability {
  getAllSites(): Promise<unknown[]>;
  getSubSites(siteId: string): Promise<unknown[]>;
  getLibrariesForSite(siteId: string): Promise<unknown[]>;
}

/**
 * Content kept as plain files on a local disk, read as they are: offering this group says that
 * reading a document's file is what openContent does. The download offload
 * (GATEWAY_ACCEL_REDIRECT / GATEWAY_SENDFILE_HEADER) hands such a file to the reverse proxy, and a
 * target's `directCopy` copies it, instead of reading openContent. Whatever makes openContent read
 * otherwise (a test's fault injection wrapping it) withdraws this group (`localFiles: undefined`).
 */
export interface LocalFilesCapability {
  /** The real folder every such file lies under; the offload maps it to one internal location. */
  readonly root: string;
  /** The file that holds the content of document `id` (a version id: that version), located as openContent would. */
  localPath(id: string): Promise<string>;
  /**
   * Where the current content of document `id` lies, without looking: undefined when `id` names a
   * version. The file is the document only if it is a regular file and each of `foldersAbove` a
   * real folder (lstat, no link): the checks openContent makes, left to the caller, which makes
   * them beside the event loop (the filesystem connector's copy thread). An id that does not
   * decode throws as openContent would.
   */
  unverifiedFile(id: string): UnverifiedFile | undefined;
}

export interface UnverifiedFile {
  file: string;
  /** The folders between `root` and the file, outermost first (both excluded). */
  foldersAbove: readonly string[];
}

/**
 * Copies a document of a `localFiles` source without streaming it through the gateway (a job
 * between two filesystem connectors: the kernel copies, on a thread of its own). Internal to the
 * gateway, not a spec capability, so not reported among the capabilities.
 */
export interface DirectCopyCapability {
  /**
   * What `createFile({ ...target, content: await openContent(sourceId) })` does, with the same
   * errors; undefined when this connector cannot copy that document directly (a version id, a
   * large file): the caller then streams it. `signal`: a copy still waiting to start when it aborts
   * gives up, rejecting with its reason (a job's pause or kill); one under way completes.
   */
  copyFrom(source: LocalFilesCapability, sourceId: string, target: Omit<NewFile, 'content'>, actor: Actor, signal?: AbortSignal): Promise<DirectCopyDone | undefined>;
}

/** A document copied by `directCopy`: its new id, and the SHA-256 of the bytes copied, hashed as they were read from the source. */
export interface DirectCopyDone {
  id: string;
  /** Lower-case hex. */
  sha256: string;
  /** Bytes copied. */
  size: number;
}

export interface CopyCapability {
  createFileFromItem(sourceId: string, folderId: string, fileName: string, actor: Actor): Promise<string>;
}

/**
 * What every connector is, whatever it connects to: identity, configuration
 * safe to show, a health probe, and the capability groups it implements.
 * Content operations and search are groups of this one interface: a search
 * engine does not fake createFile, and a repository does not fake search.
 */
export interface Connector {
  readonly id: string;
  readonly typeId: string;
  readonly description: string;
  /** Connection parameters safe to show to clients (never secrets). */
  readonly publicParams: Record<string, unknown>;

  /** Throws an upstream error when the repository or engine cannot be reached. */
  checkHealth(): Promise<void>;

  /** Select, raw query and collection health over a search engine (spec 4.6). */
  readonly search?: SearchCapability;
  /** Writes and deletes of search documents (the indexing jobs: apps/api/src/jobs/document-indexer.ts). */
  readonly index?: IndexCapability;

  close?(): Promise<void>;
}

/**
 * The one interface every content connector implements. The core operations
 * are mandatory; everything a repository kind may lack is an optional group.
 */
export interface ContentConnector extends Connector {
  describeRepository(): Promise<RepositoryDescription>;
  rootFolder(): Promise<FolderInfo>;
  /** Document types: key usable as `type`, value a display name. */
  types(): Promise<Record<string, string>>;

  getItem(id: string): Promise<ItemInfo>;
  /**
   * Optional: getItem of many documents at once, where the repository reads them together (the
   * filesystem: one records query per folder). An id missing from the answer is one getItem would
   * answer otherwise (an error, a folder, a version id): the caller asks getItem for it.
   */
  getItems?(ids: readonly string[]): Promise<Map<string, ItemInfo>>;
  /**
   * Optional: getItem without the path, where leaving it out saves the repository work (a
   * download asks this before openContent). Must agree with getItem on every other field.
   */
  contentInfo?(id: string): Promise<ContentInfo>;
  openContent(id: string, range?: ByteRange): Promise<Readable>;
  idByPath(folderPath: string, fileName: string): Promise<string>;
  listFolder(folderId: string, options?: ListFolderOptions): Promise<FolderPage>;
  /**
   * Optional: the folder from `cursor` (or its start) to its end, in batches of at most
   * `batchSize` items, in listFolder's order. For repositories where resuming by cursor costs a
   * re-read of the whole folder (a directory has no cursor); others are listed page by page with
   * listFolder. Errors about the folder itself come with the first batch.
   */
  folderBatches?(folderId: string, options: { batchSize: number; cursor?: string }): AsyncIterable<ItemInfo[]>;
  createFile(input: NewFile, actor: Actor): Promise<string>;
  deleteItem(id: string, allVersions: boolean, actor: Actor): Promise<string>;

  readonly contentUpdate?: ContentUpdateCapability;
  readonly versioning?: VersioningCapability;
  readonly checkInOut?: CheckInOutCapability;
  readonly folders?: FolderCapability;
  readonly propertyUpdate?: PropertyUpdateCapability;
  readonly acls?: AclCapability;
  readonly relationships?: RelationshipCapability;
  readonly sites?: SiteCapability;
  readonly copy?: CopyCapability;
  readonly localFiles?: LocalFilesCapability;
  readonly directCopy?: DirectCopyCapability;
  /** The hash the repository reports of a document's content (copy jobs' `verify: hash`; content-hash.ts). */
  readonly contentHash?: ContentHashCapability;
  /** What changed since a token, instead of re-listing (sync jobs; changes.ts). */
  readonly changeFeed?: ChangeFeedCapability;
  /** The names this repository accepts (naming-rules.ts), for copy jobs' `names`; absent: every name createFile takes. */
  readonly namingRules?: NamingRules;
  /** Moves and renames a document in place (sync jobs; move.ts). */
  readonly move?: MoveCapability;
  /** Keeps a written version's original dates and authors (copy jobs' copyVersions; version-stamps.ts). */
  readonly versionStamps?: VersionStampCapability;
}

/** A connector that implements the search group. */
export type SearchConnector = Connector & { readonly search: SearchCapability };

/** Whether a connector has the content operations (content connectors are recognised by their core operations). */
export function isContentConnector(connector: Connector): connector is ContentConnector {
  return typeof (connector as Partial<ContentConnector>).getItem === 'function';
}

/** A connector definition as declared in configuration. */
export interface ConnectorDefinition {
  id: string;
  typeId: string;
  description: string;
  params: Record<string, unknown>;
}

export interface ConnectorContext {
  /** The gateway's data directory, for drivers that keep local state. */
  dataDir: string;
}

/** One per connector kind; the api gathers them all in a single factory provider. */
export interface ConnectorType {
  readonly typeId: string;
  /** Validates params (throwing InvalidArgumentError naming the param) and builds the driver. */
  create(definition: ConnectorDefinition, context: ConnectorContext): Promise<Connector>;
}

