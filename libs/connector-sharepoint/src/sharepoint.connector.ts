import { Readable } from 'node:stream';
import {
  ConflictError,
  GatewayError,
  InvalidArgumentError,
  mimeTypeFor,
  NotFoundError,
  type AclCapability,
  type Actor,
  type ByteRange,
  type ChangeFeedCapability,
  type CheckInOutCapability,
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
  type VersionStampCapability,
  sliceBytes,
} from '@gateway/connector-api';
import { ATTRIBUTION_FIELDS, MicrosoftHttpClient, MsalTokenProvider, type MicrosoftRequest } from '@gateway/microsoft-client';
import { decodeCursor, encodeCursor, fileId, folderId, parseId, skiptokenOf, type SpId } from './ids';
import { checkName, joinPath, parseAbsolutePath } from './names';
import { ACCEPT, date, expanded, literal, query, readCollection, readEntity, str, type Json } from './odata';
import type { SharePointParams } from './params';
import { SharePointAcls } from './sharepoint-acls';
import { SharePointChangeFeed } from './sharepoint-change-feed';
import { SharePointCheckInOut } from './sharepoint-check-in-out';
import { SharePointContentUpdate } from './sharepoint-content-update';
import { SharePointFolders } from './sharepoint-folders';
import { ATTRIBUTION, SharePointPropertyUpdate } from './sharepoint-properties';
import { SHAREPOINT_NAMING_RULES } from './naming-rules';
import { SharePointMoves } from './sharepoint-moves';
import { SharePointSites } from './sharepoint-sites';
import { SharePointUpload } from './sharepoint-upload';
import { SharePointVersioning } from './sharepoint-versioning';
import { SharePointVersionStamps } from './sharepoint-version-stamps';

export { PERMISSION_TO_ROLE, principalName } from './sharepoint-acls';

/** The built-in fields that are not "properties" of an item. */
const FILE_SELECT = 'ListItemAllFields,Author,ModifiedBy,CheckedOutByUser';

export interface ListState {
  title: string;
  rootPath: string;
  rootUid: string;
  webPath: string;
  /** Custom field Title and InternalName → InternalName. */
  fields: Map<string, string>;
  /** InternalName → Title of the custom fields reported as properties. */
  titles: Map<string, string>;
}

/**
 * typeId `sharepoint`: one document library of a SharePoint site through the SharePoint REST API
 * (`/_api/web/...`), app-only with an Entra certificate. Decisions in the lib's README.
 *
 * This class keeps the core operations and the plumbing the groups share (calls, the library's
 * state, file entities, attribution); each capability group is a class of its own file
 * (sharepoint-<group>.ts) given this one.
 */
export class SharePointConnector implements ContentConnector {
  readonly id: string;
  readonly typeId = 'sharepoint';
  readonly description: string;
  readonly publicParams: Record<string, unknown>;
  readonly http: MicrosoftHttpClient;
  readonly tokens: MsalTokenProvider;
  readonly api: string;
  private listState?: Promise<ListState>;

  readonly contentUpdate: ContentUpdateCapability = new SharePointContentUpdate(this);
  readonly versioning: VersioningCapability = new SharePointVersioning(this);
  readonly checkInOut: CheckInOutCapability = new SharePointCheckInOut(this);
  readonly folders: FolderCapability = new SharePointFolders(this);
  readonly propertyUpdate: PropertyUpdateCapability = new SharePointPropertyUpdate(this);
  readonly namingRules = SHAREPOINT_NAMING_RULES;
  readonly move: MoveCapability = new SharePointMoves(this);
  readonly acls: AclCapability = new SharePointAcls(this);
  readonly sites: SiteCapability = new SharePointSites(this);
  readonly changeFeed: ChangeFeedCapability = new SharePointChangeFeed(this);
  readonly versionStamps: VersionStampCapability = new SharePointVersionStamps(this);
  readonly upload = new SharePointUpload(this);

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

  async getJson(path: string, errorContext?: MicrosoftRequest['errorContext']): Promise<unknown> {
    return (await this.http.json({ method: 'GET', url: `${this.api}/${path}`, headers: { accept: ACCEPT }, errorContext })).data;
  }

  async post(path: string, options: { body?: MicrosoftRequest['body']; headers?: Record<string, string>; errorContext?: MicrosoftRequest['errorContext'] } = {}): Promise<unknown> {
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

  list(): Promise<ListState> {
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

  async loadFields(state: ListState): Promise<void> {
    const items = await this.listFields('InternalName,Title,FromBaseType,Hidden,ReadOnlyField');
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

  /** The library's fields, with the `select`ed members. */
  async listFields(select: string): Promise<Json[]> {
    return readCollection(await this.getJson(`${this.listPath()}/fields${this.listQuery({ $select: select })}`)).items;
  }

  /** The gateway path of a server-relative URL; anything outside the library is refused. */
  private gatewayPath(state: ListState, serverRelative: string): string {
    if (serverRelative.toLowerCase() === state.rootPath.toLowerCase()) return '/';
    if (!serverRelative.toLowerCase().startsWith(state.rootPath.toLowerCase() + '/')) throw new NotFoundError('item', serverRelative);
    return serverRelative.slice(state.rootPath.length);
  }

  serverPath(state: ListState, segments: string[]): string {
    return segments.length ? `${state.rootPath}/${segments.join('/')}` : state.rootPath;
  }

  async fileEntity(uid: string, id: string, parameter = 'id'): Promise<Json> {
    return readEntity(await this.getJson(`web/GetFileById(${literal(uid)})${query({ $expand: FILE_SELECT })}`, { id, parameter }));
  }

  private async folderEntity(uid: string, id: string, parameter = 'id'): Promise<Json> {
    return readEntity(await this.getJson(`web/GetFolderById(${literal(uid)})${query({ $expand: 'ListItemAllFields' })}`, { id, parameter }));
  }

  async fileOf(id: string, parameter: string): Promise<{ spId: SpId; file: Json }> {
    const spId = parseId(id, parameter);
    if (spId.kind !== 'file') throw new InvalidArgumentError(parameter, `Invalid parameter '${parameter}': '${id}' is not a document (a current version is expected)`);
    return { spId, file: await this.fileEntity(spId.uid, id, parameter) };
  }

  toFileInfo(state: ListState, file: Json, id?: string): ItemInfo {
    const fields = (expanded(file, 'ListItemAllFields') as Json | undefined) ?? {};
    const name = str(file, 'Name') ?? '';
    const uid = (str(file, 'UniqueId') ?? '').toLowerCase();
    const properties: Record<string, string | null> = {};
    for (const [internal, title] of state.titles) if (internal in fields) properties[title] = fieldText(fields[internal]);
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
  async merge(uid: string, changes: Record<string, string | null>, id: string, ifMatch = '*'): Promise<void> {
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
  assertWritable(file: Json, actor: Actor, id: string): void {
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

  async versionsOf(uid: string, id: string): Promise<Json[]> {
    return readCollection(await this.getJson(`web/GetFileById(${literal(uid)})/Versions`, { id })).items;
  }

  // ---- writing ---------------------------------------------------------------------------------------

  private async folderPathOf(id: string, parameter: string): Promise<string> {
    const spId = parseId(id, parameter);
    if (spId.kind !== 'folder') throw new InvalidArgumentError(parameter, `Invalid parameter '${parameter}': '${id}' is not a folder`, 'NOT_A_FOLDER');
    const state = await this.list();
    if (spId.uid === state.rootUid) return state.rootPath;
    return str(await this.folderEntity(spId.uid, id, parameter), 'ServerRelativeUrl') ?? '';
  }

  async createFile(input: NewFile, actor: Actor): Promise<string> {
    const name = checkName(input.fileName, 'fileName');
    if (input.type !== undefined && input.type !== 'SP.File') {
      throw new InvalidArgumentError('type', `Invalid parameter 'type': '${input.type}' is not a document type of this repository (the types call lists them)`);
    }
    const folder = await this.folderPathOf(input.folderId, 'folderId');
    const uid = await this.upload.sendContent(input.content, { create: { folder, name } }, input.folderId);
    await this.merge(uid, { [ATTRIBUTION_FIELDS.createdBy]: actor.username, [ATTRIBUTION_FIELDS.modifiedBy]: actor.username }, fileId(uid));
    return fileId(uid);
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

}

/** A list field's value as the gateway's properties carry it: a lookup or person field (an object) as its JSON. */
function fieldText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return value.toString();
  return JSON.stringify(value);
}
