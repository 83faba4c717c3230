/**
 * The SharePoint REST API of the simulator (`{web}/_api/...` and `{web}/_vti_history/...`): a
 * handler taking (req, res, url) with a context that verifies bearer tokens, as the common server
 * calls it. What it implements and how closely is listed in ../README.md.
 */
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import type { Transform } from 'node:stream';
import {
  arg,
  collectionBody,
  contentTypeOf,
  entityBody,
  errorBody,
  formatOf,
  ODataSyntaxError,
  parseApiPath,
  primitiveBody,
  type Entity,
  type Format,
  type Segment,
  type ShapeOptions,
} from './odata';
import { CHANGE_TYPE, listChangeToken, SimChangeLog } from './changes';
import { encodeInternalName, ROLE_DEFINITIONS, SimState, type ItemRec, type ListRec, type RoleAssignmentRec, type UserRec, type WebRec } from './state';

export interface ApiContext {
  origin: string;
  dir: string;
  tenantId: string;
  /** Verifies `Authorization`; the app id of the caller, or the reason to refuse. */
  verifyBearer(header: string | undefined): { ok: true; appId: string; viaSecret: boolean } | { ok: false; message: string };
  /** A pass-through that cuts the connection mid-download when the fault switch says so. */
  downloadStream?(res: ServerResponse): Transform | undefined;
}

class SpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const NOT_FOUND = (what = 'File Not Found.') => new SpError(404, '-2147024894, System.IO.FileNotFoundException', what);
const ALREADY_EXISTS = (p: string) => new SpError(400, '-2130575257, Microsoft.SharePoint.SPException', `A file or folder with the name ${p} already exists.`);
const BAD_REQUEST = (m: string) => new SpError(400, '-1, Microsoft.SharePoint.Client.InvalidClientQueryException', m);
const CHECKED_OUT = (p: string, by: string) =>
  new SpError(423, '-2130575306, Microsoft.SharePoint.SPFileCheckOutException', `The file "${p}" is checked out for editing by ${by}.`);
const VERSION_CONFLICT = () => new SpError(412, '-2130575305, Microsoft.SharePoint.SPException', 'The version of the item does not match (version conflict).');

const DIGEST_TIMEOUT = 1800;

interface Call {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  web: WebRec;
  webUrl: string;
  format: Format;
  method: string;
  principal: UserRec;
}

type Target =
  | { kind: 'web'; web: WebRec }
  | { kind: 'webs'; web: WebRec }
  | { kind: 'site' }
  | { kind: 'lists'; web: WebRec }
  | { kind: 'list'; list: ListRec }
  | { kind: 'items'; list: ListRec }
  | { kind: 'fields'; list: ListRec }
  | { kind: 'folder'; path: string; list?: ListRec }
  | { kind: 'files'; folder: string }
  | { kind: 'folders'; folder: string | null; web: WebRec }
  | { kind: 'file'; item: ItemRec }
  | { kind: 'item'; item: ItemRec }
  | { kind: 'versions'; item: ItemRec }
  | { kind: 'version'; item: ItemRec; id: number }
  | { kind: 'roleassignments'; securable: Securable }
  | { kind: 'roledefinitions' }
  | { kind: 'roledefinition'; def: (typeof ROLE_DEFINITIONS)[number] }
  | { kind: 'siteusers' }
  | { kind: 'user'; user: UserRec }
  | { kind: 'regionalsettings' }
  | { kind: 'timezone' };

type Securable = { kind: 'web'; web: WebRec } | { kind: 'list'; list: ListRec } | { kind: 'item'; item: ItemRec };

export function createSharePointApi(ctx: ApiContext) {
  const state = new SimState(ctx.dir);
  const changeLog = new SimChangeLog(state.data);
  const logChange = (item: ItemRec, type: number) => changeLog.record({ listId: item.listId, type, itemId: item.id, uniqueId: item.uniqueId, folder: item.kind === 'folder', path: item.path });
  const digests = new Map<string, number>();

  // ---- helpers over state ----------------------------------------------------------------------

  const isoNow = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  const listOf = (item: ItemRec) => state.data.lists.find((l) => l.id === item.listId)!;
  const parentPath = (p: string) => p.slice(0, p.lastIndexOf('/'));
  const nameOf = (p: string) => p.slice(p.lastIndexOf('/') + 1);
  const loginOf = (appId: string) => `i:0i.t|ms.sp.ext|${appId}@${ctx.tenantId}`;

  function resolvePath(call: Call, raw: string): string {
    let p = raw.replace(/\/+$/, '');
    if (/^https?:\/\//i.test(p)) p = new URL(p).pathname;
    if (!p.startsWith('/')) p = `${call.web.path}/${p}`;
    return p.replace(/\/{2,}/g, '/');
  }

  function folderExists(p: string): boolean {
    const list = state.listOfPath(p);
    if (!list) return false;
    if (p.toLowerCase() === list.rootPath.toLowerCase()) return true;
    return state.itemByPath(p)?.kind === 'folder';
  }

  function children(p: string): ItemRec[] {
    const key = p.toLowerCase() + '/';
    return state.data.items.filter((i) => i.path.toLowerCase().startsWith(key) && !i.path.slice(key.length).includes('/'));
  }

  function checkWritable(call: Call, item: ItemRec): void {
    const holder = item.file?.checkedOutBy;
    if (holder !== undefined && holder !== call.principal.id) throw CHECKED_OUT(item.path, state.user(holder)?.loginName ?? String(holder));
  }

  function fileEtag(item: ItemRec): string {
    return `"{${item.uniqueId.toUpperCase()}},${item.file!.contentVersion + item.itemVersion}"`;
  }

  function visibleContent(call: Call, item: ItemRec): { blob: string; size: number } {
    const f = item.file!;
    if (f.draft && f.checkedOutBy === call.principal.id) return f.draft;
    return { blob: f.blob, size: f.size };
  }

  // ---- entities ----------------------------------------------------------------------------------

  const api = (call: Call) => `${call.webUrl}/_api`;
  const userEntity = (call: Call, u: UserRec): Entity => ({
    type: u.principalType === 8 ? 'SP.Group' : 'SP.User',
    uri: `${api(call)}/Web/${u.principalType === 8 ? 'SiteGroups' : 'SiteUsers'}/GetById(${u.id})`,
    props: { Id: u.id, IsHiddenInUI: false, LoginName: u.loginName, Title: u.title, PrincipalType: u.principalType, ...(u.principalType === 1 ? { Email: u.email, IsSiteAdmin: false } : {}) },
  });

  function fileEntity(call: Call, item: ItemRec): Entity {
    const f = item.file!;
    const content = visibleContent(call, item);
    const major = f.uiVersion / 512;
    const uri = `${api(call)}/Web/GetFileByServerRelativePath(decodedurl='${encodeURIComponent(item.path.replace(/'/g, "''"))}')`;
    const holder = f.checkedOutBy !== undefined ? state.user(f.checkedOutBy) : undefined;
    return {
      type: 'SP.File',
      uri,
      props: {
        CheckInComment: f.comment,
        CheckOutType: holder ? 0 : 2,
        ContentTag: `{${item.uniqueId.toUpperCase()}},${f.contentVersion},${item.itemVersion}`,
        CustomizedPageStatus: 0,
        ETag: fileEtag(item),
        Exists: true,
        IrmEnabled: false,
        Length: String(content.size),
        Level: holder ? 255 : 1,
        LinkingUri: null,
        LinkingUrl: '',
        MajorVersion: major,
        MinorVersion: 0,
        Name: nameOf(item.path),
        ServerRelativeUrl: item.path,
        TimeCreated: item.created,
        TimeLastModified: item.modified,
        Title: item.fields.Title ?? null,
        UIVersion: f.uiVersion,
        UIVersionLabel: `${major}.0`,
        UniqueId: item.uniqueId,
      },
      nav: {
        Author: () => userEntity(call, state.user(item.authorId)!),
        CheckedOutByUser: () => holder ? userEntity(call, holder) : null,
        ListItemAllFields: () => itemEntity(call, item),
        LockedByUser: () => null,
        ModifiedBy: () => userEntity(call, state.user(item.editorId)!),
        Versions: () => f.versions.map((v) => versionEntity(call, item, v.id))},
    };
  }

  function folderEntity(call: Call, p: string): Entity {
    const list = state.listOfPath(p);
    const item = state.itemByPath(p);
    const isRoot = !!list && p.toLowerCase() === list.rootPath.toLowerCase();
    const kids = children(p);
    return {
      type: 'SP.Folder',
      uri: `${api(call)}/Web/GetFolderByServerRelativePath(decodedurl='${encodeURIComponent(p.replace(/'/g, "''"))}')`,
      props: {
        Exists: true,
        IsWOPIEnabled: false,
        ItemCount: kids.length,
        Name: nameOf(p),
        ProgID: null,
        ServerRelativeUrl: p,
        TimeCreated: item?.created ?? list?.created ?? isoNow(),
        TimeLastModified: item?.modified ?? list?.created ?? isoNow(),
        UniqueId: isRoot ? list.rootFolderId : item!.uniqueId,
        WelcomePage: '',
      },
      nav: {
        Files: () => kids.filter((k) => k.kind === 'file').map((k) => fileEntity(call, k)),
        Folders: () => kids.filter((k) => k.kind === 'folder').map((k) => folderEntity(call, k.path)),
        ListItemAllFields: () => item ? itemEntity(call, item) : null,
        ParentFolder: () => null,
        Properties: () => null},
    };
  }

  function itemEntity(call: Call, item: ItemRec): Entity {
    const list = listOf(item);
    const props: Record<string, unknown> = {
      FileSystemObjectType: item.kind === 'file' ? 0 : 1,
      Id: item.id,
      ServerRedirectedEmbedUri: null,
      ServerRedirectedEmbedUrl: '',
      ContentTypeId: item.kind === 'file' ? '0x0101008D26C6F4A0A35C4C9B6A0E7F1D2C3B4A' : '0x0120001A5F1B0F0E3A9B4D8E7C6B5A4F3E2D1C',
      Title: item.fields.Title ?? null,
      ComplianceAssetId: null,
      ID: item.id,
      Modified: item.modified,
      Created: item.created,
      AuthorId: item.authorId,
      EditorId: item.editorId,
      OData__CopySource: null,
      CheckoutUserId: item.file?.checkedOutBy ?? null,
      Attachments: false,
      OData__UIVersionString: item.file ? `${item.file.uiVersion / 512}.0` : '1.0',
      GUID: item.guid,
      FileLeafRef: nameOf(item.path),
      FileRef: item.path,
      FileDirRef: parentPath(item.path),
      UniqueId: item.uniqueId,
    };
    for (const field of list.fields) if (!field.fromBaseType) props[field.internalName] = item.fields[field.internalName] ?? null;
    return {
      type: `SP.Data.${list.entityTypeName}Item`,
      uri: `${api(call)}/Web/Lists(guid'${list.id}')/Items(${item.id})`,
      id: item.guid,
      etag: `"${item.itemVersion}"`,
      props,
      nav: {
        File: () => item.kind === 'file' ? fileEntity(call, item) : null,
        Folder: () => item.kind === 'folder' ? folderEntity(call, item.path) : null,
        Author: () => userEntity(call, state.user(item.authorId)!),
        Editor: () => userEntity(call, state.user(item.editorId)!),
        RoleAssignments: () => effectiveRoles({ kind: 'item', item }).map((r) => roleAssignmentEntity(call, r))},
    };
  }

  /** The simulated web's regional settings: English (United States), 12-hour clock, UTC. */
  function regionalSettingsEntity(call: Call): Entity {
    return {
      type: 'SP.RegionalSettings',
      uri: `${api(call)}/Web/RegionalSettings`,
      props: { LocaleId: 1033, Time24: false, DateFormat: 0, FirstDayOfWeek: 0 },
      nav: { TimeZone: () => timeZoneEntity(call) },
    };
  }

  function timeZoneEntity(call: Call): Entity {
    return {
      type: 'SP.TimeZone',
      uri: `${api(call)}/Web/RegionalSettings/TimeZone`,
      props: { Description: '(UTC) Coordinated Universal Time', Id: 93, Information: { Bias: 0, DaylightBias: 0, StandardBias: 0 } },
    };
  }

  /**
   * SP.ListItem.ValidateUpdateListItem(formValues, bNewDocumentUpdate): each value a string as the web's locale
   * writes it (en-US here: dates `M/D/YYYY h:mm AM|PM`, local time, to the minute). bNewDocumentUpdate: true
   * overwrites the current version (UpdateOverwriteVersion): no version is added, and the next version archives
   * these values. Answers one ListItemFormUpdateValue per field, HasException where a value was refused.
   */
  function validateUpdate(call: Call, item: ItemRec, body: Record<string, unknown>): void {
    if (item.file) checkWritable(call, item);
    const values = body.formValues;
    if (!Array.isArray(values)) throw BAD_REQUEST('The parameter formValues must be an array.');
    const list = listOf(item);
    const answers: Array<Record<string, unknown>> = [];
    const changes: Array<() => void> = [];
    for (const raw of values as Array<Record<string, unknown>>) {
      const name = typeof raw?.FieldName === 'string' ? raw.FieldName : '';
      const value = typeof raw?.FieldValue === 'string' ? raw.FieldValue : '';
      let error = '';
      if (name === 'Created' || name === 'Modified') {
        const when = parseUsDateTime(value);
        if (when === undefined) error = `Invalid date/time value`;
        else changes.push(() => (name === 'Created' ? (item.created = when) : (item.modified = when)));
      } else {
        const field = list.fields.find((f) => f.internalName === name);
        if (!field || field.fromBaseType || field.readOnly) error = `Column '${name}' does not exist or is read-only.`;
        else if (value !== '' && !fieldTakes(field, value)) error = `Invalid value for '${name}'.`;
        else changes.push(() => (item.fields[name] = value === '' ? null : value));
      }
      answers.push({ ErrorCode: error ? -2146232832 : 0, ErrorMessage: error || null, FieldName: name, FieldValue: value, HasException: error !== '', ItemId: item.id });
    }
    if (answers.every((a) => a.HasException === false)) {
      const modified = item.modified;
      for (const change of changes) change();
      // A new document update keeps what the form set; an ordinary one would be a change of its own, a new version.
      if (body.bNewDocumentUpdate !== true) {
        if (item.file) newVersionOf(call, item, { blob: item.file.blob, size: item.file.size });
        else item.modified = isoNow();
      } else if (!values.some((v: Record<string, unknown>) => v?.FieldName === 'Modified')) item.modified = modified;
      item.itemVersion++;
      logChange(item, CHANGE_TYPE.Update);
      state.save();
    }
    send(call, 200, call.format === 'verbose' ? { d: { ValidateUpdateListItem: { results: answers } } } : { value: answers });
  }

  function versionEntity(call: Call, item: ItemRec, id: number): Entity {
    const v = item.file!.versions.find((x) => x.id === id)!;
    const webRel = item.path.slice(call.web.path.length + 1);
    return {
      type: 'SP.FileVersion',
      uri: `${fileEntity(call, item).uri}/Versions(${id})`,
      props: {
        CheckInComment: v.comment,
        Created: v.created,
        ID: v.id,
        IsCurrentVersion: false,
        Length: String(v.size),
        Size: v.size,
        Url: `_vti_history/${v.id}/${webRel}`,
        VersionLabel: v.label,
      },
      nav: { CreatedBy: () => userEntity(call, state.user(v.createdBy) ?? call.principal) },
    };
  }

  function listEntity(call: Call, list: ListRec): Entity {
    return {
      type: 'SP.List',
      uri: `${api(call)}/Web/Lists(guid'${list.id}')`,
      props: {
        BaseTemplate: 101,
        BaseType: 1,
        Created: list.created,
        Description: '',
        EnableMinorVersions: false,
        EnableVersioning: true,
        EntityTypeName: list.entityTypeName,
        Hidden: false,
        Id: list.id,
        ItemCount: state.data.items.filter((i) => i.listId === list.id).length,
        CurrentChangeToken: { StringValue: changeLog.currentToken(list.id) },
        ListItemEntityTypeFullName: `SP.Data.${list.entityTypeName}Item`,
        Title: list.title,
      },
      nav: { RootFolder: () => folderEntity(call, list.rootPath), Fields: () => list.fields.map((f) => fieldEntity(call, list, f)) },
    };
  }

  function fieldEntity(call: Call, list: ListRec, f: ListRec['fields'][number]): Entity {
    return {
      type: f.typeAsString === 'Text' ? 'SP.FieldText' : 'SP.Field',
      uri: `${api(call)}/Web/Lists(guid'${list.id}')/Fields(guid'${f.id}')`,
      props: {
        CanBeDeleted: !f.fromBaseType,
        FieldTypeKind: f.fieldTypeKind,
        FromBaseType: f.fromBaseType,
        Hidden: f.hidden,
        Id: f.id,
        InternalName: f.internalName,
        ReadOnlyField: f.readOnly,
        StaticName: f.internalName,
        Title: f.title,
        TypeAsString: f.typeAsString,
        ...(f.typeAsString === 'Text' ? { MaxLength: TEXT_MAX_LENGTH } : {}),
      },
    };
  }

  function webEntity(call: Call, web: WebRec): Entity {
    return {
      type: 'SP.Web',
      uri: `${ctx.origin}${web.path}/_api/Web`,
      props: {
        Created: web.created,
        Description: web.description,
        Id: web.id,
        Language: 1033,
        ServerRelativeUrl: web.path,
        Title: web.title,
        Url: `${ctx.origin}${web.path}`,
        WebTemplate: 'STS',
      },
      nav: { Webs: () => subWebs(web).map((w) => webEntity(call, w)), Lists: () => state.data.lists.filter((l) => l.webPath === web.path).map((l) => listEntity(call, l)) },
    };
  }

  const subWebs = (web: WebRec) => state.data.webs.filter((w) => w.path.startsWith(web.path + '/') && !w.path.slice(web.path.length + 1).includes('/'));

  const roleDefEntity = (call: Call, d: (typeof ROLE_DEFINITIONS)[number]): Entity => ({
    type: 'SP.RoleDefinition',
    uri: `${api(call)}/Web/RoleDefinitions(${d.id})`,
    props: { BasePermissions: { High: '0', Low: '0' }, Description: d.description, Hidden: false, Id: d.id, Name: d.name, Order: d.order, RoleTypeKind: d.roleTypeKind },
  });

  function roleAssignmentEntity(call: Call, r: RoleAssignmentRec): Entity {
    const member = state.user(r.principalId)!;
    return {
      type: 'SP.RoleAssignment',
      uri: `${api(call)}/Web/RoleAssignments/GetByPrincipalId(${r.principalId})`,
      props: { PrincipalId: r.principalId },
      nav: {
        Member: () => userEntity(call, member),
        RoleDefinitionBindings: () => r.roleDefIds.map((id) => roleDefEntity(call, ROLE_DEFINITIONS.find((d) => d.id === id)!))},
    };
  }

  // ---- role assignments --------------------------------------------------------------------------

  function ownRoles(s: Securable): RoleAssignmentRec[] | undefined {
    return s.kind === 'web' ? s.web.roles : s.kind === 'list' ? s.list.roles : s.item.roles;
  }

  function parentSecurable(s: Securable): Securable | undefined {
    if (s.kind === 'item') {
      const parent = state.itemByPath(parentPath(s.item.path));
      return parent ? { kind: 'item', item: parent } : { kind: 'list', list: listOf(s.item) };
    }
    if (s.kind === 'list') return { kind: 'web', web: state.data.webs.find((w) => w.path === s.list.webPath)! };
    const parentWeb = state.webOfPath(parentPath(s.web.path));
    return parentWeb ? { kind: 'web', web: parentWeb } : undefined;
  }

  function effectiveRoles(s: Securable): RoleAssignmentRec[] {
    for (let cur: Securable | undefined = s; cur; cur = parentSecurable(cur)) {
      const own = ownRoles(cur);
      if (own) return own;
    }
    return [];
  }

  function setOwnRoles(s: Securable, roles: RoleAssignmentRec[] | undefined): void {
    if (s.kind === 'web') s.web.roles = roles;
    else if (s.kind === 'list') s.list.roles = roles;
    else s.item.roles = roles;
  }

  // ---- path resolution ---------------------------------------------------------------------------

  function fileAt(call: Call, raw: string): ItemRec {
    const item = state.itemByPath(resolvePath(call, raw));
    if (!item || item.kind !== 'file') throw NOT_FOUND();
    return item;
  }

  function folderAt(call: Call, raw: string): Target {
    const p = resolvePath(call, raw);
    if (!folderExists(p)) throw NOT_FOUND();
    return { kind: 'folder', path: p, list: state.listOfPath(p) };
  }

  function str(v: unknown, name: string): string {
    if (typeof v !== 'string') throw BAD_REQUEST(`The parameter ${name} must be a string.`);
    return v;
  }

  function num(v: unknown, name: string): number {
    if (typeof v !== 'number') throw BAD_REQUEST(`The parameter ${name} must be a number.`);
    return v;
  }

  /** Walks the segments to the addressed resource; the last segment may be an operation, returned apart. */
  function walk(call: Call, segments: Segment[]): { target: Target; op?: Segment } {
    let target: Target = { kind: 'web', web: call.web };
    let i = 0;
    if (segments[0]?.key === 'web') i = 1;
    else if (segments[0]?.key === 'site') return { target: { kind: 'site' }, op: segments[1] };
    else if (segments[0]?.key === 'sp.userprofiles.peoplemanager') throw BAD_REQUEST('Not supported by the simulator.');
    else throw BAD_REQUEST(`Resource '${segments[0]?.name ?? ''}' not found.`);
    for (; i < segments.length; i++) {
      const s = segments[i];
      const next = nextTarget(call, target, s);
      if (next === undefined) return { target, op: s, ...(i < segments.length - 1 ? badTail(segments[i + 1]) : {}) };
      target = next;
    }
    return { target };
  }

  function badTail(s: Segment): never {
    throw BAD_REQUEST(`Cannot find resource for the request ${s.name}.`);
  }

  /** The resource a navigation segment leads to, or undefined when the segment is an operation. */
  function nextTarget(call: Call, t: Target, s: Segment): Target | undefined {
    const k = s.key;
    switch (t.kind) {
      case 'web': {
        if (k === 'webs') return { kind: 'webs', web: t.web };
        if (k === 'lists' && !s.args) return { kind: 'lists', web: t.web };
        if (k === 'lists') return listById(str(arg(s, 'id'), 'id'));
        if (k === 'getlist') return listOfRoot(call, str(arg(s, 'strUrl'), 'strUrl'));
        if (k === 'getfolderbyserverrelativeurl') return folderAt(call, str(arg(s, 'serverrelativeurl'), 'serverRelativeUrl'));
        if (k === 'getfolderbyserverrelativepath') return folderAt(call, str(arg(s, 'decodedurl'), 'decodedurl'));
        if (k === 'getfolderbyid') {
          const id = str(arg(s, 'uniqueid'), 'uniqueId');
          const list = state.data.lists.find((l) => l.rootFolderId === id.toLowerCase());
          if (list) return { kind: 'folder', path: list.rootPath, list };
          const item = state.itemByUniqueId(id);
          if (!item || item.kind !== 'folder') throw NOT_FOUND();
          return { kind: 'folder', path: item.path, list: listOf(item) };
        }
        if (k === 'getfilebyserverrelativeurl') return { kind: 'file', item: fileAt(call, str(arg(s, 'serverrelativeurl'), 'serverRelativeUrl')) };
        if (k === 'getfilebyserverrelativepath') return { kind: 'file', item: fileAt(call, str(arg(s, 'decodedurl'), 'decodedurl')) };
        if (k === 'getfilebyid') {
          const item = state.itemByUniqueId(str(arg(s, 'uniqueid'), 'uniqueId'));
          if (!item || item.kind !== 'file') throw NOT_FOUND();
          return { kind: 'file', item };
        }
        if (k === 'folders' && !s.args) return { kind: 'folders', folder: null, web: t.web };
        if (k === 'roleassignments') return { kind: 'roleassignments', securable: { kind: 'web', web: t.web } };
        if (k === 'regionalsettings') return { kind: 'regionalsettings' };
        if (k === 'roledefinitions' && !s.args) return { kind: 'roledefinitions' };
        if (k === 'roledefinitions') return roleDef(num(arg(s, 'id'), 'id'));
        if (k === 'siteusers' || k === 'sitegroups') return s.args ? userById(num(arg(s, 'id'), 'id')) : { kind: 'siteusers' };
        return undefined;
      }
      case 'lists':
        if (k === 'getbytitle') {
          const title = str(arg(s, 'listtitle'), 'listTitle').toLowerCase();
          const list = state.data.lists.find((l) => l.webPath === t.web.path && l.title.toLowerCase() === title);
          if (!list) throw new SpError(404, '-1, System.ArgumentException', `List '${arg(s, 'listtitle')}' does not exist at site with URL '${ctx.origin}${t.web.path}'.`);
          return { kind: 'list', list };
        }
        if (k === 'getbyid') return listById(str(arg(s, 'id'), 'id'));
        return undefined;
      case 'list':
        if (k === 'items' && !s.args) return { kind: 'items', list: t.list };
        if (k === 'items' || k === 'getitembyid') {
          const id = num(arg(s, 'id'), 'id');
          const item = state.data.items.find((x) => x.listId === t.list.id && x.id === id);
          if (!item) throw new SpError(404, '-2147024809, System.ArgumentException', 'Item does not exist. It may have been deleted by another user.');
          return { kind: 'item', item };
        }
        if (k === 'rootfolder') return { kind: 'folder', path: t.list.rootPath, list: t.list };
        if (k === 'fields') return { kind: 'fields', list: t.list };
        if (k === 'roleassignments') return { kind: 'roleassignments', securable: { kind: 'list', list: t.list } };
        return undefined;
      case 'items':
        if (k === 'getbyid') return nextTarget(call, { kind: 'list', list: t.list }, { ...s, key: 'getitembyid' });
        return undefined;
      case 'folder': {
        if (k === 'files' && !s.args) return { kind: 'files', folder: t.path };
        if (k === 'files') return { kind: 'file', item: fileAt(call, `${t.path}/${str(arg(s, 'url'), 'url')}`) };
        if (k === 'folders' && !s.args) return { kind: 'folders', folder: t.path, web: call.web };
        if (k === 'folders') return folderAt(call, `${t.path}/${str(arg(s, 'url'), 'url')}`);
        if (k === 'listitemallfields') {
          const item = state.itemByPath(t.path);
          if (!item) throw BAD_REQUEST('The root folder of a list has no list item.');
          return { kind: 'item', item };
        }
        if (k === 'parentfolder') return folderAt(call, parentPath(t.path));
        return undefined;
      }
      case 'files':
        if (k === 'getbyurl') return { kind: 'file', item: fileAt(call, `${t.folder}/${str(arg(s, 'url'), 'url')}`) };
        return undefined;
      case 'file':
        if (k === 'listitemallfields') return { kind: 'item', item: t.item };
        if (k === 'versions' && !s.args) return { kind: 'versions', item: t.item };
        if (k === 'versions') return versionOf(t.item, num(arg(s, 'id'), 'id'));
        return undefined;
      case 'versions':
        if (k === 'getbyid') return versionOf(t.item, num(arg(s, 'versionid'), 'versionId'));
        return undefined;
      case 'regionalsettings':
        if (k === 'timezone') return { kind: 'timezone' };
        return undefined;
      case 'item':
        if (k === 'file' && t.item.kind === 'file') return { kind: 'file', item: t.item };
        if (k === 'folder' && t.item.kind === 'folder') return { kind: 'folder', path: t.item.path, list: listOf(t.item) };
        if (k === 'roleassignments') return { kind: 'roleassignments', securable: { kind: 'item', item: t.item } };
        return undefined;
      case 'roledefinitions':
        if (k === 'getbyname') {
          const name = str(arg(s, 'name'), 'name').toLowerCase();
          const def = ROLE_DEFINITIONS.find((d) => d.name.toLowerCase() === name);
          if (!def) throw new SpError(400, '-2146232832, Microsoft.SharePoint.SPException', 'Permission level cannot be found.');
          return { kind: 'roledefinition', def };
        }
        if (k === 'getbyid') return roleDef(num(arg(s, 'id'), 'id'));
        if (k === 'getbytype') {
          const def = ROLE_DEFINITIONS.find((d) => d.roleTypeKind === num(arg(s, 'roletype'), 'roleType'));
          if (!def) throw NOT_FOUND('Permission level cannot be found.');
          return { kind: 'roledefinition', def };
        }
        return undefined;
      case 'siteusers':
        if (k === 'getbyid') return userById(num(arg(s, 'id'), 'id'));
        if (k === 'getbyloginname') {
          const login = str(arg(s, 'loginname'), 'loginName').toLowerCase();
          const user = state.data.users.find((u) => u.loginName.toLowerCase() === login);
          if (!user) throw new SpError(404, '-2146232832, Microsoft.SharePoint.SPException', 'User cannot be found.');
          return { kind: 'user', user };
        }
        if (k === 'getbyemail') {
          const email = str(arg(s, 'emailaddress'), 'emailAddress').toLowerCase();
          const user = state.data.users.find((u) => u.email.toLowerCase() === email);
          if (!user) throw new SpError(404, '-2146232832, Microsoft.SharePoint.SPException', 'User cannot be found.');
          return { kind: 'user', user };
        }
        return undefined;
      default:
        return undefined;
    }
  }

  function listById(id: string): Target {
    const list = state.data.lists.find((l) => l.id === id.toLowerCase());
    if (!list) throw new SpError(404, '-1, System.ArgumentException', 'List does not exist.');
    return { kind: 'list', list };
  }

  function listOfRoot(call: Call, raw: string): Target {
    const p = resolvePath(call, raw).toLowerCase();
    const list = state.data.lists.find((l) => l.rootPath.toLowerCase() === p);
    if (!list) throw NOT_FOUND('List does not exist.');
    return { kind: 'list', list };
  }

  function versionOf(item: ItemRec, id: number): Target {
    if (!item.file!.versions.some((v) => v.id === id)) throw NOT_FOUND('Version does not exist.');
    return { kind: 'version', item, id };
  }

  function roleDef(id: number): Target {
    const def = ROLE_DEFINITIONS.find((d) => d.id === id);
    if (!def) throw NOT_FOUND('Permission level cannot be found.');
    return { kind: 'roledefinition', def };
  }

  function userById(id: number): Target {
    const user = state.user(id);
    if (!user) throw new SpError(404, '-2146232832, Microsoft.SharePoint.SPException', 'User cannot be found.');
    return { kind: 'user', user };
  }

  // ---- writing content -----------------------------------------------------------------------------

  /** Streams the request body to a new blob; the caller commits it (rename into the record) or drops it. */
  async function receiveBlob(req: IncomingMessage, append?: string): Promise<{ blob: string; size: number }> {
    const blob = append ?? state.newBlobName();
    const target = state.blobPath(blob);
    await pipeline(req, fs.createWriteStream(target, { flags: append ? 'a' : 'w' }));
    return { blob, size: fs.statSync(target).size };
  }

  function newVersionOf(call: Call, item: ItemRec, content: { blob: string; size: number }, comment?: string): void {
    const f = item.file!;
    f.versions.push({ id: f.uiVersion, label: `${f.uiVersion / 512}.0`, blob: f.blob, size: f.size, created: item.modified, comment: f.comment, createdBy: item.editorId });
    f.uiVersion += 512;
    f.blob = content.blob;
    f.size = content.size;
    f.contentVersion++;
    if (comment !== undefined) f.comment = comment;
    item.modified = isoNow();
    item.editorId = call.principal.id;
    logChange(item, CHANGE_TYPE.Update);
  }

  /** A content write: a draft for the check-out holder, a new version otherwise. */
  function writeContent(call: Call, item: ItemRec, content: { blob: string; size: number }): void {
    checkWritable(call, item);
    const f = item.file!;
    if (f.checkedOutBy === call.principal.id) {
      if (f.draft) state.removeBlob(f.draft.blob);
      f.draft = content;
      item.modified = isoNow();
      logChange(item, CHANGE_TYPE.Update);
      return;
    }
    newVersionOf(call, item, content);
  }

  function createItem(call: Call, p: string, kind: 'file' | 'folder', content?: { blob: string; size: number }): ItemRec {
    const list = state.listOfPath(p);
    if (!list || p.toLowerCase() === list.rootPath.toLowerCase()) throw NOT_FOUND();
    if (!folderExists(parentPath(p))) throw NOT_FOUND(`The folder ${parentPath(p)} does not exist.`);
    const name = nameOf(p);
    if (name === '' || /["*:<>?\\|#%]/.test(name) || name.startsWith('~') || name.startsWith(' ')) {
      throw new SpError(400, '-2130575245, Microsoft.SharePoint.SPException', `The file or folder name "${name}" contains characters that are not permitted.`);
    }
    const now = isoNow();
    const item: ItemRec = {
      id: list.nextItemId++,
      uniqueId: randomUUID(),
      guid: randomUUID(),
      listId: list.id,
      kind,
      path: p,
      created: now,
      modified: now,
      authorId: call.principal.id,
      editorId: call.principal.id,
      itemVersion: 1,
      fields: {},
      ...(kind === 'file' ? { file: { blob: content!.blob, size: content!.size, uiVersion: 512, contentVersion: 1, comment: '', versions: [], uploads: {} } } : {}),
    };
    state.data.items.push(item);
    logChange(item, CHANGE_TYPE.Add);
    return item;
  }

  function deleteItem(call: Call, item: ItemRec): void {
    const subtree = state.data.items.filter((i) => i === item || i.path.toLowerCase().startsWith(item.path.toLowerCase() + '/'));
    for (const i of subtree) checkWritable(call, i);
    for (const i of subtree) {
      if (i.file) {
        state.removeBlob(i.file.blob);
        state.removeBlob(i.file.draft?.blob);
        for (const v of i.file.versions) state.removeBlob(v.blob);
        for (const u of Object.values(i.file.uploads)) state.removeBlob(u.blob);
      }
    }
    state.data.items = state.data.items.filter((i) => !subtree.includes(i));
    for (const i of subtree) logChange(i, CHANGE_TYPE.DeleteObject);
  }

  async function readJsonBody(req: IncomingMessage): Promise<Record<string, unknown>> {
    const chunks: Buffer[] = [];
    for await (const c of req as AsyncIterable<Buffer>) chunks.push(c);
    const text = Buffer.concat(chunks).toString('utf8').trim();
    if (!text) return {};
    try {
      const parsed = JSON.parse(text) as Record<string, unknown>;
      return parsed && typeof parsed === 'object' ? parsed : {};
    } catch {
      throw new SpError(400, '-1, Microsoft.Data.OData.ODataException', 'Invalid JSON. A token was not recognized in the JSON content.');
    }
  }

  // ---- answers ---------------------------------------------------------------------------------------

  function shape(call: Call): ShapeOptions {
    const list = (name: string) => (call.url.searchParams.get(name) ?? '').split(',').map((s) => s.trim()).filter(Boolean);
    return { format: call.format, select: list('$select'), expand: list('$expand'), webUrl: call.webUrl };
  }

  function send(call: Call, status: number, body: unknown): void {
    const text = JSON.stringify(body);
    call.res.writeHead(status, { 'content-type': contentTypeOf(call.format), 'content-length': Buffer.byteLength(text), 'x-sharepointhealthscore': '0', 'sprequestguid': randomUUID() });
    call.res.end(text);
  }

  const sendEntity = (call: Call, e: Entity, status = 200) => send(call, status, entityBody(e, shape(call)));
  const sendCollection = (call: Call, type: string, es: Entity[], next?: string) => send(call, 200, collectionBody(type, es, shape(call), next));
  const sendPrimitive = (call: Call, method: string, edm: string, value: unknown) => send(call, 200, primitiveBody(method, edm, value, shape(call)));
  const sendEmpty = (call: Call) => {
    call.res.writeHead(200, { 'content-length': 0 });
    call.res.end();
  };

  async function sendContent(call: Call, blob: string, size: number, etag?: string): Promise<void> {
    const range = /^bytes=(\d*)-(\d*)$/.exec(call.req.headers.range ?? '');
    let start = 0;
    let end = size - 1;
    let status = 200;
    const headers: Record<string, string | number> = { 'content-type': 'application/octet-stream', 'accept-ranges': 'bytes', ...(etag ? { etag } : {}) };
    if (range && size > 0 && (range[1] !== '' || range[2] !== '')) {
      if (range[1] === '') start = Math.max(0, size - Number(range[2]));
      else {
        start = Number(range[1]);
        end = range[2] === '' ? size - 1 : Math.min(Number(range[2]), size - 1);
      }
      if (start >= size || start > end) {
        call.res.writeHead(416, { 'content-range': `bytes */${size}`, 'content-length': 0 });
        return void call.res.end();
      }
      status = 206;
      headers['content-range'] = `bytes ${start}-${end}/${size}`;
    }
    headers['content-length'] = size === 0 ? 0 : end - start + 1;
    call.res.writeHead(status, headers);
    if (call.method === 'HEAD' || size === 0) return void call.res.end();
    const source = fs.createReadStream(state.blobPath(blob), { start, end, highWaterMark: 256 * 1024 });
    const cut = ctx.downloadStream?.(call.res);
    await (cut ? pipeline(source, cut, call.res) : pipeline(source, call.res)).catch(() => call.res.destroy());
  }

  // ---- operations ------------------------------------------------------------------------------------

  async function handleApi(call: Call, segments: Segment[]): Promise<void> {
    const tunnel = String(call.req.headers['x-http-method'] ?? '').toUpperCase();
    const verb = call.method === 'POST' && tunnel ? tunnel : call.method;
    if (segments.length === 1 && segments[0].key === 'contextinfo') {
      if (call.method !== 'POST') throw BAD_REQUEST('contextinfo needs POST.');
      const value = `0x${randomUUID().replace(/-/g, '').toUpperCase()}${randomUUID().replace(/-/g, '').toUpperCase()},${new Date().toUTCString().replace('GMT', '-0000')}`;
      digests.set(value, Date.now() + DIGEST_TIMEOUT * 1000);
      const info: Entity = {
        type: 'SP.ContextWebInformation',
        uri: `${api(call)}/contextinfo`,
        props: {
          FormDigestTimeoutSeconds: DIGEST_TIMEOUT,
          FormDigestValue: value,
          LibraryVersion: '16.0.25409.12003',
          SiteFullUrl: `${ctx.origin}${state.data.webs[0].path}`,
          SupportedSchemaVersions: ['14.0.0.0', '15.0.0.0'],
          WebFullUrl: call.webUrl,
        },
      };
      // Verbose wraps the answer in the method's name: {"d":{"GetContextWebInformation":{…}}}.
      if (call.format !== 'verbose') return sendEntity(call, info);
      return send(call, 200, { d: { GetContextWebInformation: (entityBody(info, shape(call)) as { d: unknown }).d } });
    }
    const { target, op } = walk(call, segments);
    const opKey = op?.key;

    // --- reads
    if (!op && verb === 'GET') return read(call, target);
    if (opKey === '$value' && (verb === 'GET' || verb === 'HEAD')) {
      if (target.kind === 'file') {
        const c = visibleContent(call, target.item);
        return sendContent(call, c.blob, c.size, fileEtag(target.item));
      }
      if (target.kind === 'version') {
        const v = target.item.file!.versions.find((x) => x.id === target.id)!;
        return sendContent(call, v.blob, v.size);
      }
    }
    if (opKey === 'hasuniqueroleassignments' && verb === 'GET') {
      const s = securableOf(target);
      return sendPrimitive(call, 'HasUniqueRoleAssignments', 'Edm.Boolean', ownRoles(s) !== undefined);
    }
    if (opKey === 'checkedoutbyuser' && target.kind === 'file' && verb === 'GET') {
      const holder = target.item.file!.checkedOutBy;
      if (holder === undefined) return send(call, 200, call.format === 'verbose' ? { d: null } : {});
      return sendEntity(call, userEntity(call, state.user(holder)!));
    }
    if (opKey === 'ensureuser' && target.kind === 'web' && verb === 'POST') {
      const body = await readJsonBody(call.req);
      const login = (arg(op!, 'logonname') as string | undefined) ?? (body.logonName as string | undefined);
      if (!login) throw BAD_REQUEST('logonName is required.');
      const user = state.ensureUser(login, undefined, login.includes('@') ? login.split('|').pop() : undefined);
      state.save();
      return sendEntity(call, userEntity(call, user));
    }

    // --- deletes
    if (!op && verb === 'DELETE') {
      const item = target.kind === 'file' || target.kind === 'item' ? target.item : target.kind === 'folder' ? state.itemByPath(target.path) : undefined;
      if (!item) throw BAD_REQUEST('This resource cannot be deleted.');
      const ifMatch = call.req.headers['if-match'];
      if (ifMatch && ifMatch !== '*' && ifMatch !== (target.kind === 'item' ? `"${item.itemVersion}"` : item.file ? fileEtag(item) : `"${item.itemVersion}"`)) throw VERSION_CONFLICT();
      deleteItem(call, item);
      state.save();
      return sendEmpty(call);
    }
    if ((opKey === 'recycle' || opKey === 'deleteobject') && verb === 'POST') {
      const item = target.kind === 'file' || target.kind === 'item' ? target.item : target.kind === 'folder' ? state.itemByPath(target.path) : undefined;
      if (!item) throw BAD_REQUEST('This resource cannot be deleted.');
      deleteItem(call, item);
      state.save();
      return opKey === 'recycle' ? sendPrimitive(call, 'Recycle', 'Edm.Guid', randomUUID()) : sendEmpty(call);
    }
    if (!op && verb === 'GET') return read(call, target);
    if (opKey === 'getitems' && target.kind === 'list') throw BAD_REQUEST('CAML queries are not simulated; use items with $filter.');

    // --- content
    if (target.kind === 'files' && (opKey === 'add' || opKey === 'addusingpath') && verb === 'POST') {
      const name = str(opKey === 'add' ? arg(op!, 'url') : arg(op!, 'decodedurl'), opKey === 'add' ? 'url' : 'decodedurl');
      const overwrite = (opKey === 'add' ? arg(op!, 'overwrite', 1) : arg(op!, 'overwrite')) === true;
      const p = resolvePath(call, name.includes('/') ? name : `${target.folder}/${name}`);
      const existing = state.itemByPath(p);
      if (existing && (!overwrite || existing.kind === 'folder')) {
        call.req.resume();
        throw ALREADY_EXISTS(p.slice(1));
      }
      if (existing) checkWritable(call, existing);
      if (!existing && !folderExists(parentPath(p))) throw NOT_FOUND();
      const content = await receiveBlob(call.req);
      let item = state.itemByPath(p);
      if (item) writeContent(call, item, content);
      else item = createItem(call, p, 'file', content);
      state.save();
      return sendEntity(call, fileEntity(call, item));
    }
    if (target.kind === 'file' && opKey === '$value' && (verb === 'PUT' || (call.method === 'PUT' && !tunnel))) {
      checkWritable(call, target.item);
      const content = await receiveBlob(call.req);
      writeContent(call, target.item, content);
      state.save();
      return sendEmpty(call);
    }
    if (target.kind === 'file' && ['startupload', 'continueupload', 'finishupload', 'cancelupload'].includes(opKey ?? '') && verb === 'POST') {
      return chunked(call, target.item, op!);
    }

    // --- change log (changes.ts) and moves
    if (target.kind === 'list' && opKey === 'getchanges' && verb === 'POST') return getChanges(call, target.list);
    if (target.kind === 'file' && opKey === 'moveto' && verb === 'POST') return moveFile(call, target.item, op!);

    // --- folders
    if (target.kind === 'folders' && (opKey === 'add' || opKey === 'addusingpath') && verb === 'POST') {
      const name = str(opKey === 'add' ? arg(op!, 'url') : arg(op!, 'decodedurl'), 'url');
      return addFolder(call, target.folder && !name.startsWith('/') ? `${target.folder}/${name}` : name);
    }
    if (target.kind === 'folders' && !op && verb === 'POST') {
      const body = await readJsonBody(call.req);
      return addFolder(call, str(body.ServerRelativeUrl, 'ServerRelativeUrl'));
    }
    if (target.kind === 'fields' && !op && verb === 'POST') {
      const body = await readJsonBody(call.req);
      const title = str(body.Title, 'Title');
      const list = target.list;
      if (list.fields.some((f) => f.title.toLowerCase() === title.toLowerCase())) throw new SpError(400, '-2130575340, Microsoft.SharePoint.SPException', `A duplicate field name "${title}" was found.`);
      // FieldTypeKind as SharePoint's SP.FieldType: 2 Text (default), 3 Note, 4 DateTime, 8 Boolean, 9 Number.
      const kind = typeof body.FieldTypeKind === 'number' && FIELD_TYPES[body.FieldTypeKind] ? body.FieldTypeKind : 2;
      const field = { id: randomUUID(), title, internalName: encodeInternalName(title), typeAsString: FIELD_TYPES[kind], fieldTypeKind: kind, fromBaseType: false, hidden: body.Hidden === true, readOnly: body.ReadOnlyField === true };
      list.fields.push(field);
      state.save();
      return sendEntity(call, fieldEntity(call, list, field), 201);
    }

    // --- the web's clock (the simulated web is en-US, UTC): SP.TimeZone.UTCToLocalTime
    if (target.kind === 'timezone' && opKey === 'utctolocaltime' && (verb === 'GET' || verb === 'POST')) {
      const utc = Date.parse(str(arg(op!, 'date'), 'date'));
      if (Number.isNaN(utc)) throw BAD_REQUEST('The parameter date is not a valid date.');
      return sendPrimitive(call, 'UTCToLocalTime', 'Edm.DateTime', new Date(utc).toISOString().slice(0, 19));
    }

    // --- ValidateUpdateListItem: form values as the web's locale writes them; bNewDocumentUpdate overwrites the current version
    if (target.kind === 'item' && opKey === 'validateupdatelistitem' && verb === 'POST') return validateUpdate(call, target.item, await readJsonBody(call.req));

    // --- list item fields
    if (target.kind === 'item' && !op && (verb === 'MERGE' || verb === 'PATCH' || verb === 'PUT') && call.method !== 'GET') {
      const item = target.item;
      const ifMatch = call.req.headers['if-match'];
      if (ifMatch && ifMatch !== '*' && ifMatch !== `"${item.itemVersion}"`) throw VERSION_CONFLICT();
      if (item.file) checkWritable(call, item);
      const body = await readJsonBody(call.req);
      const list = listOf(item);
      const updates: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(body)) {
        if (key === '__metadata') continue;
        const field = list.fields.find((f) => f.internalName === key);
        if (!field) throw BAD_REQUEST(`The property '${key}' does not exist on type 'SP.Data.${list.entityTypeName}Item'. Make sure to only use property names that are defined by the type.`);
        if (field.readOnly) throw BAD_REQUEST(`The field '${key}' is read-only.`);
        if (value !== null && typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') throw BAD_REQUEST(`Invalid value for '${key}'.`);
        if (value !== null && !fieldTakes(field, value)) throw BAD_REQUEST(`The value of field '${key}' (${field.typeAsString}) is not valid.`);
        updates[key] = value;
      }
      if (verb === 'PUT') item.fields = {};
      Object.assign(item.fields, updates);
      item.itemVersion++;
      item.modified = isoNow();
      item.editorId = call.principal.id;
      logChange(item, CHANGE_TYPE.Update);
      state.save();
      call.res.writeHead(204, { etag: `"${item.itemVersion}"` });
      return void call.res.end();
    }

    // --- move (SP.File.moveTo): newurl is server-relative; flags 1 overwrites, 0 refuses a taken URL
    if (target.kind === 'file' && verb === 'POST' && opKey === 'moveto') {
      const item = target.item;
      checkWritable(call, item);
      const newUrl = str(arg(op!, 'newurl'), 'newurl').replace(/\/+$/, '');
      const flags = Number(arg(op!, 'flags') ?? 0);
      const parentPath = newUrl.slice(0, newUrl.lastIndexOf('/'));
      const list = state.listOfPath(newUrl);
      const parent = state.itemByPath(parentPath);
      if (!list || list.id !== item.listId || (parentPath.toLowerCase() !== list.rootPath.toLowerCase() && parent?.kind !== 'folder')) {
        throw new SpError(400, '-2147024893, System.IO.DirectoryNotFoundException', `The folder of "${newUrl}" does not exist in this library.`);
      }
      const existing = state.itemByPath(newUrl);
      if (existing && existing !== item) {
        if ((flags & 1) === 0) throw new SpError(400, '-2130575257, Microsoft.SharePoint.SPException', `A file with the name ${newUrl} already exists.`);
        deleteItem(call, existing);
      }
      item.path = newUrl;
      state.save();
      return sendEmpty(call);
    }

    // --- check-in/out
    if (target.kind === 'file' && verb === 'POST' && ['checkout', 'checkin', 'undocheckout'].includes(opKey ?? '')) {
      const item = target.item;
      const f = item.file!;
      if (opKey === 'checkout') {
        checkWritable(call, item);
        f.checkedOutBy = call.principal.id;
      } else {
        if (f.checkedOutBy === undefined) throw new SpError(400, '-2130575306, Microsoft.SharePoint.SPFileCheckOutException', `The file "${item.path}" is not checked out.`);
        checkWritable(call, item);
        if (opKey === 'checkin') {
          const comment = String(arg(op!, 'comment') ?? '');
          if (comment.length > 1023) throw BAD_REQUEST('The comment is longer than 1023 characters.');
          const draft = f.draft ?? (() => {
            // Checking in without changes still makes a version: copy the content.
            const blob = state.newBlobName();
            fs.copyFileSync(state.blobPath(f.blob), state.blobPath(blob));
            return { blob, size: f.size };
          })();
          f.draft = undefined;
          f.checkedOutBy = undefined;
          newVersionOf(call, item, draft, comment);
        } else {
          state.removeBlob(f.draft?.blob);
          f.draft = undefined;
          f.checkedOutBy = undefined;
        }
      }
      if (opKey !== 'checkin') logChange(item, CHANGE_TYPE.Update);
      state.save();
      return sendEmpty(call);
    }

    // --- versions
    if (target.kind === 'versions' && verb === 'POST' && op) {
      const f = target.item.file!;
      checkWritable(call, target.item);
      if (opKey === 'deletebyid' || opKey === 'recyclebyid') {
        const id = num(arg(op, 'vid'), 'vid');
        const v = f.versions.find((x) => x.id === id);
        if (!v) throw NOT_FOUND('Version does not exist.');
        state.removeBlob(v.blob);
        f.versions = f.versions.filter((x) => x !== v);
      } else if (opKey === 'deletebylabel') {
        const label = str(arg(op, 'versionlabel'), 'versionlabel');
        const v = f.versions.find((x) => x.label === label);
        if (!v) throw NOT_FOUND('Version does not exist.');
        state.removeBlob(v.blob);
        f.versions = f.versions.filter((x) => x !== v);
      } else if (opKey === 'deleteall') {
        for (const v of f.versions) state.removeBlob(v.blob);
        f.versions = [];
      } else if (opKey === 'restorebylabel') {
        const label = str(arg(op, 'versionlabel'), 'versionlabel');
        const v = f.versions.find((x) => x.label === label);
        if (!v) throw NOT_FOUND('Version does not exist.');
        const blob = state.newBlobName();
        fs.copyFileSync(state.blobPath(v.blob), state.blobPath(blob));
        newVersionOf(call, target.item, { blob, size: v.size });
      } else throw BAD_REQUEST(`Unknown method ${op.name}.`);
      state.save();
      return sendEmpty(call);
    }

    // --- permissions
    if (opKey === 'breakroleinheritance' && verb === 'POST') {
      const s = securableOf(target);
      const copy = arg(op!, 'copyroleassignments') !== false;
      if (!ownRoles(s)) setOwnRoles(s, copy ? effectiveRoles(s).map((r) => ({ principalId: r.principalId, roleDefIds: [...r.roleDefIds] })) : []);
      state.save();
      return sendEmpty(call);
    }
    if (opKey === 'resetroleinheritance' && verb === 'POST') {
      const s = securableOf(target);
      if (s.kind === 'web' && !parentSecurable(s)) throw BAD_REQUEST('The root web cannot inherit permissions.');
      setOwnRoles(s, undefined);
      state.save();
      return sendEmpty(call);
    }
    if (target.kind === 'roleassignments' && verb === 'POST' && (opKey === 'addroleassignment' || opKey === 'removeroleassignment')) {
      const principalId = num(arg(op!, 'principalid'), 'principalid');
      const roleDefId = num(arg(op!, 'roledefid', 1), 'roledefid');
      if (!state.user(principalId)) throw new SpError(404, '-2146232832, Microsoft.SharePoint.SPException', 'User cannot be found.');
      if (!ROLE_DEFINITIONS.some((d) => d.id === roleDefId)) throw NOT_FOUND('Permission level cannot be found.');
      const own = ownRoles(target.securable);
      if (!own) throw new SpError(400, '-2147024891, System.UnauthorizedAccessException', 'This operation is not allowed on an object that inherits permissions.');
      const entry = own.find((r) => r.principalId === principalId);
      if (opKey === 'addroleassignment') {
        if (entry) entry.roleDefIds = [...new Set([...entry.roleDefIds, roleDefId])];
        else own.push({ principalId, roleDefIds: [roleDefId] });
      } else if (entry) {
        entry.roleDefIds = entry.roleDefIds.filter((d) => d !== roleDefId);
        if (entry.roleDefIds.length === 0) own.splice(own.indexOf(entry), 1);
      }
      state.save();
      return sendEmpty(call);
    }
    if (target.kind === 'roleassignments' && opKey === 'getbyprincipalid') {
      const principalId = num(arg(op!, 'principalid'), 'principalid');
      const own = ownRoles(target.securable) ?? effectiveRoles(target.securable);
      const entry = own.find((r) => r.principalId === principalId);
      if (!entry) throw new SpError(404, '-2146232832, Microsoft.SharePoint.SPException', 'Can not find the principal with id: ' + principalId + '.');
      if (verb === 'DELETE') {
        if (!ownRoles(target.securable)) throw new SpError(400, '-2147024891, System.UnauthorizedAccessException', 'This operation is not allowed on an object that inherits permissions.');
        own.splice(own.indexOf(entry), 1);
        state.save();
        return sendEmpty(call);
      }
      return sendEntity(call, roleAssignmentEntity(call, entry));
    }
    throw BAD_REQUEST(`The simulator does not implement ${verb} ${call.url.pathname}.`);
  }

  /** `GetChanges(query)`: the body's SP.ChangeQuery (JSON light or verbose); item changes only. */
  async function getChanges(call: Call, list: ListRec): Promise<void> {
    const body = await readJsonBody(call.req);
    const q = (body.query ?? {}) as Record<string, unknown>;
    const flag = (name: string) => q[name] === true;
    if (!flag('Item')) return sendCollection(call, 'Collection(SP.Change)', []);
    const kinds = new Set<number>();
    if (flag('Add')) kinds.add(CHANGE_TYPE.Add);
    if (flag('Update')) kinds.add(CHANGE_TYPE.Update);
    if (flag('DeleteObject')) kinds.add(CHANGE_TYPE.DeleteObject);
    if (flag('Rename')) kinds.add(CHANGE_TYPE.Rename);
    if (flag('Move')) [CHANGE_TYPE.MoveAway, CHANGE_TYPE.MoveInto].forEach((k) => kinds.add(k));
    if (flag('Restore')) kinds.add(CHANGE_TYPE.Restore);
    const start = (q.ChangeTokenStart as { StringValue?: unknown } | undefined)?.StringValue;
    const rowLimit = typeof q.RowLimit === 'number' && q.RowLimit > 0 ? Math.min(q.RowLimit, 2000) : 1000;
    const answer = changeLog.query(list.id, typeof start === 'string' ? start : undefined, kinds, rowLimit);
    if ('invalid' in answer) throw BAD_REQUEST(answer.invalid);
    if ('expired' in answer) throw new SpError(500, '-2146232832, Microsoft.SharePoint.SPException', 'The changeToken refers to a time before the start of the current change log.');
    const web = state.webOfPath(list.rootPath)!;
    const entities: Entity[] = answer.changes.map((c) => ({
      type: 'SP.ChangeItem',
      uri: `${api(call)}/SP.ChangeItem${c.seq}`,
      props: {
        ChangeToken: { StringValue: listChangeToken(list.id, c.seq, c.time) },
        ChangeType: c.type,
        SiteId: state.data.siteId,
        Time: c.time.replace(/\.\d{3}Z$/, 'Z'),
        ContentTypeId: { StringValue: c.folder ? '0x0120' : '0x0101' },
        FileSystemObjectType: c.folder ? 1 : 0,
        Hidden: false,
        ItemId: c.itemId,
        ListId: list.id,
        ServerRelativeUrl: c.path,
        UniqueId: c.uniqueId,
        WebId: web.id,
      },
    }));
    return sendCollection(call, 'Collection(SP.Change)', entities);
  }

  /** `SP.File.MoveTo(newurl, flags)`: a rename or a move within the library; flags 1 overwrites. */
  function moveFile(call: Call, item: ItemRec, op: Segment): void {
    call.req.resume();
    checkWritable(call, item);
    const target = resolvePath(call, str(arg(op, 'newurl'), 'newurl'));
    const overwrite = (Number(arg(op, 'flags', 1) ?? 0) & 1) === 1;
    if (state.listOfPath(target)?.id !== item.listId) throw BAD_REQUEST('The destination is not in the same document library.');
    if (!folderExists(parentPath(target))) throw NOT_FOUND(`The folder ${parentPath(target)} does not exist.`);
    const existing = state.itemByPath(target);
    if (existing && existing !== item) {
      if (!overwrite || existing.kind === 'folder') throw ALREADY_EXISTS(target.slice(1));
      deleteItem(call, existing);
    }
    item.path = target;
    item.itemVersion++;
    item.modified = isoNow();
    logChange(item, CHANGE_TYPE.Rename);
    state.save();
    return sendEmpty(call);
  }

  function securableOf(t: Target): Securable {
    if (t.kind === 'web') return { kind: 'web', web: t.web };
    if (t.kind === 'list') return { kind: 'list', list: t.list };
    if (t.kind === 'item' || t.kind === 'file') return { kind: 'item', item: t.item };
    if (t.kind === 'folder') {
      const item = state.itemByPath(t.path);
      if (item) return { kind: 'item', item };
      if (t.list) return { kind: 'list', list: t.list };
    }
    throw BAD_REQUEST('This resource has no permissions.');
  }

  async function addFolder(call: Call, raw: string): Promise<void> {
    call.req.resume();
    const p = resolvePath(call, raw);
    const existing = state.itemByPath(p);
    if (existing?.kind === 'file') throw ALREADY_EXISTS(p.slice(1));
    const item = existing ?? createItem(call, p, 'folder');
    state.save();
    return sendEntity(call, folderEntity(call, item.path));
  }

  async function chunked(call: Call, item: ItemRec, op: Segment): Promise<void> {
    const f = item.file!;
    checkWritable(call, item);
    const uploadId = str(arg(op, 'uploadid'), 'uploadId');
    if (op.key === 'cancelupload') {
      call.req.resume();
      state.removeBlob(f.uploads[uploadId]?.blob);
      delete f.uploads[uploadId];
      state.save();
      return sendEmpty(call);
    }
    if (op.key === 'startupload') {
      if (f.uploads[uploadId]) state.removeBlob(f.uploads[uploadId].blob); // idempotent for the same id + stream
      const received = await receiveBlob(call.req);
      f.uploads[uploadId] = { blob: received.blob, offset: received.size };
      state.save();
      return sendPrimitive(call, 'StartUpload', 'Edm.Int64', String(received.size));
    }
    const upload = f.uploads[uploadId];
    if (!upload) {
      call.req.resume();
      throw new SpError(404, '-2147024894, System.IO.FileNotFoundException', `The upload session ${uploadId} does not exist.`);
    }
    const offset = num(arg(op, 'fileoffset', 1), 'fileOffset');
    if (offset !== upload.offset) {
      call.req.resume();
      throw new SpError(400, '-2147024809, System.ArgumentException', `The file offset ${offset} does not match the ${upload.offset} bytes received so far.`);
    }
    const received = await receiveBlob(call.req, upload.blob);
    upload.offset = received.size;
    if (op.key === 'continueupload') {
      state.save();
      return sendPrimitive(call, 'ContinueUpload', 'Edm.Int64', String(received.size));
    }
    delete f.uploads[uploadId];
    writeContent(call, item, { blob: upload.blob, size: received.size });
    state.save();
    return sendEntity(call, fileEntity(call, item));
  }

  function read(call: Call, t: Target): void {
    switch (t.kind) {
      case 'web':
        return sendEntity(call, webEntity(call, t.web));
      case 'site':
        return sendEntity(call, { type: 'SP.Site', uri: `${call.webUrl}/_api/Site`, props: { Id: state.data.siteId, ServerRelativeUrl: state.data.webs[0].path, Url: `${ctx.origin}${state.data.webs[0].path}` } });
      case 'webs':
        return sendCollection(call, 'SP.ApiData.Webs', subWebs(t.web).map((w) => webEntity(call, w)));
      case 'lists':
        return sendCollection(call, 'SP.ApiData.Lists', state.data.lists.filter((l) => l.webPath === t.web.path).map((l) => listEntity(call, l)));
      case 'list':
        return sendEntity(call, listEntity(call, t.list));
      case 'fields':
        return sendCollection(call, 'SP.ApiData.Fields', t.list.fields.map((f) => fieldEntity(call, t.list, f)));
      case 'folder':
        return sendEntity(call, folderEntity(call, t.path));
      case 'files':
        return sendCollection(call, 'SP.ApiData.Files12', children(t.folder).filter((i) => i.kind === 'file').map((i) => fileEntity(call, i)));
      case 'folders':
        if (t.folder === null) throw BAD_REQUEST('List the folders of a folder.');
        return sendCollection(call, 'SP.ApiData.Folders', children(t.folder).filter((i) => i.kind === 'folder').map((i) => folderEntity(call, i.path)));
      case 'file':
        return sendEntity(call, fileEntity(call, t.item));
      case 'item':
        return sendEntity(call, itemEntity(call, t.item));
      case 'versions':
        return sendCollection(call, 'SP.ApiData.FileVersions', t.item.file!.versions.map((v) => versionEntity(call, t.item, v.id)));
      case 'version':
        return sendEntity(call, versionEntity(call, t.item, t.id));
      case 'regionalsettings':
        return sendEntity(call, regionalSettingsEntity(call));
      case 'timezone':
        return sendEntity(call, timeZoneEntity(call));
      case 'items':
        return readItems(call, t.list);
      case 'roleassignments':
        return sendCollection(call, 'SP.ApiData.RoleAssignments', effectiveRoles(t.securable).map((r) => roleAssignmentEntity(call, r)));
      case 'roledefinitions':
        return sendCollection(call, 'SP.ApiData.RoleDefinitions', ROLE_DEFINITIONS.map((d) => roleDefEntity(call, d)));
      case 'roledefinition':
        return sendEntity(call, roleDefEntity(call, t.def));
      case 'siteusers': {
        const groups = /sitegroups/i.test(call.url.pathname);
        return sendCollection(call, groups ? 'SP.ApiData.Groups' : 'SP.ApiData.Users', state.data.users.filter((u) => (u.principalType === 8) === groups).map((u) => userEntity(call, u)));
      }
      case 'user':
        return sendEntity(call, userEntity(call, t.user));
    }
  }

  /**
   * List items, the documented way to page a big folder: `$filter` on FileDirRef (optionally with
   * FSObjType), `$top` (default 100, at most 5000: the list view threshold) and `$skiptoken=Paged=TRUE&p_ID=n`,
   * the next page's URL in `__next` / `odata.nextLink`.
   */
  function readItems(call: Call, list: ListRec): void {
    const q = call.url.searchParams;
    const top = q.has('$top') ? Number(q.get('$top')) : 100;
    if (!Number.isInteger(top) || top < 1) throw BAD_REQUEST('$top must be a positive integer.');
    if (top > 5000) throw new SpError(500, '-2147024860, Microsoft.SharePoint.SPQueryThrottledException', 'The attempted operation is prohibited because it exceeds the list view threshold enforced by the administrator.');
    let items = state.data.items.filter((i) => i.listId === list.id).sort((a, b) => a.id - b.id);
    const filter = q.get('$filter');
    if (filter) {
      for (const clause of filter.split(/\s+and\s+/i)) {
        const m = /^\s*(FileDirRef|FSObjType|Id|ID)\s+eq\s+('(?:[^']|'')*'|\d+)\s*$/i.exec(clause);
        if (!m) throw BAD_REQUEST(`The expression "${clause}" is not supported by the simulator.`);
        const field = m[1].toLowerCase();
        const value = m[2].startsWith("'") ? m[2].slice(1, -1).replace(/''/g, "'") : Number(m[2]);
        if (field === 'filedirref') items = items.filter((i) => parentPath(i.path).toLowerCase() === String(value).toLowerCase());
        else if (field === 'fsobjtype') items = items.filter((i) => (i.kind === 'file' ? 0 : 1) === Number(value));
        else items = items.filter((i) => i.id === Number(value));
      }
    }
    const skip = q.get('$skiptoken');
    if (skip) {
      const m = /^Paged=TRUE&p_ID=(\d+)$/i.exec(skip);
      if (!m) throw BAD_REQUEST('Invalid $skiptoken.');
      items = items.filter((i) => i.id > Number(m[1]));
    }
    const page = items.slice(0, top);
    let next: string | undefined;
    if (items.length > top) {
      const nextUrl = new URL(call.url.href);
      nextUrl.searchParams.set('$skiptoken', `Paged=TRUE&p_ID=${page[page.length - 1].id}`);
      next = nextUrl.href;
    }
    sendCollection(call, `SP.Data.${list.entityTypeName}Item`, page.map((i) => itemEntity(call, i)), next);
  }

  // ---- entry point ----------------------------------------------------------------------------------

  return async function handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const format = formatOf(req.headers.accept);
    const fail = (status: number, code: string, message: string, headers: Record<string, string> = {}) => {
      const text = JSON.stringify(errorBody(format, code, message));
      res.writeHead(status, { 'content-type': contentTypeOf(format), 'content-length': Buffer.byteLength(text), ...headers });
      res.end(text);
    };
    const decodedPath = (() => {
      try {
        return decodeURIComponent(url.pathname);
      } catch {
        return url.pathname;
      }
    })();
    if (decodedPath === '/_simulator/changes/expire' && req.method === 'POST') {
      req.resume();
      changeLog.expire();
      state.save();
      res.writeHead(204);
      return void res.end();
    }
    const apiAt = decodedPath.search(/\/_api(\/|$)/i);
    const historyAt = decodedPath.search(/\/_vti_history\/\d+\//i);
    if (apiAt < 0 && historyAt < 0) return fail(404, '-2147024894, System.IO.FileNotFoundException', 'File Not Found.');
    const webPath = decodedPath.slice(0, apiAt >= 0 ? apiAt : historyAt);
    const web = state.data.webs.find((w) => w.path.toLowerCase() === webPath.toLowerCase());
    if (!web) return fail(404, '-2147024894, System.IO.FileNotFoundException', 'File Not Found.');

    const auth = ctx.verifyBearer(req.headers.authorization);
    if (!auth.ok) {
      req.resume();
      const text = JSON.stringify({ error_description: auth.message });
      res.writeHead(401, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(text),
        'www-authenticate': `Bearer realm="${ctx.tenantId}",client_id="00000003-0000-0ff1-ce00-000000000000",trusted_issuers="00000001-0000-0000-c000-000000000000@*",authorization_uri="${ctx.origin}/${ctx.tenantId}/oauth2/authorize"`,
      });
      return void res.end(text);
    }
    if (auth.viaSecret) {
      // SharePoint Online refuses app-only tokens got with a client secret: a certificate is required.
      req.resume();
      const text = JSON.stringify({ error_description: 'Unsupported app only token.' });
      res.writeHead(401, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      return void res.end(text);
    }
    const digest = req.headers['x-requestdigest'];
    if (req.method === 'POST' && typeof digest === 'string' && digest !== '') {
      const until = digests.get(digest);
      if (!until || until < Date.now()) {
        req.resume();
        return fail(403, '-2130575251, Microsoft.SharePoint.SPException', 'The security validation for this page is invalid and might be corrupted. Please use your web browser\'s Back button to try your operation again.');
      }
    }
    const principal = state.ensureUser(loginOf(auth.appId), `App ${auth.appId.slice(0, 8)}`);
    const call: Call = { req, res, url, web, webUrl: `${ctx.origin}${web.path}`, format, method: (req.method ?? 'GET').toUpperCase(), principal };
    try {
      if (historyAt >= 0) {
        const m = /^\/_vti_history\/(\d+)\/(.+)$/i.exec(decodedPath.slice(historyAt));
        const item = m ? state.itemByPath(`${web.path}/${m[2]}`) : undefined;
        const v = item?.file?.versions.find((x) => x.id === Number(m![1]));
        if (!v) throw NOT_FOUND();
        return await sendContent(call, v.blob, v.size);
      }
      const rest = decodedPath.slice(apiAt + '/_api'.length).replace(/^\//, '');
      await handleApi(call, parseApiPath(rest, url.searchParams));
    } catch (e) {
      if (!(e instanceof SpError) && !(e instanceof ODataSyntaxError)) throw e;
      req.resume();
      if (res.headersSent) return void res.destroy();
      if (e instanceof ODataSyntaxError) return fail(400, '-1, Microsoft.SharePoint.Client.InvalidClientQueryException', e.message);
      fail(e.status, e.code, e.message);
    }
  };
}

/** The field types a created column may have (SP.FieldType values). */
const FIELD_TYPES: Record<number, string> = { 2: 'Text', 3: 'Note', 4: 'DateTime', 8: 'Boolean', 9: 'Number' };
/** A single line of text holds at most 255 characters in SharePoint. */
const TEXT_MAX_LENGTH = 255;

/** Whether a list item field takes the value, as SharePoint checks it on write. */
function fieldTakes(field: { typeAsString: string }, value: string | number | boolean): boolean {
  const text = String(value);
  switch (field.typeAsString) {
    case 'Text':
      return text.length <= TEXT_MAX_LENGTH;
    case 'Number':
      return text.trim() !== '' && Number.isFinite(Number(text));
    case 'Boolean':
      return ['true', 'false', '1', '0'].includes(text.toLowerCase());
    case 'DateTime':
      return Number.isFinite(Date.parse(text));
    default:
      return true;
  }
}

/** A date-time as an en-US SharePoint web writes it in forms (`6/23/2018 10:15 PM`), the web's local time being UTC; ISO 8601 out. */
function parseUsDateTime(text: string): string | undefined {
  const m = /^(\d{1,2})\/(\d{1,2})\/(\d{4}) (\d{1,2}):(\d{2}) (AM|PM)$/.exec(text.trim());
  if (!m) return undefined;
  const [month, day, year, hour12, minute] = [Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5])];
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour12 < 1 || hour12 > 12 || minute > 59) return undefined;
  const hour = (hour12 % 12) + (m[6] === 'PM' ? 12 : 0);
  const date = new Date(Date.UTC(year, month - 1, day, hour, minute));
  if (date.getUTCDate() !== day) return undefined;
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
