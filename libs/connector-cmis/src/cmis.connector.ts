import { Readable, Transform } from 'node:stream';
import {
  ConflictError,
  GatewayError,
  InvalidArgumentError,
  NotFoundError,
  NotSupportedError,
  UpstreamError,
  type AclCapability,
  type Actor,
  type ByteRange,
  type CheckInOutCapability,
  type ConnectorDefinition,
  type ContentConnector,
  type ContentInfo,
  type ContentUpdateCapability,
  type FolderCapability,
  type FolderInfo,
  type FolderPage,
  type ItemInfo,
  type ListFolderOptions,
  type NewContent,
  type NewFile,
  type PropertyUpdateCapability,
  type RepositoryDescription,
  type VersionInfo,
  type VersioningCapability,
  sliceBytes,
  group,
} from '@gateway/connector-api';
import { CmisClient, SourceStreamError, type AceChange, type CmisAcl, type CmisProperties, type CmisRepositoryInfo, type CmisTypeDefinition, type CmisTypeTreeNode } from './cmis-client';
import {
  LISTING_FILTER,
  VERSION_SEPARATOR,
  gatewayId,
  isDocument,
  isFolder,
  joinPath,
  objectId,
  str,
  toItemInfo,
  toVersionInfo,
  versionLabelOf,
} from './item-info';
import type { CmisParams } from './params';

const MAX_COMMENT_LENGTH = 4000;
const MAX_NAME_LENGTH = 1024;
const TYPES_TTL_MS = 60_000;
/** How long getItem's resolution of an id to one CMIS object is kept for the openContent that follows it. */
const PIN_TTL_MS = 10_000;
const MAX_PINS = 1000;
const MAX_KNOWN_FOLDERS = 10_000;
/** Pages of one listing asked for at the same time once the number of children is known. */
const PAGE_PREFETCH = 4;
const CURSOR = /^s([1-9]\d{0,11})$/;
/** Request media types that describe the request, not the document. */
const GENERIC_MEDIA_TYPES = new Set(['application/octet-stream', 'application/x-www-form-urlencoded']);

/** What the repository said about itself at the first contact; decides which capability groups exist. */
interface RepositoryState {
  info: CmisRepositoryInfo;
  acls: boolean;
  contentUpdate: boolean;
  checkInOut: boolean;
  orderBy?: string;
}

type Group = 'acls' | 'contentUpdate' | 'checkInOut';

/** Thrown by connect() when the definition does not fit the repository (caught by the connector type as a config error). */
export class CmisConfigurationError extends InvalidArgumentError {}

/**
 * A CMIS 1.1 repository through its browser binding.
 *
 * Ids: a document's id is its version series id, stable across check-ins;
 * `<series>;<label>` names one version (spec 2.4); folders use their object id.
 *
 * Capability groups follow the repository: at the first contact (at start-up
 * when it is reachable, else at the first call) repositoryInfo and the type
 * tree decide. acls needs capabilityACL=manage; contentUpdate needs
 * capabilityContentStreamUpdatability other than none; checkInOut needs a
 * versionable document type. Until that first contact the groups are
 * reported present and check again when called.
 */
export class CmisConnector implements ContentConnector {
  readonly id: string;
  readonly typeId = 'cmis';
  readonly description: string;
  readonly publicParams: Record<string, unknown>;
  readonly client: CmisClient;

  readonly versioning: VersioningCapability = group(this, 'listVersions');
  readonly folders: FolderCapability = group(this, 'createFolder');
  readonly propertyUpdate: PropertyUpdateCapability = group(this, 'updateProperties');

  private readonly contentUpdateGroup: ContentUpdateCapability = group(this, 'updateContent');
  private readonly checkInOutGroup: CheckInOutCapability = group(this, 'checkOut', 'checkIn');
  private readonly aclGroup: AclCapability = group(this, 'getAcl', 'applyAcl', 'removeAcl');

  private state?: RepositoryState;
  private connecting?: Promise<RepositoryState>;
  private typeCache?: { at: number; documentTypes: Map<string, CmisTypeDefinition> };
  private readonly knownFolders = new Set<string>();
  private readonly pins = new Map<string, { objectId: string; until: number }>();

  constructor(
    definition: ConnectorDefinition,
    readonly params: CmisParams,
  ) {
    this.id = definition.id;
    this.description = definition.description;
    const { password: _secret, ...visible } = params;
    this.publicParams = visible;
    this.client = new CmisClient(params);
  }

  get contentUpdate(): ContentUpdateCapability | undefined {
    return this.offers('contentUpdate') ? this.contentUpdateGroup : undefined;
  }

  get checkInOut(): CheckInOutCapability | undefined {
    return this.offers('checkInOut') ? this.checkInOutGroup : undefined;
  }

  get acls(): AclCapability | undefined {
    return this.offers('acls') ? this.aclGroup : undefined;
  }

  /** Reads repositoryInfo and the type tree once; retried at the next call when it failed. */
  connect(): Promise<RepositoryState> {
    if (this.state) return Promise.resolve(this.state);
    this.connecting ??= this.firstContact().then(
      (state) => {
        this.state = state;
        this.connecting = undefined;
        return state;
      },
      (e: unknown) => {
        this.connecting = undefined;
        throw e;
      },
    );
    return this.connecting;
  }

  // ---- repository -------------------------------------------------------------

  async describeRepository(): Promise<RepositoryDescription> {
    const { info } = await this.connected();
    return {
      repositoryId: info.repositoryId,
      repositoryName: info.repositoryName,
      repositoryDescription: info.repositoryDescription || this.description,
      rootFolderId: info.rootFolderId,
    };
  }

  async rootFolder(): Promise<FolderInfo> {
    const { info } = await this.connected();
    const root = await this.client.getObject(info.rootFolderId, { filter: 'cmis:objectId,cmis:name,cmis:path' });
    return { folderId: info.rootFolderId, folderName: str(root.succinctProperties, 'cmis:name') ?? '', folderPath: '/' };
  }

  async types(): Promise<Record<string, string>> {
    await this.connected();
    const types = await this.documentTypes();
    const out: Record<string, string> = {};
    for (const type of types.values()) if (type.creatable !== false) out[type.id] = type.displayName || type.id;
    return out;
  }

  async checkHealth(): Promise<void> {
    await this.client.repositoryInfo();
  }


  // ---- reading ----------------------------------------------------------------

  async getItem(id: string): Promise<ItemInfo> {
    checkId(id, 'id');
    const version = splitVersion(id);
    // The path of a document needs its parent folder: asked for in parallel.
    const parents = this.knownFolders.has(id)
      ? undefined
      : this.client.getParents(version?.series ?? id, { filter: 'cmis:objectId,cmis:path' }).catch(() => undefined);
    const props = await this.resolve(id, 'id');
    if (isFolder(props)) return toItemInfo(props, objectId(props), str(props, 'cmis:path') ?? '/');
    this.pin(id, objectId(props));
    const folderPath = str((await parents)?.[0]?.object.succinctProperties ?? {}, 'cmis:path') ?? '/';
    return toItemInfo(props, version ? id : gatewayId(props), joinPath(folderPath, str(props, 'cmis:name') ?? ''));
  }

  /** getItem without the path: one CMIS call instead of two (getObjectParents is only for the path). */
  async contentInfo(id: string): Promise<ContentInfo> {
    checkId(id, 'id');
    const props = await this.resolve(id, 'id');
    if (isFolder(props)) return toItemInfo(props, objectId(props), str(props, 'cmis:path') ?? '/');
    this.pin(id, objectId(props));
    const { path: _unknown, ...info } = toItemInfo(props, splitVersion(id) ? id : gatewayId(props), '');
    return info;
  }

  async openContent(id: string, range?: ByteRange): Promise<Readable> {
    checkId(id, 'id');
    if (range !== undefined) checkRange(range);
    let target = this.takePin(id);
    if (target === undefined) {
      const props = await this.resolve(id, 'id');
      if (!isDocument(props)) throw new InvalidArgumentError('id', `Invalid parameter 'id': '${id}' is not a document`);
      target = objectId(props);
    }
    let response;
    try {
      response = await this.client.getContent(target, range, { id });
    } catch (e) {
      // A document without a content stream reads as empty.
      if (e instanceof GatewayError && e.details.cmisException === 'constraint') return Readable.from([]);
      throw e;
    }
    if (range !== undefined && response.status === 200) return response.stream.pipe(sliceBytes(range.start, range.end - range.start + 1));
    return response.stream;
  }

  async idByPath(folderPath: string, fileName: string): Promise<string> {
    const folder = parseAbsolutePath(folderPath, 'folderPath');
    const name = checkName(fileName, 'fileName');
    const found = await this.client.getObjectByPath(joinPath(toPath(folder), name), { filter: 'cmis:objectId,cmis:baseTypeId,cmis:versionSeriesId' });
    return gatewayId(found.succinctProperties);
  }

  async listFolder(folderId: string, options: ListFolderOptions = {}): Promise<FolderPage> {
    checkId(folderId, 'id');
    const limit = checkLimit(options.limit);
    const skip = options.cursor === undefined ? 0 : decodeCursor(options.cursor);
    const state = await this.connected();
    // The folder's own path (item paths are built from it) is asked for alongside the first page.
    const folderP = this.client.getObject(folderId, { id: folderId, filter: 'cmis:objectId,cmis:baseTypeId,cmis:path' });
    folderP.catch(() => undefined);
    const items: ItemInfo[] = [];
    const pending: CmisProperties[] = [];
    const want = limit ?? Number.POSITIVE_INFINITY;
    const fetchPage = (skipCount: number, maxItems: number) =>
      this.client.getChildren(folderId, { maxItems, skipCount, filter: LISTING_FILTER, orderBy: state.orderBy }, { id: folderId, parameter: 'id' });
    let page;
    try {
      page = await fetchPage(skip, Math.min(this.params.pageSize, want));
    } catch (e) {
      // A missing folder, or a document, is better said by getObject.
      if (!isFolder((await folderP).succinctProperties)) throw notAFolder(folderId);
      throw e;
    }
    pending.push(...page.objects.map((o) => o.succinctProperties));
    let offset = skip + page.objects.length;
    let more = page.hasMoreItems && page.objects.length > 0;
    // When the server says how many children there are, the remaining pages are asked for a few at a time instead of one after the other.
    const total = page.numItems;
    while (more && offset - skip < want) {
      const end = Math.min(skip + want, total !== undefined && total > offset ? total : offset + this.params.pageSize);
      const offsets: number[] = [];
      for (let at = offset; at < end && offsets.length < PAGE_PREFETCH; at += this.params.pageSize) offsets.push(at);
      const pages = await Promise.all(offsets.map((at) => fetchPage(at, Math.min(this.params.pageSize, skip + want - at))));
      for (const [i, next] of pages.entries()) {
        pending.push(...next.objects.map((o) => o.succinctProperties));
        offset += next.objects.length;
        more = next.hasMoreItems && next.objects.length > 0;
        // A short page (children removed meanwhile) ends this round: later offsets would skip items.
        if (!more || (i < pages.length - 1 && next.objects.length < this.params.pageSize)) break;
      }
    }
    const folder = (await folderP).succinctProperties;
    if (!isFolder(folder)) throw notAFolder(folderId);
    this.rememberFolder(folderId);
    const folderPath = str(folder, 'cmis:path') ?? '/';
    for (const props of pending) {
      // Relationships, policies and items are not part of a folder listing.
      if (!isFolder(props) && !isDocument(props)) continue;
      const name = str(props, 'cmis:name') ?? '';
      items.push(toItemInfo(props, gatewayId(props), isFolder(props) ? (str(props, 'cmis:path') ?? joinPath(folderPath, name)) : joinPath(folderPath, name), false));
    }
    return { items, ...(more && offset > skip ? { nextCursor: encodeCursor(offset) } : {}) };
  }

  async listVersions(id: string): Promise<VersionInfo[]> {
    checkId(id, 'id');
    const version = splitVersion(id);
    const versions = await this.versionsOf(version?.series ?? id, id);
    if (version && !versions.some((p) => versionLabelOf(p) === version.label)) throw new NotFoundError('item', id);
    return versions.map(toVersionInfo);
  }

  // ---- writing ----------------------------------------------------------------

  async createFile(input: NewFile, actor: Actor): Promise<string> {
    checkId(input.folderId, 'folderId');
    const name = checkName(input.fileName, 'fileName');
    await this.connected();
    const typeId = input.type ?? this.params.documentType;
    const type = (await this.documentTypes()).get(typeId);
    if (!type || type.creatable === false) {
      throw new InvalidArgumentError('type', `Invalid parameter 'type': '${typeId}' is not a document type of this repository (the types call lists them)`);
    }
    const user = this.userFor(actor);
    const created = await uploading(() =>
      this.client.createDocument(
        input.folderId,
        { 'cmis:objectTypeId': type.id, 'cmis:name': name },
        { stream: input.content, mimeType: declaredMimeType(input.mimeType) ?? 'application/octet-stream', fileName: name },
        type.versionable ? 'major' : 'none',
        { as: user, id: input.folderId, parameter: 'folderId' },
      ),
    );
    return gatewayId(created.succinctProperties);
  }

  async updateContent(id: string, input: NewContent, actor: Actor): Promise<string> {
    await this.requireGroup('contentUpdate', 'updateFile');
    const props = await this.writableDocument(id, 'fileId');
    const user = this.userFor(actor);
    const content = {
      stream: input.content,
      mimeType: declaredMimeType(input.mimeType) ?? str(props, 'cmis:contentStreamMimeType') ?? 'application/octet-stream',
      fileName: input.fileName ?? str(props, 'cmis:name') ?? 'content',
    };
    const call = { as: user, id, parameter: 'fileId' };
    if (isCheckedOut(props)) {
      // The holder changes the private working copy; the check-in makes the version.
      const pwc = await this.ownWorkingCopy(props, user, id);
      await uploading(() => this.client.setContentStream(pwc, content, call));
      return gatewayId(props);
    }
    const type = await this.typeOf(props);
    if (!type.versionable) {
      await uploading(() => this.client.setContentStream(objectId(props), content, call));
      return gatewayId(props);
    }
    // A versionable document gets a new version for every content update: check out, set, check in.
    const pwc = objectId((await this.client.checkOut(objectId(props), call)).succinctProperties);
    try {
      await uploading(() => this.client.setContentStream(pwc, content, call));
      await this.client.checkIn(pwc, undefined, call);
    } catch (e) {
      await this.client.cancelCheckOut(pwc, call).catch(() => undefined);
      throw e;
    }
    return gatewayId(props);
  }

  async updateProperties(id: string, properties: Record<string, string>, actor: Actor): Promise<string> {
    if (properties === null || typeof properties !== 'object' || Object.keys(properties).length === 0) {
      throw new InvalidArgumentError('properties', "Invalid parameter 'properties': give at least one property");
    }
    const props = await this.writableDocument(id, 'fileId');
    const user = this.userFor(actor);
    const holding = isCheckedOut(props) ? (this.assertHolder(props, user), true) : false;
    const type = await this.typeOf(props, true);
    const changes: Record<string, string | string[] | null> = {};
    for (const [name, value] of Object.entries(properties)) {
      const definition = type.propertyDefinitions?.[name];
      if (!definition) throw new InvalidArgumentError(name, `Invalid parameter '${name}': not a property of type '${type.id}'`, 'INVALID_PROPERTY');
      if (definition.updatability === 'whencheckedout' && !holding) {
        throw new InvalidArgumentError(name, `Invalid parameter '${name}': it can only be changed while the document is checked out`, 'INVALID_PROPERTY');
      }
      if (definition.updatability !== 'readwrite' && definition.updatability !== 'whencheckedout') {
        throw new InvalidArgumentError(name, `Invalid parameter '${name}': the property is read-only`, 'INVALID_PROPERTY');
      }
      changes[name] = convertValue(name, value, definition.propertyType, definition.cardinality === 'multi');
    }
    const target = holding ? await this.ownWorkingCopy(props, user, id) : objectId(props);
    await this.client.updateProperties(target, changes, { as: user, id, parameter: 'properties' });
    return gatewayId(props);
  }

  async checkOut(id: string, actor: Actor): Promise<string> {
    await this.requireGroup('checkInOut', 'checkOut');
    const props = await this.writableDocument(id, 'id');
    const user = this.userFor(actor);
    if (isCheckedOut(props)) {
      // Checking out again as the holder is a no-op, so a retried request does not fail.
      this.assertHolder(props, user);
      return gatewayId(props);
    }
    const type = await this.typeOf(props);
    if (!type.versionable) {
      throw new InvalidArgumentError('id', `Invalid parameter 'id': documents of type '${type.id}' are not versionable and cannot be checked out`, 'NOT_VERSIONABLE');
    }
    await this.client.checkOut(objectId(props), { as: user, id });
    return gatewayId(props);
  }

  async checkIn(id: string, actor: Actor, comment?: string): Promise<string> {
    if (comment !== undefined && (typeof comment !== 'string' || comment.length > MAX_COMMENT_LENGTH)) {
      throw new InvalidArgumentError('comment', `Invalid parameter 'comment': at most ${MAX_COMMENT_LENGTH} characters`);
    }
    await this.requireGroup('checkInOut', 'checkIn');
    const props = await this.writableDocument(id, 'id');
    if (!isCheckedOut(props)) {
      throw new ConflictError(`Document '${str(props, 'cmis:name') ?? id}' is not checked out`, 'NOT_CHECKED_OUT', { id });
    }
    const user = this.userFor(actor);
    const pwc = await this.ownWorkingCopy(props, user, id);
    await this.client.checkIn(pwc, comment === '' ? undefined : comment, { as: user, id });
    return gatewayId(props);
  }

  async deleteItem(id: string, allVersions: boolean, actor: Actor): Promise<string> {
    const props = await this.writableDocument(id, 'id', 'this connector deletes documents only');
    const user = this.userFor(actor);
    if (isCheckedOut(props)) {
      // The holder's own check-out is cancelled first; anyone else's blocks the delete.
      const pwc = await this.ownWorkingCopy(props, user, id);
      await this.client.cancelCheckOut(pwc, { as: user, id });
    }
    // Only an explicit false keeps older versions (the spec's default is true).
    await this.client.deleteObject(objectId(props), allVersions !== false, { as: user, id });
    return gatewayId(props);
  }

  async createFolder(path: string, actor: Actor): Promise<string> {
    if (path === '') throw new InvalidArgumentError('path', "Invalid parameter 'path': must be the absolute path of a folder");
    const segments = parseAbsolutePath(path, 'path');
    const { info } = await this.connected();
    const user = this.userFor(actor);
    const existing = await this.folderAt(toPath(segments));
    if (existing !== undefined) return existing;
    let parent = info.rootFolderId;
    for (let i = 0; i < segments.length; i++) {
      const current = toPath(segments.slice(0, i + 1));
      const found = await this.folderAt(current);
      if (found !== undefined) {
        parent = found;
        continue;
      }
      try {
        parent = objectId((await this.client.createFolder(parent, segments[i], { as: user, id: current, parameter: 'path' })).succinctProperties);
      } catch (e) {
        // Created meanwhile by someone else: use theirs.
        if (!(e instanceof ConflictError)) throw e;
        const again = await this.folderAt(current);
        if (again === undefined) throw e;
        parent = again;
      }
      this.rememberFolder(parent);
    }
    return parent;
  }

  // ---- permissions --------------------------------------------------------------

  async getAcl(id: string): Promise<string[]> {
    checkId(id, 'id');
    await this.requireGroup('acls', 'acls');
    return formatAcl(await this.client.getAcl(aclTarget(id), { id, parameter: 'id' }));
  }

  async applyAcl(id: string, entries: Record<string, string[]>, actor: Actor): Promise<string[]> {
    checkId(id, 'id');
    await this.requireGroup('acls', 'acls');
    const target = aclTarget(id);
    const call = { as: this.userFor(actor), id, parameter: 'id' };
    const current = await this.client.getAcl(target, { id, parameter: 'id' });
    const direct = directPermissions(current);
    const adds: AceChange[] = [];
    const removes: AceChange[] = [];
    for (const [principal, permissions] of Object.entries(entries)) {
      const had = direct.get(principal);
      if (had && sameSet(had, permissions)) continue;
      if (had) removes.push({ principal, permissions: had });
      adds.push({ principal, permissions });
    }
    if (adds.length === 0) return formatAcl(current);
    let result = await this.aclAfter(target, await this.client.applyAcl(target, adds, removes, call), call);
    // Repositories that add before they remove (OpenCMIS InMemory) drop a replaced principal: add it again.
    let missing = adds.filter((a) => !grants(result, a));
    if (missing.length > 0) result = await this.aclAfter(target, await this.client.applyAcl(target, missing, [], call), call);
    missing = adds.filter((a) => !grants(result, a));
    if (missing.length > 0) {
      throw new UpstreamError(
        `The repository did not grant ${missing.map((a) => `${a.principal}:${a.permissions.join(',')}`).join('; ')}; its ACL is now ${formatAcl(result).join('; ') || 'empty'}`,
        { id },
      );
    }
    return formatAcl(result);
  }

  async removeAcl(id: string, principals: string[], actor: Actor): Promise<string[]> {
    checkId(id, 'id');
    await this.requireGroup('acls', 'acls');
    const target = aclTarget(id);
    const call = { as: this.userFor(actor), id, parameter: 'id' };
    const direct = directPermissions(await this.client.getAcl(target, { id, parameter: 'id' }));
    const removes = principals.filter((p) => direct.has(p)).map((principal) => ({ principal, permissions: direct.get(principal)! }));
    if (removes.length === 0) return [];
    const result = await this.aclAfter(target, await this.client.applyAcl(target, [], removes, call), call);
    const kept = removes.filter((r) => directPermissions(result).has(r.principal));
    if (kept.length > 0) {
      throw new UpstreamError(
        `The repository kept the entries of ${kept.map((r) => `'${r.principal}'`).join(', ')} (some repositories restore a default entry when the last one goes); its ACL is now ${formatAcl(result).join('; ')}`,
        { id },
      );
    }
    return removes.map((r) => r.principal);
  }

  // ---- helpers ------------------------------------------------------------------

  private async firstContact(): Promise<RepositoryState> {
    let info: CmisRepositoryInfo;
    try {
      info = await this.client.repositoryInfo();
    } catch (e) {
      if (e instanceof NotFoundError) {
        throw new CmisConfigurationError('repositoryId', `repository '${this.params.repositoryId}' not found at ${this.params.url} (check url and repositoryId)`);
      }
      if (e instanceof GatewayError && e.kind === 'permission_denied') {
        throw new CmisConfigurationError('password', `the repository refused the credentials of user '${this.params.user}'`);
      }
      throw e;
    }
    const types = await this.documentTypes(true);
    const documentType = types.get(this.params.documentType);
    if (!documentType || documentType.creatable === false) {
      throw new CmisConfigurationError(
        'documentType',
        `'${this.params.documentType}' is not a creatable document type of repository '${info.repositoryId}' (known: ${[...types.keys()].join(', ')})`,
      );
    }
    const caps = info.capabilities ?? {};
    const updatability = String(caps.capabilityContentStreamUpdatability ?? 'none');
    const orderBy = String(caps.capabilityOrderBy ?? 'none');
    return {
      info,
      acls: caps.capabilityACL === 'manage',
      contentUpdate: updatability !== 'none',
      checkInOut: [...types.values()].some((t) => t.versionable === true),
      ...(orderBy !== 'none' ? { orderBy: 'cmis:name ASC' } : {}),
    };
  }

  /** connect() for request-time use: a definition that does not fit the repository is the gateway's problem (502), not the client's. */
  private async connected(): Promise<RepositoryState> {
    try {
      return await this.connect();
    } catch (e) {
      if (e instanceof CmisConfigurationError) throw new UpstreamError(`Connector '${this.id}' is misconfigured: params.${e.parameter}: ${e.message}`);
      throw e;
    }
  }

  private offers(group: Group): boolean {
    return this.state === undefined || this.state[group];
  }

  private async requireGroup(group: Group, capability: string): Promise<void> {
    const state = await this.connected();
    if (!state[group]) throw new NotSupportedError(capability, this.typeId);
  }

  private userFor(actor: Actor): string {
    return this.params.userMapping === 'actor' ? actor.username : this.params.user;
  }

  /** Creatable and non-creatable document types by id, the base type first; cached for a minute. */
  private async documentTypes(refresh = false): Promise<Map<string, CmisTypeDefinition>> {
    if (!refresh && this.typeCache && Date.now() - this.typeCache.at < TYPES_TTL_MS) return this.typeCache.documentTypes;
    const [base, tree] = await Promise.all([this.client.typeDefinition('cmis:document'), this.client.typeDescendants('cmis:document')]);
    const documentTypes = new Map<string, CmisTypeDefinition>([[base.id, base]]);
    const walk = (nodes: CmisTypeTreeNode[] | undefined) => {
      for (const node of nodes ?? []) {
        documentTypes.set(node.type.id, node.type);
        walk(node.children);
      }
    };
    walk(tree);
    this.typeCache = { at: Date.now(), documentTypes };
    return documentTypes;
  }

  /** The object's type definition (with property definitions when asked). */
  private async typeOf(props: CmisProperties, withProperties = false): Promise<CmisTypeDefinition> {
    const typeId = str(props, 'cmis:objectTypeId') ?? 'cmis:document';
    const cached = (await this.documentTypes()).get(typeId);
    if (cached && (!withProperties || cached.propertyDefinitions)) return cached;
    return this.client.typeDefinition(typeId);
  }

  /**
   * The CMIS object an id names now: a version id names that version, a
   * document id the latest version of its series, a folder id the folder.
   */
  private async resolve(id: string, parameter: string): Promise<CmisProperties> {
    const version = splitVersion(id);
    if (version) {
      try {
        const match = (await this.versionsOf(version.series, id)).find((p) => versionLabelOf(p) === version.label);
        if (match) return match;
      } catch (e) {
        if (!(e instanceof NotFoundError) && !(e instanceof InvalidArgumentError)) throw e;
      }
      // Not one of ours: perhaps a repository whose own ids carry a semicolon.
      return (await this.client.getObject(id, { id, parameter })).succinctProperties;
    }
    if (!this.knownFolders.has(id)) {
      try {
        return (await this.client.getObject(id, { id, latest: true })).succinctProperties;
      } catch (e) {
        // Not a document (folders have no latest version): read it as it is.
        if (!(e instanceof GatewayError) || ['not_found', 'permission_denied', 'upstream_unavailable', 'upstream_timeout'].includes(e.kind)) throw e;
      }
    }
    const props = (await this.client.getObject(id, { id, parameter })).succinctProperties;
    if (isFolder(props)) this.rememberFolder(id);
    return props;
  }

  /**
   * The versions of a document, newest first, without the private working
   * copy. A document outside any version series (some repositories refuse
   * getAllVersions for non-versionable types) has one: itself.
   */
  private async versionsOf(series: string, id: string): Promise<CmisProperties[]> {
    let all;
    try {
      all = (await this.client.getAllVersions(series, { id })).map((o) => o.succinctProperties);
    } catch (e) {
      if (!(e instanceof GatewayError) || ['not_found', 'permission_denied', 'upstream_unavailable', 'upstream_timeout'].includes(e.kind)) throw e;
      all = [(await this.client.getObject(series, { id })).succinctProperties];
    }
    const versions = all.filter((p) => p['cmis:isPrivateWorkingCopy'] !== true);
    if (versions.length === 0 || !isDocument(versions[0])) throw new InvalidArgumentError('id', `Invalid parameter 'id': '${id}' is not a document`);
    return versions;
  }

  /** A document that changes may be named by its id or by the id of its latest version, never an older one. */
  private async writableDocument(id: string, parameter: string, folderHint = 'a document is expected'): Promise<CmisProperties> {
    checkId(id, parameter);
    const props = await this.resolve(id, parameter);
    if (!isDocument(props)) throw new InvalidArgumentError(parameter, `Invalid parameter '${parameter}': '${id}' is not a document; ${folderHint}`);
    if (splitVersion(id) && props['cmis:isLatestVersion'] === false) {
      throw new InvalidArgumentError(parameter, `Invalid parameter '${parameter}': '${id}' names an older version; changes apply to the document '${gatewayId(props)}'`);
    }
    return props;
  }

  private assertHolder(props: CmisProperties, user: string): void {
    const holder = str(props, 'cmis:versionSeriesCheckedOutBy');
    if (holder !== undefined && holder !== user) {
      throw new ConflictError(`Document is checked out by '${holder}'`, 'CHECKED_OUT', { checkedOutBy: holder, id: gatewayId(props) });
    }
  }

  /** The private working copy of a series checked out by `user` (409 naming the holder otherwise). */
  private async ownWorkingCopy(props: CmisProperties, user: string, id: string): Promise<string> {
    this.assertHolder(props, user);
    const pwc = str(props, 'cmis:versionSeriesCheckedOutId');
    if (pwc !== undefined) return pwc;
    const versions = await this.client.getAllVersions(gatewayId(props), { id });
    const found = versions.map((o) => o.succinctProperties).find((p) => p['cmis:isPrivateWorkingCopy'] === true);
    if (!found) throw new ConflictError(`Document '${id}' is checked out, but its working copy cannot be found`, 'CHECKED_OUT', { id });
    return objectId(found);
  }

  private async folderAt(path: string): Promise<string | undefined> {
    try {
      const props = (await this.client.getObjectByPath(path, { parameter: 'path' })).succinctProperties;
      if (!isFolder(props)) throw new ConflictError(`'${path}' exists and is not a folder`, 'ALREADY_EXISTS', { path });
      return objectId(props);
    } catch (e) {
      if (e instanceof NotFoundError) return undefined;
      throw e;
    }
  }

  /** applyACL answers the new ACL; when a server answers nothing, read it. */
  private async aclAfter(target: string, answer: CmisAcl | undefined, call: { id: string; parameter: string }): Promise<CmisAcl> {
    return answer && Array.isArray(answer.aces) ? answer : this.client.getAcl(target, call);
  }

  private rememberFolder(id: string): void {
    if (this.knownFolders.size >= MAX_KNOWN_FOLDERS) this.knownFolders.clear();
    this.knownFolders.add(id);
  }

  /** Remembers which CMIS object getItem described, so the openContent that follows serves exactly those bytes. */
  private pin(id: string, target: string): void {
    if (this.pins.size >= MAX_PINS) {
      const now = Date.now();
      for (const [key, pin] of this.pins) if (pin.until < now) this.pins.delete(key);
      if (this.pins.size >= MAX_PINS) this.pins.clear();
    }
    this.pins.set(id, { objectId: target, until: Date.now() + PIN_TTL_MS });
  }

  private takePin(id: string): string | undefined {
    const pin = this.pins.get(id);
    if (!pin) return undefined;
    this.pins.delete(id);
    return pin.until >= Date.now() ? pin.objectId : undefined;
  }
}

// ---- pure helpers -------------------------------------------------------------------

function notAFolder(id: string): InvalidArgumentError {
  return new InvalidArgumentError('id', `Invalid parameter 'id': '${id}' is not a folder`);
}

function isCheckedOut(props: CmisProperties): boolean {
  return props['cmis:isVersionSeriesCheckedOut'] === true;
}

/** `<series>;<label>` → its parts; undefined for plain ids. */
export function splitVersion(id: string): { series: string; label: string } | undefined {
  const at = id.lastIndexOf(VERSION_SEPARATOR);
  if (at <= 0 || at === id.length - 1) return undefined;
  return { series: id.slice(0, at), label: id.slice(at + 1) };
}

/** Permissions belong to the document (its version series), not to one version. */
function aclTarget(id: string): string {
  return splitVersion(id)?.series ?? id;
}

function directPermissions(acl: CmisAcl): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const ace of acl.aces ?? []) {
    if (ace.isDirect === false) continue;
    const list = out.get(ace.principal.principalId) ?? [];
    for (const p of ace.permissions ?? []) if (!list.includes(p)) list.push(p);
    out.set(ace.principal.principalId, list);
  }
  return out;
}

/** `principal:perm1,perm2`, one entry per principal, in the repository's order. */
export function formatAcl(acl: CmisAcl): string[] {
  const merged = new Map<string, string[]>();
  for (const ace of acl.aces ?? []) {
    const list = merged.get(ace.principal.principalId) ?? [];
    for (const p of ace.permissions ?? []) if (!list.includes(p)) list.push(p);
    merged.set(ace.principal.principalId, list);
  }
  return [...merged].map(([principal, permissions]) => `${principal}:${permissions.join(',')}`);
}

function grants(acl: CmisAcl, ace: AceChange): boolean {
  const had = directPermissions(acl).get(ace.principal);
  return had !== undefined && ace.permissions.every((p) => had.includes(p));
}

function sameSet(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((x) => b.includes(x));
}

function checkId(id: string, parameter: string): void {
  if (typeof id !== 'string' || id === '' || id.length > 4096) throw new InvalidArgumentError(parameter, `Invalid parameter '${parameter}': must be a repository id`);
}

function checkName(name: string, parameter: string): string {
  if (typeof name !== 'string' || name.trim() === '') throw new InvalidArgumentError(parameter, `Invalid parameter '${parameter}': must be a non-empty name`);
  if (name.length > MAX_NAME_LENGTH) throw new InvalidArgumentError(parameter, `Invalid parameter '${parameter}': at most ${MAX_NAME_LENGTH} characters`);
  if (name === '.' || name === '..' || /[/\u0000-\u001f\u007f-\u009f]/.test(name)) {
    throw new InvalidArgumentError(parameter, `Invalid parameter '${parameter}': a name is one path segment ('/', control characters, '.' and '..' are refused)`);
  }
  return name;
}

/** Absolute '/'-separated path → its segments ('/' → []). */
function parseAbsolutePath(path: string, parameter: string): string[] {
  if (typeof path !== 'string' || !path.startsWith('/')) throw new InvalidArgumentError(parameter, `Invalid parameter '${parameter}': must be an absolute path starting with '/'`);
  const segments = path.split('/').filter((s, i, all) => !(s === '' && (i === 0 || i === all.length - 1)));
  for (const s of segments) checkName(s, parameter);
  return segments;
}

function toPath(segments: string[]): string {
  return '/' + segments.join('/');
}

function checkRange(range: ByteRange): void {
  const { start, end } = range;
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end < start) {
    throw new InvalidArgumentError('range', 'must be an inclusive byte range with 0 <= start <= end');
  }
}

function checkLimit(limit: number | undefined): number | undefined {
  if (limit === undefined) return undefined;
  if (!Number.isSafeInteger(limit) || limit < 1) throw new InvalidArgumentError('limit', "Invalid parameter 'limit': must be a positive integer");
  return limit;
}

/** The cursor is the skipCount of the next page: 's' and a decimal number. */
function encodeCursor(skip: number): string {
  return `s${skip}`;
}

function decodeCursor(cursor: string): number {
  const m = typeof cursor === 'string' ? CURSOR.exec(cursor) : null;
  if (!m) throw new InvalidArgumentError('cursor', "Invalid parameter 'cursor': not a cursor returned by a previous page");
  return Number(m[1]);
}

/** The essence of a declared media type, unless it only describes the request. */
function declaredMimeType(mimeType: string | undefined): string | undefined {
  if (!mimeType) return undefined;
  const essence = mimeType.split(';', 1)[0].trim().toLowerCase();
  if (!/^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/.test(essence)) return undefined;
  if (GENERIC_MEDIA_TYPES.has(essence) || essence.startsWith('multipart/')) return undefined;
  return essence;
}

/** Runs an upload; a failure of the client's own stream is the client's (400 on content), not the repository's. */
async function uploading<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (e) {
    if (e instanceof SourceStreamError) throw new InvalidArgumentError('content', `Invalid parameter 'content': ${e.message}`);
    throw e;
  }
}

/** A property value as the browser binding wants it; '' unsets the property. */
function convertValue(name: string, value: string, propertyType: string, multi: boolean): string | string[] | null {
  if (typeof value !== 'string') throw new InvalidArgumentError(name, `Invalid parameter '${name}': a property value must be a string`, 'INVALID_PROPERTY');
  if (value === '') return null;
  const values = multi ? value.split(',').map((v) => v.trim()) : [value];
  const converted = values.map((v) => {
    switch (propertyType) {
      case 'integer':
        if (!/^-?\d+$/.test(v)) throw new InvalidArgumentError(name, `Invalid parameter '${name}': must be an integer`, 'INVALID_PROPERTY');
        return v;
      case 'decimal':
        if (v.trim() === '' || !Number.isFinite(Number(v))) throw new InvalidArgumentError(name, `Invalid parameter '${name}': must be a number`, 'INVALID_PROPERTY');
        return String(Number(v));
      case 'boolean':
        if (v !== 'true' && v !== 'false') throw new InvalidArgumentError(name, `Invalid parameter '${name}': must be true or false`, 'INVALID_PROPERTY');
        return v;
      case 'datetime': {
        const ms = /^-?\d+$/.test(v) ? Number(v) : Date.parse(v);
        if (!Number.isFinite(ms)) throw new InvalidArgumentError(name, `Invalid parameter '${name}': must be an ISO 8601 date-time or epoch milliseconds`, 'INVALID_PROPERTY');
        return String(ms);
      }
      default:
        return v;
    }
  });
  return multi ? converted : converted[0];
}

