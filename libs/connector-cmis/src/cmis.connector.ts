import { Readable } from 'node:stream';
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
  type NewFile,
  type MoveCapability,
  type PropertyUpdateCapability,
  type RepositoryDescription,
  type VersioningCapability,
  sliceBytes,
} from '@gateway/connector-api';
import { CmisAcls } from './cmis-acls';
import { CmisCheckInOut } from './cmis-check-in-out';
import { CmisClient, type CmisProperties, type CmisRepositoryInfo, type CmisTypeDefinition, type CmisTypeTreeNode } from './cmis-client';
import { CmisContentUpdate } from './cmis-content-update';
import { CmisFolders } from './cmis-folders';
import { CmisMoves } from './cmis-moves';
import { CmisPropertyUpdate, createProperties } from './cmis-properties';
import { CMIS_NAMING_RULES } from './naming-rules';
import { CmisVersioning } from './cmis-versioning';
import { checkId, checkLimit, checkName, checkRange, declaredMimeType, decodeCursor, encodeCursor, notAFolder, parseAbsolutePath, toPath, uploading } from './input';
import { LISTING_FILTER, gatewayId, isCheckedOut, isDocument, isFolder, joinPath, objectId, splitVersion, str, toItemInfo, versionLabelOf } from './item-info';
import type { CmisParams } from './params';

export { formatAcl } from './cmis-acls';
export { splitVersion } from './item-info';

const TYPES_TTL_MS = 60_000;
/** How long getItem's resolution of an id to one CMIS object is kept for the openContent that follows it. */
const PIN_TTL_MS = 10_000;
const MAX_PINS = 1000;
const MAX_KNOWN_FOLDERS = 10_000;
/** Pages of one listing asked for at the same time once the number of children is known. */
const PAGE_PREFETCH = 4;

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
 *
 * This class keeps the core operations and what the groups share (the first
 * contact, type definitions, resolving ids, the check-out holder); each
 * optional group is a class of its own file (cmis-<group>.ts) given this one.
 */
export class CmisConnector implements ContentConnector {
  readonly id: string;
  readonly typeId = 'cmis';
  readonly description: string;
  readonly publicParams: Record<string, unknown>;
  readonly client: CmisClient;

  readonly versioning: VersioningCapability = new CmisVersioning(this);
  readonly folders: FolderCapability = new CmisFolders(this);
  readonly propertyUpdate: PropertyUpdateCapability = new CmisPropertyUpdate(this);
  readonly namingRules = CMIS_NAMING_RULES;
  readonly move: MoveCapability = new CmisMoves(this);

  private readonly contentUpdateGroup: ContentUpdateCapability = new CmisContentUpdate(this);
  private readonly checkInOutGroup: CheckInOutCapability = new CmisCheckInOut(this);
  private readonly aclGroup: AclCapability = new CmisAcls(this);

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
    // The properties written with the content (propertyUpdate.propertiesOnCreate), checked before the upload.
    const properties = input.properties === undefined ? {} : createProperties(await this.typeOf({ 'cmis:objectTypeId': type.id }, true), input.properties);
    const user = this.userFor(actor);
    const created = await uploading(() =>
      this.client.createDocument(
        input.folderId,
        { ...properties, 'cmis:objectTypeId': type.id, 'cmis:name': name },
        { stream: input.content, mimeType: declaredMimeType(input.mimeType) ?? 'application/octet-stream', fileName: name },
        type.versionable ? 'major' : 'none',
        { as: user, id: input.folderId, parameter: 'folderId' },
      ),
    );
    return gatewayId(created.succinctProperties);
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

  // ---- shared with the group classes ------------------------------------------------

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
    const updatability = String(caps.capabilityContentStreamUpdatability as string | undefined ?? 'none');
    const orderBy = String(caps.capabilityOrderBy as string | undefined ?? 'none');
    return {
      info,
      acls: caps.capabilityACL === 'manage',
      contentUpdate: updatability !== 'none',
      checkInOut: [...types.values()].some((t) => t.versionable === true),
      ...(orderBy !== 'none' ? { orderBy: 'cmis:name ASC' } : {}),
    };
  }

  /** connect() for request-time use: a definition that does not fit the repository is the gateway's problem (502), not the client's. */
  async connected(): Promise<RepositoryState> {
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

  async requireGroup(group: Group, capability: string): Promise<void> {
    const state = await this.connected();
    if (!state[group]) throw new NotSupportedError(capability, this.typeId);
  }

  userFor(actor: Actor): string {
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
  async typeOf(props: CmisProperties, withProperties = false): Promise<CmisTypeDefinition> {
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
  async versionsOf(series: string, id: string): Promise<CmisProperties[]> {
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
  async writableDocument(id: string, parameter: string, folderHint = 'a document is expected'): Promise<CmisProperties> {
    checkId(id, parameter);
    const props = await this.resolve(id, parameter);
    if (!isDocument(props)) throw new InvalidArgumentError(parameter, `Invalid parameter '${parameter}': '${id}' is not a document; ${folderHint}`);
    if (splitVersion(id) && props['cmis:isLatestVersion'] === false) {
      throw new InvalidArgumentError(parameter, `Invalid parameter '${parameter}': '${id}' names an older version; changes apply to the document '${gatewayId(props)}'`);
    }
    return props;
  }

  assertHolder(props: CmisProperties, user: string): void {
    const holder = str(props, 'cmis:versionSeriesCheckedOutBy');
    if (holder !== undefined && holder !== user) {
      throw new ConflictError(`Document is checked out by '${holder}'`, 'CHECKED_OUT', { checkedOutBy: holder, id: gatewayId(props) });
    }
  }

  /** The private working copy of a series checked out by `user` (409 naming the holder otherwise). */
  async ownWorkingCopy(props: CmisProperties, user: string, id: string): Promise<string> {
    this.assertHolder(props, user);
    const pwc = str(props, 'cmis:versionSeriesCheckedOutId');
    if (pwc !== undefined) return pwc;
    const versions = await this.client.getAllVersions(gatewayId(props), { id });
    const found = versions.map((o) => o.succinctProperties).find((p) => p['cmis:isPrivateWorkingCopy'] === true);
    if (!found) throw new ConflictError(`Document '${id}' is checked out, but its working copy cannot be found`, 'CHECKED_OUT', { id });
    return objectId(found);
  }

  /** applyACL answers the new ACL; when a server answers nothing, read it. */
  rememberFolder(id: string): void {
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
