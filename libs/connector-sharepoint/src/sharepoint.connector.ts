import { randomUUID } from 'node:crypto';
import { Readable, Transform } from 'node:stream';
import {
  ConflictError,
  GatewayError,
  InvalidArgumentError,
  mimeTypeFor,
  NotFoundError,
  type AclCapability,
  type Actor,
  type ByteRange,
  type CheckInOutCapability,
  type ConnectorDefinition,
  type ContentConnector,
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
  type SiteCapability,
  type VersioningCapability,
  type VersionInfo,
  sliceBytes,
  group,
} from '@gateway/connector-api';
import { ATTRIBUTION_FIELDS, drain, MicrosoftHttpClient, MsalTokenProvider, type MicrosoftRequest } from '@gateway/microsoft-client';
import { ChunkReader, type Chunk } from './chunks';
import { decodeCursor, encodeCursor, fileId, folderId, parseId, skiptokenOf, versionId, type SpId } from './ids';
import { expanded, literal, query, readCollection, readEntity, readPrimitive, str, type Json } from './odata';
import type { SharePointParams } from './params';

const ATTRIBUTION = new Set<string>(Object.values(ATTRIBUTION_FIELDS));

/** Gateway permission names ↔ SharePoint role definitions (README: permission mapping). */
export const PERMISSION_TO_ROLE: Record<string, string> = { read: 'Read', write: 'Contribute', all: 'Full Control' };
const ROLE_TO_PERMISSION: Record<string, string> = { read: 'read', contribute: 'write', 'full control': 'all' };

const ACCEPT = 'application/json;odata=nometadata';
const MAX_NAME_LENGTH = 400;
const MAX_COMMENT_LENGTH = 1023;
/** SharePoint's reserved characters in file and folder names. */
const ILLEGAL_NAME = /["*:<>?\\/|#%]|^~|^\s|\s$|^\.+$/;
/** The built-in fields that are not "properties" of an item. */
const FILE_SELECT = 'ListItemAllFields,Author,ModifiedBy,CheckedOutByUser';

interface ListState {
  title: string;
  rootPath: string;
  rootUid: string;
  webPath: string;
  /** Custom field Title and InternalName → InternalName. */
  fields: Map<string, string>;
  /** InternalName → Title of the custom fields reported as properties. */
  titles: Map<string, string>;
}

function joinPath(folder: string, name: string): string {
  return folder === '/' ? `/${name}` : `${folder}/${name}`;
}

function checkName(name: unknown, parameter: string): string {
  if (typeof name !== 'string' || name.trim() === '') throw new InvalidArgumentError(parameter, `Invalid parameter '${parameter}': must be a non-empty name`);
  if (name.length > MAX_NAME_LENGTH) throw new InvalidArgumentError(parameter, `Invalid parameter '${parameter}': at most ${MAX_NAME_LENGTH} characters`);
  if (ILLEGAL_NAME.test(name) || name === '..' || name === '.') {
    throw new InvalidArgumentError(parameter, `Invalid parameter '${parameter}': SharePoint names cannot contain " * : < > ? / \\ | # % nor start with ~ or end with a space`);
  }
  return name;
}

/** An absolute gateway path ('/' is the library root) as its segments; '..' and the like are refused. */
function parseAbsolutePath(path: unknown, parameter: string): string[] {
  if (typeof path !== 'string' || !path.startsWith('/')) throw new InvalidArgumentError(parameter, `Invalid parameter '${parameter}': must be an absolute path starting with /`);
  const segments = path.split('/').filter((s) => s !== '');
  for (const s of segments) checkName(s, parameter);
  return segments;
}

function date(value: unknown): Date | undefined {
  if (typeof value !== 'string') return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : new Date(ms);
}

/**
 * typeId `sharepoint`: one document library of a SharePoint site through the SharePoint REST API
 * (`/_api/web/...`), app-only with an Entra certificate. Decisions in the lib's README.
 */
export class SharePointConnector implements ContentConnector {
  readonly id: string;
  readonly typeId = 'sharepoint';
  readonly description: string;
  readonly publicParams: Record<string, unknown>;
  readonly http: MicrosoftHttpClient;
  readonly tokens: MsalTokenProvider;
  private readonly api: string;
  private listState?: Promise<ListState>;

  readonly contentUpdate: ContentUpdateCapability = group(this, 'updateContent');
  readonly versioning: VersioningCapability = group(this, 'listVersions');
  readonly checkInOut: CheckInOutCapability = group(this, 'checkOut', 'checkIn');
  readonly folders: FolderCapability = group(this, 'createFolder', 'deleteFolder');
  readonly propertyUpdate: PropertyUpdateCapability = group(this, 'updateProperties');
  readonly acls: AclCapability = group(this, 'getAcl', 'applyAcl', 'removeAcl');
  readonly sites: SiteCapability = group(this, 'getAllSites', 'getSubSites', 'getLibrariesForSite');

  constructor(
    definition: ConnectorDefinition,
    readonly params: SharePointParams,
  ) {
    this.id = definition.id;
    this.description = definition.description;
    this.publicParams = { siteUrl: params.siteUrl, library: params.library, tenantId: params.tenantId, clientId: params.clientId, authorityHost: params.authorityHost };
    this.api = `${params.siteUrl}/_api`;
    const agentsHolder = new MicrosoftHttpClient({ service: 'SharePoint', connectorType: 'sharepoint', caFile: params.caFile });
    this.tokens = new MsalTokenProvider({
      tenantId: params.tenantId,
      clientId: params.clientId,
      clientSecret: params.clientSecret,
      certificatePath: params.certificatePath,
      certificateThumbprint: params.certificateThumbprint,
      authorityHost: params.authorityHost,
      scope: `${new URL(params.siteUrl).origin}/.default`,
      agent: agentsHolder.agents.https,
    });
    this.http = new MicrosoftHttpClient({
      service: 'SharePoint',
      connectorType: 'sharepoint',
      tokens: this.tokens,
      agents: agentsHolder.agents,
      maxRetries: params.maxRetries,
      idleTimeoutMs: params.timeoutMs,
      connectTimeoutMs: params.connectTimeoutMs,
    });
  }

  async close(): Promise<void> {
    this.http.close();
  }

  // ---- plumbing -----------------------------------------------------------------------------------

  private async getJson(path: string, errorContext?: MicrosoftRequest['errorContext']): Promise<unknown> {
    return (await this.http.json({ method: 'GET', url: `${this.api}/${path}`, headers: { accept: ACCEPT }, errorContext })).data;
  }

  private async post(path: string, options: { body?: MicrosoftRequest['body']; headers?: Record<string, string>; errorContext?: MicrosoftRequest['errorContext'] } = {}): Promise<unknown> {
    return (
      await this.http.json({
        method: 'POST',
        url: path.startsWith('https://') ? path : `${this.api}/${path}`,
        headers: { accept: ACCEPT, ...options.headers },
        body: options.body,
        errorContext: options.errorContext,
      })
    ).data;
  }

  private list(): Promise<ListState> {
    this.listState ??= this.loadList().catch((e) => {
      this.listState = undefined;
      throw e;
    });
    return this.listState;
  }

  private listPath(): string {
    return `web/lists/getbytitle(@t)`;
  }

  private listQuery(extra: Record<string, string | number | undefined> = {}): string {
    return query({ '@t': literal(this.params.library), ...extra });
  }

  private async loadList(): Promise<ListState> {
    const root = readEntity(await this.getJson(`${this.listPath()}/RootFolder${this.listQuery({ $select: 'ServerRelativeUrl,UniqueId' })}`));
    const web = readEntity(await this.getJson(`web${query({ $select: 'ServerRelativeUrl' })}`));
    const state: ListState = {
      title: this.params.library,
      rootPath: str(root, 'ServerRelativeUrl') ?? '',
      rootUid: (str(root, 'UniqueId') ?? '').toLowerCase(),
      webPath: str(web, 'ServerRelativeUrl') ?? '',
      fields: new Map(),
      titles: new Map(),
    };
    await this.loadFields(state);
    // The gateway user is kept in three hidden text fields, created once (README: attribution).
    for (const name of Object.values(ATTRIBUTION_FIELDS)) {
      if (state.fields.has(name.toLowerCase())) continue;
      try {
        await this.post(`${this.listPath()}/fields${this.listQuery()}`, {
          body: JSON.stringify({ Title: name, FieldTypeKind: 2, Hidden: true }),
          headers: { 'content-type': 'application/json;odata=nometadata' },
        });
      } catch (e) {
        // Created meanwhile by another gateway: fine.
        if (!(e instanceof GatewayError) || e.kind !== 'upstream_error') throw e;
      }
    }
    await this.loadFields(state);
    return state;
  }

  private async loadFields(state: ListState): Promise<void> {
    const { items } = readCollection(await this.getJson(`${this.listPath()}/fields${this.listQuery({ $select: 'InternalName,Title,FromBaseType,Hidden,ReadOnlyField' })}`));
    state.fields.clear();
    state.titles.clear();
    for (const f of items) {
      const internal = str(f, 'InternalName');
      if (!internal || f.FromBaseType === true || f.ReadOnlyField === true) continue;
      state.fields.set(internal.toLowerCase(), internal);
      if (ATTRIBUTION.has(internal)) continue;
      const title = str(f, 'Title') ?? internal;
      state.fields.set(title.toLowerCase(), internal);
      state.titles.set(internal, title);
    }
  }

  /** The gateway path of a server-relative URL; anything outside the library is refused. */
  private gatewayPath(state: ListState, serverRelative: string): string {
    if (serverRelative.toLowerCase() === state.rootPath.toLowerCase()) return '/';
    if (!serverRelative.toLowerCase().startsWith(state.rootPath.toLowerCase() + '/')) throw new NotFoundError('item', serverRelative);
    return serverRelative.slice(state.rootPath.length);
  }

  private serverPath(state: ListState, segments: string[]): string {
    return segments.length ? `${state.rootPath}/${segments.join('/')}` : state.rootPath;
  }

  private async fileEntity(uid: string, id: string, parameter = 'id'): Promise<Json> {
    return readEntity(await this.getJson(`web/GetFileById(${literal(uid)})${query({ $expand: FILE_SELECT })}`, { id, parameter }));
  }

  private async folderEntity(uid: string, id: string, parameter = 'id'): Promise<Json> {
    return readEntity(await this.getJson(`web/GetFolderById(${literal(uid)})${query({ $expand: 'ListItemAllFields' })}`, { id, parameter }));
  }

  private async fileOf(id: string, parameter: string): Promise<{ spId: SpId; file: Json }> {
    const spId = parseId(id, parameter);
    if (spId.kind !== 'file') throw new InvalidArgumentError(parameter, `Invalid parameter '${parameter}': '${id}' is not a document (a current version is expected)`);
    return { spId, file: await this.fileEntity(spId.uid, id, parameter) };
  }

  private toFileInfo(state: ListState, file: Json, id?: string): ItemInfo {
    const fields = (expanded(file, 'ListItemAllFields') as Json | undefined) ?? {};
    const name = str(file, 'Name') ?? '';
    const uid = (str(file, 'UniqueId') ?? '').toLowerCase();
    const properties: Record<string, string | null> = {};
    for (const [internal, title] of state.titles) if (internal in fields) properties[title] = fields[internal] === null || fields[internal] === undefined ? null : String(fields[internal]);
    const userTitle = (nav: string) => str((expanded(file, nav) as Json | undefined) ?? {}, 'Title');
    const checkedOut = file.CheckOutType !== undefined && Number(file.CheckOutType) !== 2;
    const contentTag = str(file, 'ContentTag') ?? '';
    return {
      id: id ?? fileId(uid),
      name,
      path: this.gatewayPath(state, str(file, 'ServerRelativeUrl') ?? ''),
      baseType: 'document',
      typeId: 'SP.File',
      mimeType: mimeTypeFor(name),
      size: Number(str(file, 'Length') ?? 0),
      created: date(file.TimeCreated),
      modified: date(file.TimeLastModified),
      createdBy: str(fields, ATTRIBUTION_FIELDS.createdBy) ?? userTitle('Author'),
      modifiedBy: str(fields, ATTRIBUTION_FIELDS.modifiedBy) ?? userTitle('ModifiedBy'),
      checkedOut,
      ...(checkedOut ? { checkedOutBy: str(fields, ATTRIBUTION_FIELDS.checkedOutBy) ?? userTitle('CheckedOutByUser') } : {}),
      checkinComment: str(file, 'CheckInComment') || undefined,
      versionLabel: str(file, 'UIVersionLabel'),
      versionSeriesId: fileId(uid),
      // ContentTag "{GUID},<content version>,<metadata version>": its first two parts change with the content only.
      etag: contentTag.split(',').slice(0, 2).join('.').replace(/[{}]/g, '') || undefined,
      properties,
    };
  }

  private toFolderInfo(state: ListState, folder: Json): ItemInfo {
    const uid = (str(folder, 'UniqueId') ?? '').toLowerCase();
    const fields = (expanded(folder, 'ListItemAllFields') as Json | undefined) ?? {};
    const path = this.gatewayPath(state, str(folder, 'ServerRelativeUrl') ?? '');
    return {
      id: folderId(uid),
      name: path === '/' ? '' : (str(folder, 'Name') ?? ''),
      path,
      baseType: 'folder',
      typeId: 'SP.Folder',
      created: date(folder.TimeCreated),
      modified: date(folder.TimeLastModified),
      createdBy: str(fields, ATTRIBUTION_FIELDS.createdBy),
      modifiedBy: str(fields, ATTRIBUTION_FIELDS.modifiedBy),
      checkedOut: false,
    };
  }

  /** Sets fields of the file's list item (MERGE; If-Match when given, so a concurrent change is a 412 → 409). */
  private async merge(uid: string, changes: Record<string, string | null>, id: string, ifMatch = '*'): Promise<void> {
    await this.post(`web/GetFileById(${literal(uid)})/ListItemAllFields`, {
      body: JSON.stringify(changes),
      headers: { 'content-type': 'application/json;odata=nometadata', 'x-http-method': 'MERGE', 'if-match': ifMatch },
      errorContext: { id },
    });
  }

  private holderOf(file: Json): string | undefined {
    const fields = (expanded(file, 'ListItemAllFields') as Json | undefined) ?? {};
    return str(fields, ATTRIBUTION_FIELDS.checkedOutBy) ?? str((expanded(file, 'CheckedOutByUser') as Json | undefined) ?? {}, 'Title');
  }

  /** A document checked out by another gateway user refuses changes (409 naming the holder). */
  private assertWritable(file: Json, actor: Actor, id: string): void {
    if (Number(file.CheckOutType ?? 2) === 2) return;
    const holder = this.holderOf(file);
    if (holder !== actor.username) {
      throw new ConflictError(`Document '${str(file, 'Name') ?? id}' is checked out by ${holder ?? 'another user'}`, 'CHECKED_OUT', { id, checkedOutBy: holder ?? null });
    }
  }

  // ---- repository ----------------------------------------------------------------------------------

  async checkHealth(): Promise<void> {
    await this.list();
    await this.getJson(`web${query({ $select: 'Id' })}`);
  }

  async describeRepository(): Promise<RepositoryDescription> {
    const state = await this.list();
    const web = readEntity(await this.getJson(`web${query({ $select: 'Title,Id,Description' })}`));
    return {
      repositoryId: `${str(web, 'Id') ?? ''}/${state.title}`,
      repositoryName: `${str(web, 'Title') ?? ''} — ${state.title}`,
      repositoryDescription: str(web, 'Description') ?? '',
      rootFolderId: folderId(state.rootUid),
    };
  }

  async rootFolder(): Promise<FolderInfo> {
    const state = await this.list();
    return { folderId: folderId(state.rootUid), folderName: state.title, folderPath: '/' };
  }

  async types(): Promise<Record<string, string>> {
    return { 'SP.File': 'Document' };
  }

  async getItem(id: string): Promise<ItemInfo> {
    const spId = parseId(id, 'id');
    const state = await this.list();
    if (spId.kind === 'folder') return this.toFolderInfo(state, await this.folderEntity(spId.uid, id));
    const file = await this.fileEntity(spId.uid, id);
    const info = this.toFileInfo(state, file);
    if (spId.kind === 'file') return info;
    const version = (await this.versionsOf(spId.uid, id)).find((v) => Number(v.ID) === spId.versionId);
    if (!version) throw new NotFoundError('item', id);
    return {
      ...info,
      id,
      size: Number(version.Size ?? str(version, 'Length') ?? 0),
      modified: date(version.Created),
      versionLabel: str(version, 'VersionLabel'),
      checkinComment: str(version, 'CheckInComment') || undefined,
      checkedOut: false,
      etag: `${spId.uid}.v${spId.versionId}`,
    };
  }

  async openContent(id: string, range?: ByteRange): Promise<Readable> {
    const spId = parseId(id, 'id');
    if (spId.kind === 'folder') throw new InvalidArgumentError('id', `Invalid parameter 'id': '${id}' is a folder`);
    const path = spId.kind === 'file' ? `web/GetFileById(${literal(spId.uid)})/$value` : `web/GetFileById(${literal(spId.uid)})/Versions(${spId.versionId})/$value`;
    const res = await this.http.request({
      method: 'GET',
      url: `${this.api}/${path}`,
      headers: range ? { range: `bytes=${range.start}-${range.end}` } : {},
      errorContext: { id },
      // Read into reusable memory lent to the response writer (@gateway/content-transport).
      content: true,
    });
    if (range && res.status === 200) return res.body.pipe(sliceBytes(range.start, range.end - range.start + 1));
    return res.body;
  }

  async idByPath(folderPath: string, fileName: string): Promise<string> {
    const folder = parseAbsolutePath(folderPath, 'folderPath');
    const name = checkName(fileName, 'fileName');
    const state = await this.list();
    const target = this.serverPath(state, [...folder, name]);
    const q = query({ '@p': literal(target), $select: 'UniqueId,Exists' });
    const file = await this.http.json({ method: 'GET', url: `${this.api}/web/GetFileByServerRelativePath(decodedurl=@p)${q}`, headers: { accept: ACCEPT }, accept: [404] });
    if (file.status === 200) return fileId(str(readEntity(file.data), 'UniqueId') ?? '');
    const dir = await this.http.json({ method: 'GET', url: `${this.api}/web/GetFolderByServerRelativePath(decodedurl=@p)${q}`, headers: { accept: ACCEPT }, accept: [404] });
    if (dir.status === 200) return folderId(str(readEntity(dir.data), 'UniqueId') ?? '');
    throw new NotFoundError('item', joinPath(folderPath.replace(/\/+$/, '') || '/', name));
  }

  /**
   * A folder's children through the library's list items (`$filter=FileDirRef eq …`, `$top`,
   * `$skiptoken`): the paged way SharePoint documents for big folders (Folder/Files has no paging and
   * fails past the list view threshold). The cursor is the `$skiptoken` of the next page.
   */
  async listFolder(id: string, options: ListFolderOptions = {}): Promise<FolderPage> {
    const spId = parseId(id, 'id');
    if (spId.kind !== 'folder') {
      await this.fileEntity(spId.uid, id); // a document that is gone is a 404, not a 400
      throw new InvalidArgumentError('id', `Invalid parameter 'id': '${id}' is not a folder`, 'NOT_A_FOLDER');
    }
    const limit = options.limit;
    let skiptoken = options.cursor === undefined ? undefined : decodeCursor(options.cursor);
    const state = await this.list();
    const folder = spId.uid === state.rootUid ? { ServerRelativeUrl: state.rootPath } : await this.folderEntity(spId.uid, id);
    const dirRef = str(folder, 'ServerRelativeUrl') ?? '';
    const items: ItemInfo[] = [];
    for (;;) {
      const top = Math.min(this.params.pageSize, limit === undefined ? this.params.pageSize : limit - items.length);
      const body = await this.getJson(
        `${this.listPath()}/items${this.listQuery({
          $select: '*,FileLeafRef,FileRef,FileDirRef',
          $expand: 'File,Folder,File/Author,File/ModifiedBy,File/CheckedOutByUser',
          $filter: `FileDirRef eq ${literal(dirRef)}`,
          $top: top,
          $skiptoken: skiptoken,
        })}`,
        { id },
      );
      const page = readCollection(body);
      for (const item of page.items) {
        if (Number(item.FileSystemObjectType) === 1) {
          const f = expanded(item, 'Folder') as Json | undefined;
          if (f) items.push(this.toFolderInfo(state, { ...f, ListItemAllFields: item }));
        } else {
          const f = expanded(item, 'File') as Json | undefined;
          if (f) items.push(this.toFileInfo(state, { ...f, ListItemAllFields: item }));
        }
      }
      skiptoken = page.next ? skiptokenOf(page.next) : undefined;
      if (!skiptoken || page.items.length === 0) return { items };
      if (limit !== undefined && items.length >= limit) return { items, nextCursor: encodeCursor(skiptoken) };
    }
  }

  private async versionsOf(uid: string, id: string): Promise<Json[]> {
    return readCollection(await this.getJson(`web/GetFileById(${literal(uid)})/Versions`, { id })).items;
  }

  /** Earlier versions (SharePoint's Versions collection) then the current one, oldest first. */
  async listVersions(id: string): Promise<VersionInfo[]> {
    const spId = parseId(id, 'id');
    if (spId.kind === 'folder') throw new InvalidArgumentError('id', `Invalid parameter 'id': '${id}' is a folder`);
    const state = await this.list();
    const [file, versions] = await Promise.all([this.fileEntity(spId.uid, id), this.versionsOf(spId.uid, id)]);
    if (spId.kind === 'version' && !versions.some((v) => Number(v.ID) === spId.versionId)) throw new NotFoundError('item', id);
    const current = this.toFileInfo(state, file);
    const series = fileId(spId.uid);
    const list: VersionInfo[] = versions.map((v) => ({
      id: versionId(spId.uid, Number(v.ID)),
      name: current.name,
      label: str(v, 'VersionLabel') ?? '',
      size: Number(v.Size ?? str(v, 'Length') ?? 0),
      modified: date(v.Created) ?? new Date(0),
      versionSeriesId: series,
      comment: str(v, 'CheckInComment') || undefined,
    }));
    list.push({ id: series, name: current.name, label: current.versionLabel ?? '', size: current.size ?? 0, modified: current.modified ?? new Date(0), versionSeriesId: series, comment: current.checkinComment });
    return list;
  }

  // ---- writing ---------------------------------------------------------------------------------------

  private async folderPathOf(id: string, parameter: string): Promise<string> {
    const spId = parseId(id, parameter);
    if (spId.kind !== 'folder') throw new InvalidArgumentError(parameter, `Invalid parameter '${parameter}': '${id}' is not a folder`, 'NOT_A_FOLDER');
    const state = await this.list();
    if (spId.uid === state.rootUid) return state.rootPath;
    return str(await this.folderEntity(spId.uid, id, parameter), 'ServerRelativeUrl') ?? '';
  }

  /**
   * Sends content to a file: small (≤ chunkThresholdBytes) in one request, bigger through
   * StartUpload/ContinueUpload/FinishUpload in chunkSizeBytes chunks, one held at a time in the one
   * buffer the reader allocates for the whole upload (README: memory). `create` makes
   * the file for a small upload; for a big one the file must exist before StartUpload, so it makes an
   * empty one first and removes it again if the upload fails.
   */
  private async sendContent(
    content: Readable,
    target: { create?: { folder: string; name: string }; uid?: string },
    id: string,
  ): Promise<string> {
    const reader = new ChunkReader(content, Math.max(this.params.chunkThresholdBytes + 1, this.params.chunkSizeBytes));
    try {
      const first = await reader.next(this.params.chunkThresholdBytes + 1);
      if (first.last && first.chunk.length <= this.params.chunkThresholdBytes) {
        if (target.create) {
          const q = query({ '@f': literal(target.create.folder), '@n': literal(target.create.name) });
          const created = readEntity(await this.post(`web/GetFolderByServerRelativePath(decodedurl=@f)/Files/AddUsingPath(decodedurl=@n,overwrite=false)${q}`, { body: first.chunk, errorContext: { id, parameter: 'folderId' } }));
          return (str(created, 'UniqueId') ?? '').toLowerCase();
        }
        await this.post(`web/GetFileById(${literal(target.uid!)})/$value`, { body: first.chunk, headers: { 'x-http-method': 'PUT' }, errorContext: { id } });
        return target.uid!;
      }
      let uid = target.uid;
      let stub = false;
      if (target.create) {
        const q = query({ '@f': literal(target.create.folder), '@n': literal(target.create.name) });
        const created = readEntity(await this.post(`web/GetFolderByServerRelativePath(decodedurl=@f)/Files/AddUsingPath(decodedurl=@n,overwrite=false)${q}`, { body: Buffer.alloc(0), errorContext: { id, parameter: 'folderId' } }));
        uid = (str(created, 'UniqueId') ?? '').toLowerCase();
        stub = true;
      }
      const file = `web/GetFileById(${literal(uid!)})`;
      const uploadId = randomUUID();
      let started = false;
      try {
        // The first read took threshold+1 bytes; the rest goes in chunkSizeBytes pieces.
        let pending: Chunk = first;
        let offset = 0;
        for (;;) {
          const op = !started ? (pending.last ? null : 'StartUpload') : pending.last ? 'FinishUpload' : 'ContinueUpload';
          if (op === null) {
            // Everything fit in the first read after all (only when threshold < chunk): one FinishUpload after an empty start.
            await this.post(`${file}/StartUpload(uploadId=guid'${uploadId}')`, { body: Buffer.alloc(0), errorContext: { id } });
            started = true;
            continue;
          }
          const path = op === 'StartUpload' ? `${file}/StartUpload(uploadId=guid'${uploadId}')` : `${file}/${op}(uploadId=guid'${uploadId}',fileOffset=${offset})`;
          const answer = await this.post(path, { body: pending.chunk, errorContext: { id } });
          started = true;
          if (op === 'FinishUpload') break;
          offset = Number(readPrimitive(answer, op) ?? offset + pending.chunk.length);
          pending = await reader.next(this.params.chunkSizeBytes);
        }
      } catch (e) {
        if (started) await this.post(`${file}/CancelUpload(uploadId=guid'${uploadId}')`).catch(() => undefined);
        if (stub) await this.post(`${file}`, { headers: { 'x-http-method': 'DELETE', 'if-match': '*' } }).catch(() => undefined);
        throw e;
      }
      return uid!;
    } finally {
      await reader.close().catch(() => undefined);
    }
  }

  async createFile(input: NewFile, actor: Actor): Promise<string> {
    const name = checkName(input.fileName, 'fileName');
    if (input.type !== undefined && input.type !== 'SP.File') {
      throw new InvalidArgumentError('type', `Invalid parameter 'type': '${input.type}' is not a document type of this repository (the types call lists them)`);
    }
    const folder = await this.folderPathOf(input.folderId, 'folderId');
    const uid = await this.sendContent(input.content, { create: { folder, name } }, input.folderId);
    await this.merge(uid, { [ATTRIBUTION_FIELDS.createdBy]: actor.username, [ATTRIBUTION_FIELDS.modifiedBy]: actor.username }, fileId(uid));
    return fileId(uid);
  }

  async updateContent(id: string, input: NewContent, actor: Actor): Promise<string> {
    const { spId, file } = await this.fileOf(id, 'fileId');
    this.assertWritable(file, actor, id);
    await this.sendContent(input.content, { uid: spId.uid }, id);
    await this.merge(spId.uid, { [ATTRIBUTION_FIELDS.modifiedBy]: actor.username }, id);
    return fileId(spId.uid);
  }

  async updateProperties(id: string, properties: Record<string, string>, actor: Actor): Promise<string> {
    if (properties === null || typeof properties !== 'object' || Object.keys(properties).length === 0) {
      throw new InvalidArgumentError('properties', "Invalid parameter 'properties': give at least one property");
    }
    const { spId, file } = await this.fileOf(id, 'fileId');
    this.assertWritable(file, actor, id);
    let state = await this.list();
    const changes: Record<string, string | null> = {};
    for (const [name, value] of Object.entries(properties)) {
      if (typeof value !== 'string') throw new InvalidArgumentError(name, `Invalid parameter '${name}': a property value must be a string`, 'INVALID_PROPERTY');
      let internal = state.fields.get(name.toLowerCase());
      if (!internal) {
        // A field added to the library since the connector started.
        await this.loadFields(state);
        internal = state.fields.get(name.toLowerCase());
      }
      if (!internal || ATTRIBUTION.has(internal)) {
        throw new InvalidArgumentError(name, `Invalid parameter '${name}': not a column of the library '${state.title}'`, 'INVALID_PROPERTY');
      }
      changes[internal] = value === '' ? null : value;
    }
    state = await this.list();
    const fields = (expanded(file, 'ListItemAllFields') as Json | undefined) ?? {};
    const etag = str(fields, 'odata.etag') ?? (typeof (fields.__metadata as Json | undefined)?.etag === 'string' ? ((fields.__metadata as Json).etag as string) : '*');
    await this.merge(spId.uid, { ...changes, [ATTRIBUTION_FIELDS.modifiedBy]: actor.username }, id, etag);
    return fileId(spId.uid);
  }

  async checkOut(id: string, actor: Actor): Promise<string> {
    const { spId, file } = await this.fileOf(id, 'id');
    if (Number(file.CheckOutType ?? 2) !== 2) {
      // Checking out again as the holder is a no-op, so a retried request does not fail.
      this.assertWritable(file, actor, id);
      return fileId(spId.uid);
    }
    await this.post(`web/GetFileById(${literal(spId.uid)})/CheckOut()`, { errorContext: { id } });
    await this.merge(spId.uid, { [ATTRIBUTION_FIELDS.checkedOutBy]: actor.username }, id);
    return fileId(spId.uid);
  }

  async checkIn(id: string, actor: Actor, comment?: string): Promise<string> {
    if (comment !== undefined && (typeof comment !== 'string' || comment.length > MAX_COMMENT_LENGTH)) {
      throw new InvalidArgumentError('comment', `Invalid parameter 'comment': at most ${MAX_COMMENT_LENGTH} characters`);
    }
    const { spId, file } = await this.fileOf(id, 'id');
    if (Number(file.CheckOutType ?? 2) === 2) throw new ConflictError(`Document '${str(file, 'Name') ?? id}' is not checked out`, 'NOT_CHECKED_OUT', { id });
    this.assertWritable(file, actor, id);
    await this.merge(spId.uid, { [ATTRIBUTION_FIELDS.checkedOutBy]: null, [ATTRIBUTION_FIELDS.modifiedBy]: actor.username }, id);
    // checkintype 1 = MajorCheckIn: the gateway's versions are major versions.
    await this.post(`web/GetFileById(${literal(spId.uid)})/CheckIn(comment=@c,checkintype=1)${query({ '@c': literal(comment ?? '') })}`, { errorContext: { id } });
    return fileId(spId.uid);
  }

  async deleteItem(id: string, allVersions: boolean, actor: Actor): Promise<string> {
    const spId = parseId(id, 'id');
    if (spId.kind === 'version') throw new InvalidArgumentError('id', `Invalid parameter 'id': delete the document (${fileId(spId.uid)}), not one of its versions`);
    if (spId.kind === 'folder') {
      const state = await this.list();
      if (spId.uid === state.rootUid) throw new InvalidArgumentError('id', "Invalid parameter 'id': the library's root folder cannot be deleted");
      await this.post(`web/GetFolderById(${literal(spId.uid)})/recycle`, { errorContext: { id } });
      return id;
    }
    const file = await this.fileEntity(spId.uid, id);
    this.assertWritable(file, actor, id);
    const path = `web/GetFileById(${literal(spId.uid)})`;
    if (Number(file.CheckOutType ?? 2) !== 2) await this.post(`${path}/UndoCheckOut()`, { errorContext: { id } });
    if (allVersions !== false) {
      // To the recycle bin, as a SharePoint user's delete: recoverable by the site's owners.
      await this.post(`${path}/recycle`, { errorContext: { id } });
      return fileId(spId.uid);
    }
    const versions = await this.versionsOf(spId.uid, id);
    const previous = versions[versions.length - 1];
    if (!previous) {
      await this.post(`${path}/recycle`, { errorContext: { id } });
      return fileId(spId.uid);
    }
    // The current version cannot be deleted: restore the previous one (a new current version with its
    // content), then drop the restored one and the one being deleted, so the history is as before it.
    const currentId = Number(file.UIVersion);
    await this.post(`${path}/Versions/RestoreByLabel(versionlabel=@l)${query({ '@l': literal(str(previous, 'VersionLabel') ?? '') })}`, { errorContext: { id } });
    await this.post(`${path}/Versions/DeleteById(vid=${Number(previous.ID)})`, { errorContext: { id } });
    if (Number.isInteger(currentId)) await this.post(`${path}/Versions/DeleteById(vid=${currentId})`, { errorContext: { id } });
    return fileId(spId.uid);
  }

  private async folderAt(serverPath: string): Promise<{ uid: string } | 'file' | undefined> {
    const q = query({ '@p': literal(serverPath), $select: 'UniqueId' });
    const res = await this.http.json({ method: 'GET', url: `${this.api}/web/GetFolderByServerRelativePath(decodedurl=@p)${q}`, headers: { accept: ACCEPT }, accept: [404] });
    if (res.status === 200) return { uid: (str(readEntity(res.data), 'UniqueId') ?? '').toLowerCase() };
    const file = await this.http.request({ method: 'GET', url: `${this.api}/web/GetFileByServerRelativePath(decodedurl=@p)${q}`, headers: { accept: ACCEPT }, accept: [404] });
    await drain(file.body);
    return file.status === 200 ? 'file' : undefined;
  }

  async createFolder(path: string, actor: Actor): Promise<string> {
    const segments = parseAbsolutePath(path, 'path');
    if (segments.length === 0) throw new InvalidArgumentError('path', "Invalid parameter 'path': must name a folder below the library's root");
    const state = await this.list();
    let uid = state.rootUid;
    for (let i = 0; i < segments.length; i++) {
      const here = this.serverPath(state, segments.slice(0, i + 1));
      const found = await this.folderAt(here);
      if (found === 'file') throw new ConflictError(`A document named '${segments[i]}' exists at ${path}`, 'ALREADY_EXISTS', { path });
      if (found) {
        uid = found.uid;
        continue;
      }
      const q = query({ '@f': literal(this.serverPath(state, segments.slice(0, i))), '@n': literal(segments[i]) });
      const created = readEntity(await this.post(`web/GetFolderByServerRelativePath(decodedurl=@f)/Folders/AddUsingPath(decodedurl=@n)${q}`, { errorContext: { id: here, parameter: 'path' } }));
      uid = (str(created, 'UniqueId') ?? '').toLowerCase();
      await this.post(`web/GetFolderById(${literal(uid)})/ListItemAllFields`, {
        body: JSON.stringify({ [ATTRIBUTION_FIELDS.createdBy]: actor.username, [ATTRIBUTION_FIELDS.modifiedBy]: actor.username }),
        headers: { 'content-type': 'application/json;odata=nometadata', 'x-http-method': 'MERGE', 'if-match': '*' },
      });
    }
    return folderId(uid);
  }

  async deleteFolder(path: string, actor: Actor): Promise<string> {
    void actor;
    const segments = parseAbsolutePath(path, 'path');
    if (segments.length === 0) throw new InvalidArgumentError('path', "Invalid parameter 'path': the library's root folder cannot be deleted");
    const state = await this.list();
    const found = await this.folderAt(this.serverPath(state, segments));
    if (!found || found === 'file') throw new NotFoundError('folder', path);
    await this.post(`web/GetFolderById(${literal(found.uid)})/recycle`, { errorContext: { id: path } });
    return folderId(found.uid);
  }

  // ---- permissions ---------------------------------------------------------------------------------

  private securable(spId: SpId): string {
    return spId.kind === 'folder' ? `web/GetFolderById(${literal(spId.uid)})/ListItemAllFields` : `web/GetFileById(${literal(spId.uid)})/ListItemAllFields`;
  }

  private async assignments(spId: SpId, id: string): Promise<Array<{ principalId: number; principal: string; roles: Array<{ id: number; name: string }> }>> {
    const state = await this.list();
    if (spId.kind === 'folder' && spId.uid === state.rootUid) throw new InvalidArgumentError('id', "Invalid parameter 'id': the library's root folder has the library's permissions; set them on its items");
    const { items } = readCollection(await this.getJson(`${this.securable(spId)}/RoleAssignments${query({ $expand: 'Member,RoleDefinitionBindings' })}`, { id, parameter: 'id' }));
    return items.map((ra) => {
      const member = (expanded(ra, 'Member') as Json | undefined) ?? {};
      const roles = ((expanded(ra, 'RoleDefinitionBindings') as Json[] | undefined) ?? []).map((r) => ({ id: Number(r.Id), name: str(r, 'Name') ?? '' }));
      return { principalId: Number(ra.PrincipalId), principal: principalName(member), roles };
    });
  }

  async getAcl(id: string): Promise<string[]> {
    const spId = parseId(id, 'id');
    return (await this.assignments(spId, id))
      .filter((a) => a.roles.some((r) => r.name !== 'Limited Access'))
      .map((a) => `${a.principal}:${a.roles.filter((r) => r.name !== 'Limited Access').map((r) => ROLE_TO_PERMISSION[r.name.toLowerCase()] ?? r.name).join(',')}`);
  }

  private async breakInheritance(spId: SpId, id: string): Promise<void> {
    const unique = readPrimitive(await this.getJson(`${this.securable(spId)}/HasUniqueRoleAssignments`, { id }), 'HasUniqueRoleAssignments');
    // The first change copies the inherited assignments, so nobody loses access as a side effect.
    if (unique !== true) await this.post(`${this.securable(spId)}/breakroleinheritance(copyRoleAssignments=true,clearSubscopes=true)`, { errorContext: { id } });
  }

  private async principalId(principal: string): Promise<number> {
    const groups = readCollection(await this.getJson(`web/SiteGroups${query({ $select: 'Id,Title' })}`)).items;
    const group = groups.find((g) => (str(g, 'Title') ?? '').toLowerCase() === principal.toLowerCase());
    if (group) return Number(group.Id);
    const login = principal.includes('|') ? principal : `i:0#.f|membership|${principal}`;
    const user = readEntity(await this.post(`web/ensureuser`, { body: JSON.stringify({ logonName: login }), headers: { 'content-type': 'application/json;odata=nometadata' }, errorContext: { parameter: principal } }));
    return Number(user.Id);
  }

  private async roleDefinitionId(permission: string, principal: string): Promise<number> {
    const name = PERMISSION_TO_ROLE[permission.toLowerCase()] ?? permission;
    const res = await this.http.json({ method: 'GET', url: `${this.api}/web/RoleDefinitions/GetByName(@n)${query({ '@n': literal(name), $select: 'Id' })}`, headers: { accept: ACCEPT }, accept: [400, 404] });
    if (res.status !== 200) {
      throw new InvalidArgumentError(principal, `Invalid parameter '${principal}': unknown permission '${permission}' (read, write, all, or a permission level of the site)`);
    }
    return Number(readEntity(res.data).Id);
  }

  async applyAcl(id: string, entries: Record<string, string[]>, actor: Actor): Promise<string[]> {
    void actor;
    const spId = parseId(id, 'id');
    const plan: Array<{ principalId: number; roleIds: number[] }> = [];
    for (const [principal, permissions] of Object.entries(entries)) {
      const roleIds: number[] = [];
      for (const p of permissions) roleIds.push(await this.roleDefinitionId(p, principal));
      plan.push({ principalId: await this.principalId(principal), roleIds });
    }
    const current = await this.assignments(spId, id);
    await this.breakInheritance(spId, id);
    const base = `${this.securable(spId)}/RoleAssignments`;
    for (const { principalId, roleIds } of plan) {
      const had = current.find((a) => a.principalId === principalId)?.roles.map((r) => r.id) ?? [];
      for (const r of had) if (!roleIds.includes(r)) await this.post(`${base}/removeroleassignment(principalid=${principalId},roledefid=${r})`, { errorContext: { id } });
      for (const r of roleIds) if (!had.includes(r)) await this.post(`${base}/addroleassignment(principalid=${principalId},roledefid=${r})`, { errorContext: { id } });
    }
    return this.getAcl(id);
  }

  async removeAcl(id: string, principals: string[], actor: Actor): Promise<string[]> {
    void actor;
    const spId = parseId(id, 'id');
    const current = await this.assignments(spId, id);
    const targets = current.filter((a) => principals.some((p) => p.toLowerCase() === a.principal.toLowerCase()));
    if (targets.length === 0) return [];
    await this.breakInheritance(spId, id);
    for (const t of targets) {
      await this.post(`${this.securable(spId)}/RoleAssignments/GetByPrincipalId(${t.principalId})`, { headers: { 'x-http-method': 'DELETE' }, errorContext: { id } });
    }
    return targets.map((t) => t.principal);
  }

  // ---- sites ---------------------------------------------------------------------------------------

  private async webAt(siteId: string): Promise<string> {
    // A site id is the web's server-relative URL: it must lie below the configured site's origin.
    if (typeof siteId !== 'string' || !siteId.startsWith('/') || siteId.includes('..') || /[?#]/.test(siteId)) {
      throw new InvalidArgumentError('siteId', "Invalid parameter 'siteId': the server-relative URL of a site, e.g. /sites/team");
    }
    return `${new URL(this.params.siteUrl).origin}${siteId.replace(/\/+$/, '')}/_api`;
  }

  private siteOf(web: Json): Record<string, unknown> {
    return { id: str(web, 'ServerRelativeUrl'), name: str(web, 'Title'), url: str(web, 'Url'), description: str(web, 'Description') ?? '' };
  }

  async getAllSites(): Promise<unknown[]> {
    const web = readEntity(await this.getJson(`web${query({ $select: 'Title,ServerRelativeUrl,Url,Description' })}`));
    return [this.siteOf(web)];
  }

  async getSubSites(siteId: string): Promise<unknown[]> {
    const api = await this.webAt(siteId);
    const { data } = await this.http.json({ method: 'GET', url: `${api}/web/webs${query({ $select: 'Title,ServerRelativeUrl,Url,Description' })}`, headers: { accept: ACCEPT }, errorContext: { id: siteId } });
    return readCollection(data).items.map((w) => this.siteOf(w));
  }

  async getLibrariesForSite(siteId: string): Promise<unknown[]> {
    const api = await this.webAt(siteId);
    const { data } = await this.http.json({ method: 'GET', url: `${api}/web/lists${query({ $select: 'Id,Title,BaseTemplate,Hidden', $expand: 'RootFolder' })}`, headers: { accept: ACCEPT }, errorContext: { id: siteId } });
    return readCollection(data)
      .items.filter((l) => Number(l.BaseTemplate) === 101 && l.Hidden !== true)
      .map((l) => ({ id: str(l, 'Id'), name: str(l, 'Title'), path: str((expanded(l, 'RootFolder') as Json | undefined) ?? {}, 'ServerRelativeUrl') }));
  }
}

/** The principal id the gateway shows: a user's account (the claim's last part), a group's title. */
export function principalName(member: Json): string {
  if (Number(member.PrincipalType) === 8 || Number(member.PrincipalType) === 4) return str(member, 'Title') ?? str(member, 'LoginName') ?? '';
  const login = str(member, 'LoginName') ?? '';
  return login.includes('|') ? login.slice(login.lastIndexOf('|') + 1) : login;
}

