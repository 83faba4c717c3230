import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { once } from 'node:events';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  ConflictError,
  InvalidArgumentError,
  NotFoundError,
  UpstreamError,
  type AclCapability,
  type Actor,
  type ChangeFeedCapability,
  type ByteRange,
  type CheckInOutCapability,
  type ContentHashCapability,
  type ConnectorDefinition,
  type ContentConnector,
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
  type SiteCapability,
  type VersioningCapability,
  sliceBytes,
} from '@gateway/connector-api';
import { MicrosoftHttpClient, MsalTokenProvider, createAgents, drain, type MicrosoftRequest } from '@gateway/microsoft-client';
import {
  checkId,
  checkName,
  decodeFieldName,
  encodePath,
  GATEWAY_FIELD_NAMES,
  GATEWAY_FIELDS,
  identityName,
  splitVersion,
  str,
  SYSTEM_FIELDS,
  type DriveItem,
  type DriveItemVersion,
} from './drive-items';
import { GraphAcls } from './graph-acls';
import { GraphChangeFeed } from './graph-change-feed';
import { GraphCheckInOut } from './graph-check-in-out';
import { GraphContentUpdate } from './graph-content-update';
import { GraphFolders } from './graph-folders';
import { GraphPropertyUpdate } from './graph-properties';
import { GRAPH_NAMING_RULES } from './naming-rules';
import { GraphMoves } from './graph-moves';
import { GraphContentHash } from './graph-content-hash';
import { GraphSites } from './graph-sites';
import { GraphVersioning } from './graph-versioning';
import { GraphVersionStamps, fileSystemInfoOf, type FileSystemInfo } from './graph-version-stamps';
import type { GraphParams } from './params';

export { decodeFieldName, encodeFieldName, GATEWAY_FIELDS } from './drive-items';

const ITEM_SELECT = 'id,name,size,file,folder,root,parentReference,createdDateTime,lastModifiedDateTime,createdBy,lastModifiedBy,eTag,cTag,publication';
const ITEM_EXPAND = 'listItem($expand=fields)';
const CURSOR = /^[A-Za-z0-9_-]{1,4000}$/;

/**
 * A document library through Microsoft Graph v1.0 (`/drives/{drive-id}/...`), on @gateway/microsoft-client.
 * Decisions in ../README.md.
 *
 * This class keeps the core operations and the plumbing the groups share (calls, items, uploads,
 * the gateway user's fields); each capability group is a class of its own file (graph-<group>.ts)
 * given this one.
 */
export class GraphConnector implements ContentConnector {
  readonly id: string;
  readonly typeId = 'graph';
  readonly description: string;
  readonly publicParams: Record<string, unknown>;
  readonly http: MicrosoftHttpClient;
  private readonly tokens: MsalTokenProvider;
  private driveId?: string;
  private rootId?: string;

  readonly contentUpdate: ContentUpdateCapability = new GraphContentUpdate(this);
  readonly versioning: VersioningCapability = new GraphVersioning(this);
  readonly checkInOut: CheckInOutCapability = new GraphCheckInOut(this);
  readonly folders: FolderCapability = new GraphFolders(this);
  readonly propertyUpdate: PropertyUpdateCapability = new GraphPropertyUpdate(this);
  readonly namingRules = GRAPH_NAMING_RULES;
  readonly move: MoveCapability = new GraphMoves(this);
  readonly versionStamps = new GraphVersionStamps();
  readonly acls: AclCapability = new GraphAcls(this);
  readonly sites: SiteCapability = new GraphSites(this);
  readonly contentHash: ContentHashCapability = new GraphContentHash(this);
  readonly changeFeed: ChangeFeedCapability = new GraphChangeFeed(this);

  constructor(
    definition: ConnectorDefinition,
    readonly params: GraphParams,
    private readonly spoolDir: string = os.tmpdir(),
  ) {
    this.id = definition.id;
    this.description = definition.description;
    this.publicParams = {
      graphUrl: params.graphUrl,
      tenantId: params.tenantId,
      clientId: params.clientId,
      ...(params.siteId ? { siteId: params.siteId } : {}),
      ...(params.driveId ? { driveId: params.driveId } : {}),
      ...(params.library ? { library: params.library } : {}),
      chunkThresholdBytes: params.chunkThresholdBytes,
    };
    const scope = `${params.graphUrl.startsWith('https://graph.microsoft.com') ? 'https://graph.microsoft.com' : new URL(params.graphUrl).origin}/.default`;
    // One agent pair (trusting caFile) for MSAL's calls and the service's.
    const agents = createAgents({ caFile: params.caFile });
    this.tokens = new MsalTokenProvider({
      tenantId: params.tenantId,
      clientId: params.clientId,
      clientSecret: params.clientSecret,
      certificatePath: params.certificatePath,
      certificateThumbprint: params.certificateThumbprint,
      authorityHost: params.authorityHost,
      scope,
      agent: agents.https,
    });
    this.http = new MicrosoftHttpClient({ service: 'Microsoft Graph', connectorType: 'graph', tokens: this.tokens, agents, maxRetries: params.maxRetries, connectTimeoutMs: params.connectTimeoutMs, idleTimeoutMs: params.timeoutMs });
  }

  async close(): Promise<void> {
    this.http.close();
  }

  // ---- plumbing ---------------------------------------------------------------------------------

  call<T>(req: Omit<MicrosoftRequest, 'url'> & { path: string }): Promise<{ status: number; data: T }> {
    return this.http.json<T>({ ...req, url: `${this.params.graphUrl}${req.path}` });
  }

  /** The drive (resolving a library name once) and its root item id. */
  async connect(): Promise<{ driveId: string; rootId: string }> {
    if (this.driveId && this.rootId) return { driveId: this.driveId, rootId: this.rootId };
    let driveId = this.params.driveId;
    if (!driveId) {
      const drives = await this.call<{ value: Array<{ id: string; name: string }> }>({ method: 'GET', path: `/sites/${encodeURIComponent(this.params.siteId!)}/drives`, errorContext: { parameter: 'siteId' } });
      const drive = drives.data.value.find((d) => d.name === this.params.library) ?? drives.data.value.find((d) => d.name.toLowerCase() === this.params.library!.toLowerCase());
      if (!drive) throw new InvalidArgumentError('library', `the site has no library named '${this.params.library}' (it has ${drives.data.value.map((d) => d.name).join(', ')})`);
      driveId = drive.id;
    }
    const root = await this.call<DriveItem>({ method: 'GET', path: `${this.drivePath(driveId)}/root?$select=id`, errorContext: { parameter: 'driveId' } });
    this.driveId = driveId;
    this.rootId = root.data.id;
    return { driveId, rootId: root.data.id };
  }

  private drivePath(driveId = this.driveId!): string {
    const prefix = this.params.siteId ? `/sites/${encodeURIComponent(this.params.siteId)}` : '';
    return `${prefix}/drives/${encodeURIComponent(driveId)}`;
  }

  async itemPath(id: string): Promise<string> {
    await this.connect();
    return `${this.drivePath()}/items/${encodeURIComponent(id)}`;
  }

  async fetchItem(id: string, parameter = 'id'): Promise<DriveItem> {
    checkId(id, parameter);
    const { item } = splitVersion(id);
    return (await this.call<DriveItem>({ method: 'GET', path: `${await this.itemPath(item)}?$select=${ITEM_SELECT}&$expand=${ITEM_EXPAND}`, errorContext: { id, parameter } })).data;
  }

  async fetchByPath(segments: string[], parameter: string): Promise<DriveItem | undefined> {
    await this.connect();
    const target = segments.length === 0 ? `${this.drivePath()}/root` : `${this.drivePath()}/root:/${encodePath(segments)}:`;
    const res = await this.http.json<DriveItem>({ method: 'GET', url: `${this.params.graphUrl}${target}?$select=${ITEM_SELECT}&$expand=${ITEM_EXPAND}`, accept: [404], errorContext: { parameter } });
    return res.status === 404 ? undefined : res.data;
  }

  toItemInfo(item: DriveItem): ItemInfo {
    const fields = item.listItem?.fields ?? {};
    const isFolder = item.folder !== undefined || item.root !== undefined;
    const parentPath = item.parentReference?.path ? decodeURIComponent(item.parentReference.path.replace(/^[^:]*:?/, '')) : undefined;
    const itemPath = item.root !== undefined || item.id === this.rootId ? '/' : `${parentPath && parentPath !== '/' ? parentPath : ''}/${item.name}`;
    const properties: Record<string, string | null> = {};
    for (const [key, value] of Object.entries(fields)) {
      if (key.startsWith('@') || key.startsWith('_') || key.startsWith('OData_') || SYSTEM_FIELDS.has(key) || GATEWAY_FIELD_NAMES.has(key)) continue;
      properties[decodeFieldName(key)] = fieldText(value);
    }
    const checkedOut = item.publication?.level === 'checkout';
    return {
      id: item.id,
      name: item.root !== undefined ? '' : item.name,
      path: itemPath,
      baseType: isFolder ? 'folder' : 'document',
      typeId: isFolder ? 'folder' : 'file',
      mimeType: item.file?.mimeType,
      size: isFolder ? undefined : (item.size ?? 0),
      created: item.createdDateTime ? new Date(item.createdDateTime) : undefined,
      modified: item.lastModifiedDateTime ? new Date(item.lastModifiedDateTime) : undefined,
      createdBy: str(fields[GATEWAY_FIELDS.createdBy]) ?? identityName(item.createdBy),
      modifiedBy: str(fields[GATEWAY_FIELDS.modifiedBy]) ?? identityName(item.lastModifiedBy),
      checkedOut: isFolder ? undefined : checkedOut,
      checkedOutBy: checkedOut ? (str(fields[GATEWAY_FIELDS.checkedOutBy]) ?? 'another application') : undefined,
      checkinComment: str(fields._CheckinComment) ?? str(fields.OData__CheckinComment),
      versionLabel: isFolder ? undefined : (str(fields._UIVersionString) ?? str(fields.OData__UIVersionString) ?? item.publication?.versionId ?? undefined),
      versionSeriesId: isFolder ? undefined : item.id,
      // cTag changes with the content only; without its quotes it is a valid opaque validator.
      etag: isFolder ? undefined : (item.cTag ?? item.eTag)?.replace(/"/g, ''),
      properties,
    };
  }

  // ---- repository -------------------------------------------------------------------------------

  async checkHealth(): Promise<void> {
    await this.connect();
  }

  async describeRepository(): Promise<RepositoryDescription> {
    const { driveId, rootId } = await this.connect();
    const drive = (await this.call<{ name?: string; description?: string; webUrl?: string }>({ method: 'GET', path: this.drivePath(driveId) })).data;
    return { repositoryId: driveId, repositoryName: drive.name ?? 'Documents', repositoryDescription: drive.description || drive.webUrl || 'Microsoft Graph drive', rootFolderId: rootId };
  }

  async rootFolder(): Promise<FolderInfo> {
    const { rootId } = await this.connect();
    return { folderId: rootId, folderName: '', folderPath: '/' };
  }

  async types(): Promise<Record<string, string>> {
    return { file: 'Document' };
  }

  async getItem(id: string): Promise<ItemInfo> {
    const item = await this.fetchItem(id);
    const info = this.toItemInfo(item);
    const { version } = splitVersion(id);
    if (!version) return info;
    const v = (await this.versionsOf(item.id, id)).find((x) => x.id === version);
    if (!v) throw new NotFoundError('item', id);
    return { ...info, id, size: v.size ?? 0, modified: v.lastModifiedDateTime ? new Date(v.lastModifiedDateTime) : info.modified, versionLabel: v.id, etag: `${item.id}-v${v.id}`, checkedOut: false, checkedOutBy: undefined };
  }

  async idByPath(folderPath: string, fileName: string): Promise<string> {
    const segments = `${folderPath}/${fileName}`.split('/').filter((s) => s !== '');
    if (segments.some((s) => s === '.' || s === '..')) throw new InvalidArgumentError('folderPath', "Invalid parameter 'folderPath': no . or .. segments");
    const item = await this.fetchByPath(segments, 'folderPath');
    if (!item) throw new NotFoundError('item', `${folderPath}/${fileName}`);
    return item.id;
  }

  async listFolder(folderId: string, options: ListFolderOptions = {}): Promise<FolderPage> {
    checkId(folderId, 'id');
    const base = `${this.params.graphUrl}${await this.itemPath(folderId)}/children`;
    let url: string;
    if (options.cursor !== undefined) {
      if (!CURSOR.test(options.cursor)) throw new InvalidArgumentError('cursor', "Invalid parameter 'cursor': not a cursor this connector issued");
      url = Buffer.from(options.cursor, 'base64url').toString('utf8');
      // Only a nextLink of this very folder's children is followed (the cursor travels through clients).
      if (!this.isChildrenLink(url, folderId)) throw new InvalidArgumentError('cursor', "Invalid parameter 'cursor': not a cursor this connector issued");
    } else {
      const top = options.limit ?? this.params.pageSize;
      url = `${base}?$top=${top}&$select=${ITEM_SELECT}&$expand=${ITEM_EXPAND}`;
    }
    const items: ItemInfo[] = [];
    for (;;) {
      const page = await this.http.json<{ value: DriveItem[]; '@odata.nextLink'?: string }>({ method: 'GET', url, errorContext: { id: folderId, parameter: 'id' } });
      if (!Array.isArray(page.data?.value)) throw new UpstreamError('Microsoft Graph answered a children listing without value');
      items.push(...page.data.value.map((i) => this.toItemInfo(i)));
      const next = page.data['@odata.nextLink'];
      if (!next) return { items };
      if (!this.isChildrenLink(next, folderId)) throw new UpstreamError('Microsoft Graph sent a nextLink outside the listed folder');
      if (options.limit !== undefined) return { items, nextCursor: Buffer.from(next).toString('base64url') };
      url = next;
    }
  }

  /**
   * Whether `link` is a page of `folderId`'s children on the configured Graph: the service may drop
   * the /sites/{site} prefix in nextLinks, so the path's end is compared, and the origin and version.
   */
  private isChildrenLink(link: string, folderId: string): boolean {
    let url: URL;
    try {
      url = new URL(link);
    } catch {
      return false;
    }
    const graph = new URL(this.params.graphUrl);
    return (
      url.origin === graph.origin &&
      url.pathname.startsWith(`${graph.pathname}/`) &&
      url.pathname.endsWith(`/drives/${encodeURIComponent(this.driveId!)}/items/${encodeURIComponent(folderId)}/children`)
    );
  }

  async openContent(id: string, range?: ByteRange): Promise<Readable> {
    checkId(id, 'id');
    const { item, version } = splitVersion(id);
    const base = await this.itemPath(item);
    let res = await this.http.request({ method: 'GET', url: `${this.params.graphUrl}${base}${version ? `/versions/${encodeURIComponent(version)}` : ''}/content`, accept: version ? [400, 404] : [], errorContext: { id } });
    if (version && res.status >= 400) {
      // The current version's bytes are served by /content only.
      await drain(res.body);
      const current = await this.fetchItem(item);
      if (this.toItemInfo(current).versionLabel !== version) throw new NotFoundError('item', id);
      res = await this.http.request({ method: 'GET', url: `${this.params.graphUrl}${base}/content`, errorContext: { id } });
    }
    const headers: Record<string, string> = range ? { range: `bytes=${range.start}-${range.end}` } : {};
    if (res.status >= 300 && res.status < 400) {
      const location = res.headers.location;
      await drain(res.body);
      if (!location) throw new UpstreamError('Microsoft Graph redirected a download without a Location');
      // The pre-authenticated URL gets no Authorization header (it may live on another host); Range goes there.
      // Read into reusable memory lent to the response writer (@gateway/content-transport).
      res = await this.http.request({ method: 'GET', url: new URL(location, this.params.graphUrl).href, auth: false, headers, errorContext: { id }, content: true });
    } else if (range) {
      // Answered in place (no redirect): the body is the whole content.
      return res.body.pipe(sliceBytes(range.start, range.end - range.start + 1));
    }
    if (range && res.status === 200) return res.body.pipe(sliceBytes(range.start, range.end - range.start + 1));
    return res.body;
  }

  // ---- writing ----------------------------------------------------------------------------------

  /**
   * Reads the content up to the chunk threshold in memory. A longer stream is spooled to a temporary
   * file instead: Graph's upload session needs the total size up front (Content-Range carries it on
   * every fragment), and fragments read from a file can be sent again after a throttled answer.
   * Memory stays at one threshold whatever the size.
   */
  async stage(content: Readable): Promise<{ buffer: Buffer } | { file: string; size: number }> {
    const threshold = this.params.chunkThresholdBytes;
    const head: Buffer[] = [];
    let size = 0;
    const iterator = content[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
    for (;;) {
      const next = await iterator.next();
      if (next.done) return { buffer: Buffer.concat(head, size) };
      const chunk = Buffer.isBuffer(next.value) ? next.value : Buffer.from(next.value);
      head.push(chunk);
      size += chunk.length;
      if (size > threshold) break;
    }
    fs.mkdirSync(this.spoolDir, { recursive: true });
    const file = path.join(this.spoolDir, `graph-upload-${crypto.randomBytes(8).toString('hex')}`);
    const out = fs.createWriteStream(file, { mode: 0o600 });
    try {
      for (const chunk of head) if (!out.write(chunk)) await once(out, 'drain');
      head.length = 0;
      let total = size;
      // The rest of the iterator the head was read from (the stream itself is already being iterated).
      const rest = Readable.from({ [Symbol.asyncIterator]: () => iterator }, { objectMode: false });
      rest.on('data', (c: Buffer) => {
        total += c.length;
      });
      await pipeline(rest, out);
      return { file, size: total };
    } catch (e) {
      out.destroy();
      fs.rmSync(file, { force: true });
      throw e;
    }
  }

  /** Uploads staged content: one PUT below the threshold, an upload session above it or for `fileSystemInfo` (only a session takes it). */
  async upload(
    staged: { buffer: Buffer } | { file: string; size: number },
    target: { putPath: string; sessionPath: string; conflict: 'fail' | 'replace' },
    mimeType: string | undefined,
    context: { id?: string; parameter: string },
    fileSystemInfo?: FileSystemInfo,
  ): Promise<DriveItem> {
    if ('buffer' in staged && (!fileSystemInfo || staged.buffer.length === 0)) {
      const res = await this.http.json<DriveItem>({
        method: 'PUT',
        url: `${this.params.graphUrl}${target.putPath}?@microsoft.graph.conflictBehavior=${target.conflict}`,
        headers: { 'content-type': mimeType ?? 'application/octet-stream' },
        body: staged.buffer,
        errorContext: context,
      });
      return res.data;
    }
    try {
      const session = await this.http.json<{ uploadUrl: string }>({
        method: 'POST',
        url: `${this.params.graphUrl}${target.sessionPath}`,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ item: { '@microsoft.graph.conflictBehavior': target.conflict, ...(fileSystemInfo ? { fileSystemInfo } : {}) } }),
        errorContext: context,
      });
      const uploadUrl = session.data.uploadUrl;
      const total = 'buffer' in staged ? staged.buffer.length : staged.size;
      const step = this.params.fragmentBytes;
      let result: DriveItem | undefined;
      for (let start = 0; start < total || (total === 0 && start === 0); start += step) {
        const end = Math.min(start + step, total) - 1;
        const res = await this.http.json<DriveItem & { nextExpectedRanges?: string[] }>({
          method: 'PUT',
          url: uploadUrl,
          auth: false, // the upload URL is pre-authenticated; a bearer token may make it fail
          headers: { 'content-length': end - start + 1, 'content-range': `bytes ${start}-${end}/${total}` },
          body: 'buffer' in staged ? staged.buffer.subarray(start, end + 1) : () => fs.createReadStream(staged.file, { start, end }),
          errorContext: context,
        });
        if (res.status === 200 || res.status === 201) result = res.data;
        if (total === 0) break;
      }
      if (!result?.id) throw new UpstreamError('Microsoft Graph did not answer the last fragment of an upload session with the item');
      return result;
    } finally {
      if ('file' in staged) fs.rmSync(staged.file, { force: true });
    }
  }

  async setGatewayFields(id: string, fields: Record<string, string | null>, context: { id?: string; parameter?: string } = {}): Promise<void> {
    await this.call({ method: 'PATCH', path: `${await this.itemPath(id)}/listItem/fields`, headers: { 'content-type': 'application/json' }, body: JSON.stringify(fields), errorContext: { id, ...context } });
  }

  /** The document, refusing folders and a check-out held by another gateway user. */
  async writableDocument(id: string, actor: Actor, parameter: string): Promise<{ item: DriveItem; info: ItemInfo }> {
    const item = await this.fetchItem(id, parameter);
    const info = this.toItemInfo(item);
    if (info.baseType !== 'document') throw new InvalidArgumentError(parameter, `Invalid parameter '${parameter}': '${info.path}' is a folder`);
    if (info.checkedOut && info.checkedOutBy !== actor.username) {
      throw new ConflictError(`Document '${info.name}' is checked out by ${info.checkedOutBy}`, 'CHECKED_OUT', { id, checkedOutBy: info.checkedOutBy });
    }
    return { item, info };
  }

  async createFile(input: NewFile, actor: Actor): Promise<string> {
    checkId(input.folderId, 'folderId');
    const name = checkName(input.fileName, 'fileName');
    const folder = this.toItemInfo(await this.fetchItem(input.folderId, 'folderId'));
    if (folder.baseType !== 'folder') throw new InvalidArgumentError('folderId', `Invalid parameter 'folderId': '${folder.path}' is not a folder`);
    // Refuse a taken name before any byte travels (the session would only say so at its last fragment).
    const existing = await this.fetchByPath([...folder.path.split('/').filter(Boolean), name], 'fileName');
    if (existing) throw new ConflictError(`An item named '${name}' already exists in '${folder.path}'`, 'ALREADY_EXISTS', { id: existing.id });
    const staged = await this.stage(input.content);
    const parentPath = await this.itemPath(input.folderId);
    const created = await this.upload(
      staged,
      { putPath: `${parentPath}:/${encodeURIComponent(name)}:/content`, sessionPath: `${parentPath}:/${encodeURIComponent(name)}:/createUploadSession`, conflict: 'fail' },
      input.mimeType,
      { parameter: 'fileName' }, fileSystemInfoOf(input.stamp),
    );
    await this.setGatewayFields(created.id, { [GATEWAY_FIELDS.createdBy]: input.stamp?.createdBy ?? actor.username, [GATEWAY_FIELDS.modifiedBy]: input.stamp?.modifiedBy ?? actor.username });
    return created.id;
  }

  async versionsOf(item: string, id: string): Promise<DriveItemVersion[]> {
    const versions: DriveItemVersion[] = [];
    let url = `${this.params.graphUrl}${await this.itemPath(item)}/versions`;
    for (;;) {
      const page = await this.http.json<{ value: DriveItemVersion[]; '@odata.nextLink'?: string }>({ method: 'GET', url, errorContext: { id } });
      versions.push(...page.data.value);
      if (!page.data['@odata.nextLink']) return versions;
      url = page.data['@odata.nextLink'];
    }
  }

  async deleteItem(id: string, allVersions: boolean, actor: Actor): Promise<string> {
    checkId(id, 'id');
    const { item: itemId } = splitVersion(id);
    const item = await this.fetchItem(itemId);
    const info = this.toItemInfo(item);
    if (info.path === '/') throw new InvalidArgumentError('id', "Invalid parameter 'id': the root folder cannot be deleted");
    if (info.baseType === 'document') await this.writableDocument(itemId, actor, 'id');
    const itemPath = await this.itemPath(itemId);
    if (allVersions === false && info.baseType === 'document') {
      const versions = await this.versionsOf(itemId, id); // newest first
      if (versions.length > 1) {
        // Graph cannot remove the current version: restore the previous one (a new current version with
        // its bytes), then remove the two it replaces, so the history is one shorter, as asked.
        const [latest, previous] = versions;
        await this.call({ method: 'POST', path: `${itemPath}/versions/${encodeURIComponent(previous.id)}/restoreVersion`, errorContext: { id } });
        await this.call({ method: 'DELETE', path: `${itemPath}/versions/${encodeURIComponent(latest.id)}`, errorContext: { id } });
        await this.call({ method: 'DELETE', path: `${itemPath}/versions/${encodeURIComponent(previous.id)}`, errorContext: { id } });
        await this.setGatewayFields(itemId, { [GATEWAY_FIELDS.modifiedBy]: actor.username });
        return itemId;
      }
    }
    await this.call({ method: 'DELETE', path: itemPath, errorContext: { id } });
    return itemId;
  }

}

/** A list field's value as the gateway's properties carry it: a lookup or person field (an object) as its JSON. */
function fieldText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return value.toString();
  return JSON.stringify(value);
}
