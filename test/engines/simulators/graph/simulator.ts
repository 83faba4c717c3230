/**
 * The Microsoft Graph (v1.0, drives) simulator: sites, drives, driveItems by id and by path,
 * children paging, 302 downloads to short-lived pre-authenticated URLs (Range there), small PUT and
 * upload sessions, conflict behaviour, versions, check-out/check-in, permissions and list item
 * fields. Wire facts and their sources: /work/shared/reference/sharepoint-graph/sharepoint-graph-wire.md §1.
 *
 * State: metadata in memory, saved to `<dir>/graph-state.json` after each change; content in files
 * under `<dir>/content` (one file per version, written from the request stream, never held in memory).
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { SimulatorContext, SimulatorDefinition, SimulatorHandler } from '../common/server';
import { DriveChangeLog, decodeDeltaToken, encodeDeltaToken, type ChangeLogState } from './delta';
import { SchemaChecker } from './fidelity';

const FRAGMENT_UNIT = 320 * 1024;
const MAX_FRAGMENT = 60 * 1024 * 1024;
const DEFAULT_PAGE = 200;
const DOWNLOAD_URL_TTL_MS = 5 * 60_000;
const UPLOAD_SESSION_TTL_MS = 15 * 60_000;
const SMALL_PUT_LIMIT = 250 * 1024 * 1024;
const ILLEGAL_NAME = /[\\/*<>?:|#%"]/;

export const GRAPH_ROLES = ['Sites.ReadWrite.All', 'Files.ReadWrite.All'];

interface Identity {
  displayName: string;
  id: string;
}

interface VersionRecord {
  id: string;
  file: string;
  size: number;
  modified: string;
  by: Identity;
  /** file.hashes.quickXorHash of this content, computed once on the first read of the item. */
  quickXorHash?: string;
}

/**
 * QuickXorHash of a file as Graph reports it (base64), per Microsoft's description of the algorithm
 * (onedrive-api-docs, code-snippets/quickxorhash.md): byte n XORed into a 160-bit register at bit
 * (11 × n) mod 160, wrapping round; then the length, 64-bit little-endian, XORed into its last 8 bytes.
 */
function quickXorHashOf(file: string): string {
  const register = Buffer.alloc(20);
  const data = fs.readFileSync(file);
  for (let n = 0; n < data.length; n++) {
    const bit = (n * 11) % 160;
    const value = data[n] << (bit % 8);
    register[bit >> 3] ^= value & 0xff;
    register[((bit >> 3) + 1) % 20] ^= value >> 8;
  }
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(data.length));
  for (let i = 0; i < 8; i++) register[12 + i] ^= length[i];
  return register.toString('base64');
}

interface PermissionRecord {
  id: string;
  roles: string[];
  email: string;
  displayName: string;
  inherited?: boolean;
}

interface ItemRecord {
  id: string;
  uniqueId: string;
  driveId: string;
  parentId?: string;
  name: string;
  kind: 'folder' | 'file' | 'root';
  created: string;
  modified: string;
  createdBy: Identity;
  modifiedBy: Identity;
  eTagSeq: number;
  cTagSeq: number;
  mimeType?: string;
  versions: VersionRecord[];
  nextMajor: number;
  checkout?: { by: Identity; draft?: VersionRecord };
  fields: Record<string, string | null>;
  permissions: PermissionRecord[];
  /** Its place in the change log (delta.ts). */
  changeSeq?: number;
  /** Its list item's id: SharePoint numbers a library's items 1, 2, … as they are created, never reusing one. */
  listItemId?: number;
}

interface DriveRecord {
  id: string;
  siteId: string;
  name: string;
  rootId: string;
  created: string;
}

interface SiteRecord {
  id: string;
  name: string;
  displayName: string;
  parentId?: string;
  created: string;
}

interface State extends ChangeLogState {
  lastListItemId?: number;
  sites: SiteRecord[];
  drives: DriveRecord[];
  items: Record<string, ItemRecord>;
}

interface UploadSession {
  id: string;
  itemId?: string;
  parentId: string;
  driveId: string;
  name: string;
  conflict: 'fail' | 'replace' | 'rename';
  total?: number;
  received: number;
  file: string;
  expires: number;
  deferCommit: boolean;
  /** item.fileSystemInfo of createUploadSession (driveItemUploadableProperties): the dates the upload keeps. */
  fileSystemInfo?: { created?: string; modified?: string };
}

/** The date-time pattern of Microsoft's schema for fileSystemInfo (graph-v1.0-drive-schemas.json). */
const DATE_TIME = /^[0-9]{4,}-(0[1-9]|1[012])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]([.][0-9]{1,12})?(Z|[+-][0-9][0-9]:[0-9][0-9])$/;

/**
 * fileSystemInfo of an upload session: SharePoint keeps it as the item's Created and Modified (to the second,
 * as SharePoint stores dates), so the version written carries it; a value outside the schema is a 400.
 */
function uploadDates(itemBody: Record<string, unknown>): UploadSession['fileSystemInfo'] {
  const info = itemBody.fileSystemInfo as Record<string, unknown> | undefined;
  if (info === undefined) return undefined;
  if (info === null || typeof info !== 'object') throw new GraphError(400, 'invalidRequest', 'fileSystemInfo must be an object.');
  const toSecond = (key: string): string | undefined => {
    const value = info[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'string' || !DATE_TIME.test(value) || Number.isNaN(Date.parse(value))) throw new GraphError(400, 'invalidRequest', `Invalid value for fileSystemInfo.${key}.`);
    return new Date(Math.floor(Date.parse(value) / 1000) * 1000).toISOString().replace('.000Z', 'Z');
  };
  return { created: toSecond('createdDateTime'), modified: toSecond('lastModifiedDateTime') };
}

class GraphError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly inner?: string,
  ) {
    super(message);
  }
}

function innerDate(): string {
  return new Date().toISOString().slice(0, 19); // Graph sends it without an offset
}

export function graphErrorBody(code: string, message: string, innerCode?: string): unknown {
  return {
    error: {
      code,
      message,
      innerError: { ...(innerCode ? { code: innerCode } : {}), date: innerDate(), 'request-id': crypto.randomUUID(), 'client-request-id': crypto.randomUUID() },
    },
  };
}

const SYSTEM = { displayName: 'SharePoint App', id: '00000003-0000-0ff1-ce00-000000000000' };

function randomItemId(): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let id = '01';
  for (const byte of crypto.randomBytes(32)) id += alphabet[byte % 32];
  return id;
}

function guid(): string {
  return crypto.randomUUID();
}

function now(): string {
  return new Date().toISOString();
}

async function readJsonBody(req: IncomingMessage, limit = 1 << 20): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new GraphError(413, 'invalidRequest', 'Request body too large');
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8').trim();
  if (text === '') return {};
  try {
    const value: unknown = JSON.parse(text);
    if (!value || typeof value !== 'object' || Array.isArray(value)) throw new Error('not an object');
    return value as Record<string, unknown>;
  } catch {
    throw new GraphError(400, 'invalidRequest', 'Invalid request: the body is not a JSON object');
  }
}

export class GraphStore {
  state: State;
  readonly sessions = new Map<string, UploadSession>();
  readonly downloads = new Map<string, { itemId: string; versionId: string; expires: number }>();
  readonly changeLog: DriveChangeLog<ItemRecord>;
  /** Children per parent, sorted, rebuilt on the first read after a change (the change log counts every change). */
  private childIndex?: { seq: number; byParent: Map<string, ItemRecord[]> };
  private saveTimer?: NodeJS.Timeout;
  private saveDelayMs = 50;

  constructor(
    readonly dir: string,
    readonly host: string,
  ) {
    fs.mkdirSync(this.contentDir, { recursive: true });
    fs.mkdirSync(this.uploadDir, { recursive: true });
    const file = path.join(dir, 'graph-state.json');
    this.state = fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as State) : this.seed();
    this.changeLog = new DriveChangeLog(this.state, () => this.state.items);
    this.save();
  }

  get contentDir(): string {
    return path.join(this.dir, 'content');
  }

  get uploadDir(): string {
    return path.join(this.dir, 'uploads');
  }

  private seed(): State {
    const state: State = { sites: [], drives: [], items: {} };
    const created = now();
    const root: SiteRecord = { id: `${this.host},${guid()},${guid()}`, name: '', displayName: 'Communication site', created };
    const team: SiteRecord = { id: `${this.host},${root.id.split(',')[1]},${guid()}`, name: 'team', displayName: 'Team', parentId: root.id, created };
    state.sites.push(root, team);
    const addDrive = (site: SiteRecord, name: string) => {
      const drive: DriveRecord = { id: `b!${crypto.randomBytes(48).toString('base64url')}`, siteId: site.id, name, rootId: randomItemId(), created };
      state.drives.push(drive);
      state.items[drive.rootId] = {
        id: drive.rootId,
        uniqueId: guid().toUpperCase(),
        driveId: drive.id,
        name: 'root',
        kind: 'root',
        created,
        modified: created,
        createdBy: SYSTEM,
        modifiedBy: SYSTEM,
        eTagSeq: 1,
        cTagSeq: 0,
        versions: [],
        nextMajor: 1,
        fields: {},
        permissions: [{ id: 'aTowIy5mfG1lbWJlcnNoaXB8b3duZXJz', roles: ['owner'], email: 'owners@contoso.onmicrosoft.com', displayName: 'Site Owners', inherited: true }],
      };
    };
    addDrive(root, 'Documents');
    addDrive(root, 'Archive');
    addDrive(team, 'Documents');
    return state;
  }

  save(): void {
    if (this.saveTimer) return;
    // A save blocks the loop for as long as it writes: with a large state (a benchmark's 100,000 items, some
    // 100 MB of JSON) they come at most every ten save-lengths, so writing takes a tenth of the time at most.
    this.saveTimer = setTimeout(() => {
      this.saveTimer = undefined;
      const started = Date.now();
      const file = path.join(this.dir, 'graph-state.json');
      fs.writeFileSync(`${file}.tmp`, JSON.stringify(this.state));
      fs.renameSync(`${file}.tmp`, file);
      this.saveDelayMs = Math.max(50, (Date.now() - started) * 10);
    }, this.saveDelayMs);
    this.saveTimer.unref?.();
  }

  item(id: string): ItemRecord {
    const item = this.state.items[id];
    if (!item) throw new GraphError(404, 'itemNotFound', 'The resource could not be found.');
    return item;
  }

  drive(id: string): DriveRecord {
    const drive = this.state.drives.find((d) => d.id === id);
    if (!drive) throw new GraphError(404, 'itemNotFound', 'The resource could not be found.');
    return drive;
  }

  site(id: string): SiteRecord {
    const site = id === 'root' ? this.state.sites[0] : this.state.sites.find((s) => s.id === id || s.id.split(',')[2] === id);
    if (!site) throw new GraphError(404, 'itemNotFound', 'Requested site could not be found');
    return site;
  }

  children(parentId: string): ItemRecord[] {
    if (this.childIndex?.seq !== this.changeLog.latest) {
      const byParent = new Map<string, ItemRecord[]>();
      for (const item of Object.values(this.state.items)) {
        if (item.parentId === undefined) continue;
        const list = byParent.get(item.parentId);
        if (list) list.push(item);
        else byParent.set(item.parentId, [item]);
      }
      for (const list of byParent.values()) list.sort((a, b) => (a.name.toLowerCase() < b.name.toLowerCase() ? -1 : a.name.toLowerCase() > b.name.toLowerCase() ? 1 : 0));
      this.childIndex = { seq: this.changeLog.latest, byParent };
    }
    return [...(this.childIndex.byParent.get(parentId) ?? [])];
  }

  childNamed(parentId: string, name: string): ItemRecord | undefined {
    const lower = name.toLowerCase();
    return Object.values(this.state.items).find((i) => i.parentId === parentId && i.name.toLowerCase() === lower);
  }

  pathOf(item: ItemRecord): string {
    const names: string[] = [];
    let current: ItemRecord | undefined = item;
    while (current && current.kind !== 'root') {
      names.unshift(current.name);
      current = current.parentId ? this.state.items[current.parentId] : undefined;
    }
    return '/' + names.join('/');
  }

  resolvePath(startId: string, segments: string[]): ItemRecord {
    let current = this.item(startId);
    for (const segment of segments) {
      const next = this.childNamed(current.id, segment);
      if (!next) throw new GraphError(404, 'itemNotFound', 'The resource could not be found.');
      current = next;
    }
    return current;
  }

  uniqueName(parentId: string, name: string): string {
    if (!this.childNamed(parentId, name)) return name;
    const dot = name.lastIndexOf('.');
    const stem = dot > 0 ? name.slice(0, dot) : name;
    const ext = dot > 0 ? name.slice(dot) : '';
    for (let n = 1; ; n++) {
      const candidate = `${stem} ${n}${ext}`;
      if (!this.childNamed(parentId, candidate)) return candidate;
    }
  }

  newItem(parent: ItemRecord, name: string, kind: 'folder' | 'file', by: Identity): ItemRecord {
    const created = now();
    const item: ItemRecord = {
      id: randomItemId(),
      uniqueId: guid().toUpperCase(),
      driveId: parent.driveId,
      parentId: parent.id,
      name,
      kind,
      created,
      modified: created,
      createdBy: by,
      modifiedBy: by,
      eTagSeq: 1,
      cTagSeq: 1,
      versions: [],
      nextMajor: 1,
      fields: {},
      permissions: [],
    };
    this.state.items[item.id] = item;
    this.listItemIdOf(item);
    this.changeLog.changed(item);
    this.touchAncestors(parent);
    return item;
  }

  listItemIdOf(item: ItemRecord): number {
    return (item.listItemId ??= this.state.lastListItemId = (this.state.lastListItemId ?? 0) + 1);
  }

  touchAncestors(item: ItemRecord | undefined): void {
    while (item) {
      item.cTagSeq++;
      this.changeLog.changed(item);
      item = item.parentId ? this.state.items[item.parentId] : undefined;
    }
  }

  /** Adds a version made of `file` (moved into the content folder) as the current one. */
  addVersion(item: ItemRecord, tempFile: string, size: number, by: Identity, mimeType?: string): VersionRecord {
    const version: VersionRecord = { id: `${item.nextMajor}.0`, file: path.join(this.contentDir, `${item.id}-${item.nextMajor}`), size, modified: now(), by };
    fs.renameSync(tempFile, version.file);
    item.nextMajor++;
    item.versions.push(version);
    item.modified = version.modified;
    item.modifiedBy = by;
    item.eTagSeq++;
    item.cTagSeq++;
    this.changeLog.changed(item);
    if (mimeType) item.mimeType = mimeType;
    this.touchAncestors(item.parentId ? this.state.items[item.parentId] : undefined);
    this.save();
    return version;
  }

  /** The content a download of the item serves: the holder's draft while checked out, else the current version. */
  current(item: ItemRecord): VersionRecord | undefined {
    return item.checkout?.draft ?? item.versions[item.versions.length - 1];
  }

  deleteItem(item: ItemRecord): void {
    for (const child of this.children(item.id)) this.deleteItem(child);
    for (const v of item.versions) fs.rmSync(v.file, { force: true });
    if (item.checkout?.draft) fs.rmSync(item.checkout.draft.file, { force: true });
    delete this.state.items[item.id];
    this.changeLog.deleted({ id: item.id, driveId: item.driveId, parentId: item.parentId, name: item.name, kind: item.kind });
    this.touchAncestors(item.parentId ? this.state.items[item.parentId] : undefined);
    this.save();
  }

  tempFile(): string {
    return path.join(this.uploadDir, crypto.randomBytes(12).toString('hex'));
  }
}

function mimeTypeOf(name: string): string {
  const ext = path.extname(name).toLowerCase();
  const known: Record<string, string> = {
    '.txt': 'text/plain',
    '.json': 'application/json',
    '.pdf': 'application/pdf',
    '.html': 'text/html',
    '.xml': 'application/xml',
    '.csv': 'text/csv',
    '.png': 'image/png',
    '.jpg': 'image/jpeg',
    '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  };
  return known[ext] ?? 'application/octet-stream';
}

function identitySet(by: Identity): Record<string, unknown> {
  return by === SYSTEM || by.id === SYSTEM.id
    ? { application: { displayName: by.displayName, id: by.id }, user: null, device: null }
    : { application: { displayName: by.displayName, id: by.id }, user: null, device: null };
}

/** The Graph handler over a store. */
export function createGraphHandler(context: SimulatorContext): SimulatorHandler {
  const host = '127.0.0.1';
  const store = new GraphStore(context.dir, host);
  const checker = new SchemaChecker();
  const base = `${context.origin}/v1.0`;
  // Download and upload URLs live on another host name (localhost; the certificate covers both), as the
  // real ones live on {tenant}.sharepoint.com while the API is graph.microsoft.com: client rules that
  // depend on the host (no bearer token there, Authorization dropped on a cross-host redirect) apply.
  const fileOrigin = context.origin.replace('://127.0.0.1:', '://localhost:');
  // What the harness puts in connectorParams: the root site and its "Documents" library.
  fs.writeFileSync(
    path.join(context.dir, 'graph-info.json'),
    JSON.stringify({ graphUrl: base, siteId: store.state.sites[0].id, driveId: store.state.drives[0].id, library: store.state.drives[0].name }, null, 2),
  );

  const appIdentity = (claims: { appid: string; app_displayname?: string }): Identity => ({ displayName: claims.app_displayname ?? claims.appid, id: claims.appid });

  function send(req: IncomingMessage, res: ServerResponse, status: number, body: unknown, schema?: string, headers: Record<string, string> = {}): void {
    if (schema) {
      if (schema.startsWith('[]')) for (const element of (body as { value: unknown[] }).value) checker.check(schema.slice(2), element, req.method ?? 'GET', req.url ?? '');
      else checker.check(schema, body, req.method ?? 'GET', req.url ?? '');
    }
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json; odata.metadata=minimal; odata.streaming=true; IEEE754Compatible=false; charset=utf-8', 'content-length': Buffer.byteLength(text), 'request-id': crypto.randomUUID(), ...headers });
    res.end(text);
  }

  function sendError(req: IncomingMessage, res: ServerResponse, error: GraphError): void {
    send(req, res, error.status, graphErrorBody(error.code, error.message, error.inner), 'microsoft.graph.ODataErrors.ODataError');
  }

  function noContent(res: ServerResponse, status = 204, headers: Record<string, string> = {}): void {
    res.writeHead(status, headers);
    res.end();
  }

  function driveJson(drive: DriveRecord): Record<string, unknown> {
    const site = store.site(drive.siteId);
    return {
      id: drive.id,
      name: drive.name,
      driveType: 'documentLibrary',
      description: '',
      createdDateTime: drive.created,
      lastModifiedDateTime: drive.created,
      webUrl: `https://${host}/sites/${site.name}/${encodeURIComponent(drive.name === 'Documents' ? 'Shared Documents' : drive.name)}`,
      createdBy: { user: { displayName: 'System Account' } },
      owner: { group: { displayName: `${site.displayName} Owners`, id: guid() } },
      quota: { deleted: 0, remaining: 1099511627776, state: 'normal', total: 1099511627776, used: 0 },
    };
  }

  function siteJson(site: SiteRecord): Record<string, unknown> {
    const [, collection, web] = site.id.split(',');
    return {
      id: site.id,
      name: site.name || 'root',
      displayName: site.displayName,
      description: '',
      createdDateTime: site.created,
      lastModifiedDateTime: site.created,
      webUrl: site.name ? `https://${host}/sites/${site.name}` : `https://${host}`,
      siteCollection: { hostname: host },
      sharepointIds: { siteId: collection, webId: web },
      ...(site.parentId ? {} : { root: {} }),
    };
  }

  function eTag(item: ItemRecord): string {
    return `"{${item.uniqueId}},${item.eTagSeq}"`;
  }

  function downloadUrl(item: ItemRecord, versionId: string): string {
    const token = crypto.randomBytes(24).toString('base64url');
    store.downloads.set(token, { itemId: item.id, versionId, expires: Date.now() + DOWNLOAD_URL_TTL_MS });
    return `${fileOrigin}/_layouts/15/download.aspx?UniqueId=${item.uniqueId}&tempauth=${token}`;
  }

  function itemJson(item: ItemRecord, url: URL, forceSelect?: string[]): Record<string, unknown> {
    const drive = store.drive(item.driveId);
    const parent = item.parentId ? store.state.items[item.parentId] : undefined;
    const itemPath = store.pathOf(item);
    const current = store.current(item);
    const json: Record<string, unknown> = {
      '@odata.context': `${base}/$metadata#drives('${encodeURIComponent(drive.id)}')/items/$entity`,
      id: item.id,
      name: item.name,
      eTag: eTag(item),
      createdDateTime: item.created,
      lastModifiedDateTime: item.modified,
      webUrl: `https://${host}/Shared%20Documents${encodeURI(itemPath === '/' ? '' : itemPath)}`,
      size: item.kind === 'file' ? (current?.size ?? 0) : store.children(item.id).reduce((sum, c) => sum + (c.kind === 'file' ? (store.current(c)?.size ?? 0) : 0), 0),
      createdBy: identitySet(item.createdBy),
      lastModifiedBy: identitySet(item.modifiedBy),
      parentReference: parent
        ? { driveType: 'documentLibrary', driveId: drive.id, id: parent.id, name: parent.kind === 'root' ? 'Shared Documents' : parent.name, path: `/drives/${drive.id}/root:${parent.kind === 'root' ? '' : store.pathOf(parent)}`, siteId: drive.siteId }
        : { driveType: 'documentLibrary', driveId: drive.id, siteId: drive.siteId },
      fileSystemInfo: { createdDateTime: item.created, lastModifiedDateTime: item.modified },
    };
    if (item.kind === 'file') {
      json.cTag = `"c:{${item.uniqueId}},${item.cTagSeq}"`;
      json.file = { mimeType: item.mimeType ?? mimeTypeOf(item.name), hashes: { quickXorHash: current ? (current.quickXorHash ??= quickXorHashOf(current.file)) : quickXorHashOf('/dev/null') } };
      json['@microsoft.graph.downloadUrl'] = downloadUrl(item, current?.id ?? '');
      json.shared = { scope: 'users' };
    } else {
      json.folder = { childCount: store.children(item.id).length };
      if (item.kind === 'root') json.root = {};
    }
    const select = forceSelect ?? (url.searchParams.get('$select') ?? url.searchParams.get('select'))?.split(',').map((s) => s.trim()).filter(Boolean);
    const expand = url.searchParams.get('$expand') ?? url.searchParams.get('expand') ?? '';
    if (select?.includes('publication') || item.kind === 'file') {
      // publication is only sent when asked for ($select) on the real service; the gateway asks
      if (select?.includes('publication')) {
        json.publication = item.checkout
          ? { level: 'checkout', versionId: current?.id ?? null, checkedOutBy: identitySet(item.checkout.by) }
          : { level: 'published', versionId: current?.id ?? null };
      }
    }
    if (/\blistItem\b/.test(expand)) {
      json.listItem = {
        '@odata.etag': `"${item.uniqueId.toLowerCase()},${item.eTagSeq}"`,
        id: String(store.listItemIdOf(item)),
        fields: fieldsJson(item),
      };
    }
    if (select) {
      const picked: Record<string, unknown> = { '@odata.context': json['@odata.context'], id: item.id };
      for (const key of select) if (key in json) picked[key] = json[key];
      if (json.listItem) picked.listItem = json.listItem;
      return picked;
    }
    return json;
  }

  function fieldsJson(item: ItemRecord): Record<string, unknown> {
    return {
      '@odata.etag': `"${item.uniqueId.toLowerCase()},${item.eTagSeq}"`,
      FileLeafRef: item.name,
      ContentType: item.kind === 'file' ? 'Document' : 'Folder',
      Created: item.created,
      Modified: item.modified,
      ...(item.kind === 'file' ? { _UIVersionString: store.current(item)?.id ?? '1.0', FileSizeDisplay: String(store.current(item)?.size ?? 0) } : {}),
      ...item.fields,
    };
  }

  function versionJson(item: ItemRecord, version: VersionRecord): Record<string, unknown> {
    return {
      '@microsoft.graph.downloadUrl': downloadUrl(item, version.id),
      id: version.id,
      lastModifiedDateTime: version.modified,
      size: version.size,
      lastModifiedBy: { user: { displayName: version.by.displayName }, application: { id: version.by.id, displayName: version.by.displayName } },
      publication: { level: 'published', versionId: version.id },
    };
  }

  function permissionJson(p: PermissionRecord): Record<string, unknown> {
    const user = { displayName: p.displayName, email: p.email, id: crypto.createHash('md5').update(p.email).digest('hex') };
    return {
      id: p.id,
      '@deprecated.GrantedToIdentities': 'GrantedToIdentities has been deprecated. Refer to GrantedToIdentitiesV2',
      '@deprecated.GrantedTo': 'GrantedTo has been deprecated. Refer to GrantedToV2',
      roles: p.roles,
      grantedTo: { user },
      grantedToV2: { user, siteUser: { displayName: p.displayName, email: p.email, id: String(user.id.length), loginName: `i:0#.f|membership|${p.email}` } },
      shareId: p.id,
      hasPassword: false,
    };
  }

  // ---- content -------------------------------------------------------------------------------

  /** Streams a request body to a temporary file; rejects (and removes the file) unless all of it arrived. */
  async function receiveBody(req: IncomingMessage, expected?: number, limit = SMALL_PUT_LIMIT): Promise<{ file: string; size: number }> {
    const file = store.tempFile();
    let size = 0;
    let tooLarge = false;
    const counter = async function* (source: AsyncIterable<Buffer>) {
      for await (const chunk of source) {
        size += chunk.length;
        if (size > limit) {
          tooLarge = true;
          throw new Error('too large');
        }
        yield chunk;
      }
    };
    try {
      await pipeline(req, counter, fs.createWriteStream(file));
    } catch (error) {
      fs.rmSync(file, { force: true });
      if (tooLarge) throw new GraphError(413, 'invalidRequest', 'The request body is larger than the limit of a single PUT; use an upload session.');
      throw error;
    }
    if (req.readableAborted || (expected !== undefined && size !== expected)) {
      fs.rmSync(file, { force: true });
      throw new GraphError(400, 'invalidRequest', 'The request body is shorter than its Content-Length.');
    }
    return { file, size };
  }

  function serveDownload(req: IncomingMessage, res: ServerResponse, token: string): void {
    const entry = store.downloads.get(token);
    if (!entry || entry.expires < Date.now()) {
      // The download host answers in SharePoint's shape, not Graph's.
      res.writeHead(401, { 'content-type': 'text/plain' }).end('401 UNAUTHORIZED');
      return;
    }
    const item = store.item(entry.itemId);
    const version = item.versions.find((v) => v.id === entry.versionId) ?? (item.checkout?.draft?.id === entry.versionId ? item.checkout.draft : undefined);
    if (!version) throw new GraphError(404, 'itemNotFound', 'The resource could not be found.');
    const size = version.size;
    const headers: Record<string, string | number> = {
      'content-type': item.mimeType ?? mimeTypeOf(item.name),
      'accept-ranges': 'bytes',
      etag: `"{${item.uniqueId}},${item.versions.indexOf(version) + 1}"`,
      'last-modified': new Date(version.modified).toUTCString(),
      'content-disposition': `attachment; filename*=UTF-8''${encodeURIComponent(item.name)}`,
    };
    let start = 0;
    let end = size - 1;
    let status = 200;
    const range = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? '');
    if (range && size > 0 && (range[1] !== '' || range[2] !== '')) {
      if (range[1] === '') {
        start = Math.max(0, size - Number(range[2]));
      } else {
        start = Number(range[1]);
        end = range[2] === '' ? size - 1 : Math.min(Number(range[2]), size - 1);
      }
      if (start >= size || start > end) {
        res.writeHead(416, { 'content-range': `bytes */${size}` }).end();
        return;
      }
      status = 206;
      headers['content-range'] = `bytes ${start}-${end}/${size}`;
    }
    headers['content-length'] = size === 0 ? 0 : end - start + 1;
    res.writeHead(status, headers);
    if (req.method === 'HEAD' || size === 0) {
      res.end();
      return;
    }
    const source = fs.createReadStream(version.file, { start, end });
    const cut = context.faults.downloadStream(res);
    if (cut) source.pipe(cut).pipe(res);
    else source.pipe(res);
    source.on('error', () => res.destroy());
  }

  // ---- upload sessions -------------------------------------------------------------------------

  function sessionJson(session: UploadSession, withUrl: boolean): Record<string, unknown> {
    return {
      ...(withUrl ? { uploadUrl: `${fileOrigin}/_upload/${session.id}` } : {}),
      expirationDateTime: new Date(session.expires).toISOString(),
      nextExpectedRanges: [`${session.received}-`],
    };
  }

  async function handleUpload(req: IncomingMessage, res: ServerResponse, sessionId: string): Promise<void> {
    const session = store.sessions.get(sessionId);
    if (!session || session.expires < Date.now()) {
      if (session) {
        store.sessions.delete(sessionId);
        fs.rmSync(session.file, { force: true });
      }
      throw new GraphError(404, 'itemNotFound', 'The upload session was not found.', 'uploadSessionNotFound');
    }
    if (req.method === 'GET') return send(req, res, 200, sessionJson(session, false), 'microsoft.graph.uploadSession');
    if (req.method === 'DELETE') {
      store.sessions.delete(sessionId);
      fs.rmSync(session.file, { force: true });
      return noContent(res);
    }
    if (req.method === 'POST' && session.deferCommit) {
      if (session.total === undefined || session.received !== session.total) throw new GraphError(400, 'invalidRequest', 'The upload is incomplete.');
      return commitSession(req, res, session);
    }
    if (req.method !== 'PUT') throw new GraphError(405, 'invalidRequest', 'Method not allowed on an upload URL.');
    if (req.headers.authorization) {
      // Documented: sending Authorization to uploadUrl may fail the upload.
      throw new GraphError(401, 'unauthenticated', 'The upload URL is pre-authenticated: do not send an Authorization header.');
    }
    const match = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(req.headers['content-range'] ?? '');
    if (!match) throw new GraphError(400, 'invalidRequest', 'Content-Range is required: bytes start-end/total.', 'invalidContentRangeHeader');
    const [start, end, total] = [Number(match[1]), Number(match[2]), Number(match[3])];
    const length = end - start + 1;
    if (session.total !== undefined && session.total !== total) throw new GraphError(400, 'invalidRequest', 'The total size changed between fragments.', 'invalidContentRangeHeader');
    if (Number(req.headers['content-length'] ?? -1) !== length) throw new GraphError(400, 'invalidRequest', 'Content-Length does not match Content-Range.');
    if (length > MAX_FRAGMENT) throw new GraphError(400, 'invalidRequest', 'A fragment must be smaller than 60 MiB.');
    if (start < session.received) throw new GraphError(416, 'invalidRange', 'The uploaded fragment overlaps with data that has already been received.', 'fragmentOverlap');
    if (start > session.received) throw new GraphError(416, 'invalidRange', 'Fragment out of order: the next expected range starts earlier.', 'fragmentOutOfOrder');
    if (end + 1 < total && length % FRAGMENT_UNIT !== 0) {
      throw new GraphError(400, 'invalidRequest', `Fragments except the last must be a multiple of 320 KiB (327680 bytes); got ${length}.`, 'invalidFragmentSize');
    }
    session.total = total;
    let received = 0;
    const counter = async function* (source: AsyncIterable<Buffer>) {
      for await (const chunk of source) {
        received += chunk.length;
        yield chunk;
      }
    };
    await pipeline(req, counter, fs.createWriteStream(session.file, { flags: 'r+', start }));
    if (received !== length) {
      fs.truncateSync(session.file, session.received);
      throw new GraphError(400, 'invalidRequest', 'The fragment is shorter than its Content-Length.');
    }
    session.received += length;
    session.expires = Date.now() + UPLOAD_SESSION_TTL_MS;
    if (session.received < total || session.deferCommit) return send(req, res, 202, sessionJson(session, false), 'microsoft.graph.uploadSession');
    await commitSession(req, res, session);
  }

  async function commitSession(req: IncomingMessage, res: ServerResponse, session: UploadSession): Promise<void> {
    store.sessions.delete(session.id);
    const parent = store.item(session.parentId);
    let target = session.itemId ? store.item(session.itemId) : store.childNamed(parent.id, session.name);
    let status = 200;
    if (target && !session.itemId) {
      if (session.conflict === 'fail') {
        fs.rmSync(session.file, { force: true });
        throw new GraphError(409, 'nameAlreadyExists', 'Another file exists with the same name as the uploaded session. You can redirect the upload session to use a new filename by calling PUT with the new metadata and @microsoft.graph.sourceUrl attribute.');
      }
      if (session.conflict === 'rename') target = undefined;
    }
    if (target) assertWritable(target);
    if (!target) {
      target = store.newItem(parent, session.conflict === 'rename' ? store.uniqueName(parent.id, session.name) : session.name, 'file', SYSTEM);
      status = 201;
    }
    const version = store.addVersion(target, session.file, session.total ?? 0, SYSTEM, mimeTypeOf(target.name));
    // The dates the client gave replace those of the write, on the item and on the version written (no version added).
    if (session.fileSystemInfo?.modified) version.modified = target.modified = session.fileSystemInfo.modified;
    if (session.fileSystemInfo?.created) target.created = session.fileSystemInfo.created;
    if (session.fileSystemInfo) store.save();
    send(req, res, status, itemJson(target, new URL('/', context.origin)), 'microsoft.graph.driveItem');
  }

  function assertWritable(item: ItemRecord, by?: Identity): void {
    if (item.checkout && by && item.checkout.by.id !== by.id) throw new GraphError(423, 'resourceLocked', `The resource you are attempting to access is locked: checked out by ${item.checkout.by.displayName}.`);
  }

  function conflictOf(url: URL, fallback: 'fail' | 'replace' | 'rename'): 'fail' | 'replace' | 'rename' {
    const value = url.searchParams.get('@microsoft.graph.conflictBehavior') ?? fallback;
    if (value !== 'fail' && value !== 'replace' && value !== 'rename') throw new GraphError(400, 'invalidRequest', `Invalid value for @microsoft.graph.conflictBehavior: ${value}`);
    return value;
  }

  function checkName(name: string): void {
    if (!name || ILLEGAL_NAME.test(name) || name.startsWith('~') || name.trim() !== name || name.length > 400) {
      throw new GraphError(400, 'invalidRequest', `The provided name '${name}' contains characters that are not allowed.`, 'invalidName');
    }
  }

  function checkIfMatch(req: IncomingMessage, item: ItemRecord): void {
    const header = req.headers['if-match'];
    if (!header || header === '*') return;
    if (!header.startsWith('"') && !header.startsWith('W/"')) throw new GraphError(400, 'invalidRequest', 'ETags must be quoted strings', 'malformedEntityTag');
    if (header !== eTag(item)) throw new GraphError(412, 'resourceModified', 'ETag does not match current item\'s value', 'entityTagDoesNotMatch');
  }

  // ---- routing --------------------------------------------------------------------------------

  /** Splits `/root:/a/b:/rest` or `/items/{id}:/a:/rest` into the item and the rest. */
  function locate(drive: DriveRecord, rest: string): { item?: ItemRecord; parent?: ItemRecord; leaf?: string; suffix: string } {
    let start: ItemRecord;
    let after: string;
    const byId = /^\/items\/([^/:]+)(.*)$/.exec(rest);
    if (rest === '/root' || rest.startsWith('/root/') || rest.startsWith('/root:')) {
      start = store.item(drive.rootId);
      after = rest.slice('/root'.length);
    } else if (byId) {
      start = store.item(decodeURIComponent(byId[1]));
      if (start.driveId !== drive.id) throw new GraphError(404, 'itemNotFound', 'The resource could not be found.');
      after = byId[2];
    } else {
      throw new GraphError(400, 'invalidRequest', `Invalid request: unsupported segment ${rest}`);
    }
    if (!after.startsWith(':')) return { item: start, suffix: after };
    const close = after.indexOf(':', 1);
    const pathPart = close < 0 ? after.slice(1) : after.slice(1, close);
    const suffix = close < 0 ? '' : after.slice(close + 1);
    const segments = pathPart.split('/').filter(Boolean).map((s) => decodeURIComponent(s));
    if (segments.length === 0) return { item: start, suffix };
    let parent = start;
    for (const segment of segments.slice(0, -1)) {
      const next = store.childNamed(parent.id, segment);
      if (!next) return { suffix, leaf: segments[segments.length - 1] };
      parent = next;
    }
    const leaf = segments[segments.length - 1];
    return { item: store.childNamed(parent.id, leaf), parent, leaf, suffix };
  }

  function notFound(): never {
    throw new GraphError(404, 'itemNotFound', 'The resource could not be found.');
  }

  async function driveRoute(req: IncomingMessage, res: ServerResponse, url: URL, drive: DriveRecord, rest: string, by: Identity): Promise<void> {
    const method = req.method ?? 'GET';
    if (rest === '' || rest === '/') {
      if (method !== 'GET') throw new GraphError(405, 'invalidRequest', 'Method not allowed');
      return send(req, res, 200, { '@odata.context': `${base}/$metadata#drives/$entity`, ...driveJson(drive) }, 'microsoft.graph.drive');
    }
    const { item, parent, leaf, suffix } = locate(drive, rest);

    // PUT .../{parent}:/{name}:/content — create or replace by path
    if (suffix === '/content' && method === 'PUT') {
      const conflict = conflictOf(url, 'replace');
      if (!item && (!parent || !leaf)) notFound();
      if (item && item.kind !== 'file') throw new GraphError(409, 'nameAlreadyExists', 'A folder with the same name already exists.');
      if (item && conflict === 'fail' && leaf) throw new GraphError(409, 'nameAlreadyExists', 'The specified item name already exists.');
      if (item) assertWritable(item, by);
      if (leaf) checkName(leaf);
      const length = req.headers['content-length'] === undefined ? undefined : Number(req.headers['content-length']);
      const body = await receiveBody(req, length);
      let target = item && !(conflict === 'rename' && leaf) ? item : undefined;
      let status = 200;
      if (item) checkIfMatch(req, item);
      if (!target) {
        const name = conflict === 'rename' ? store.uniqueName(parent!.id, leaf!) : leaf!;
        if (store.childNamed(parent!.id, name)) {
          fs.rmSync(body.file, { force: true });
          throw new GraphError(409, 'nameAlreadyExists', 'The specified item name already exists.');
        }
        target = store.newItem(parent!, name, 'file', by);
        status = 201;
      }
      if (target.checkout) {
        // The holder's edits go to a draft until check-in (SharePoint's minor/draft behaviour).
        if (target.checkout.draft) fs.rmSync(target.checkout.draft.file, { force: true });
        const draftFile = path.join(store.contentDir, `${target.id}-draft-${crypto.randomBytes(4).toString('hex')}`);
        fs.renameSync(body.file, draftFile);
        target.checkout.draft = { id: `${target.nextMajor - 1}.1`, file: draftFile, size: body.size, modified: now(), by };
        target.modified = target.checkout.draft.modified;
        target.eTagSeq++;
        target.cTagSeq++;
        store.changeLog.changed(target);
        store.save();
      } else {
        // SharePoint derives the MIME type from the extension, not from the request's Content-Type.
        store.addVersion(target, body.file, body.size, by, mimeTypeOf(target.name));
      }
      return send(req, res, status, itemJson(target, url), 'microsoft.graph.driveItem');
    }

    if (suffix === '/createUploadSession' && method === 'POST') {
      const body = await readJsonBody(req);
      const itemBody = (body.item ?? {}) as Record<string, unknown>;
      const conflict = (itemBody['@microsoft.graph.conflictBehavior'] as string | undefined) ?? 'fail';
      if (conflict !== 'fail' && conflict !== 'replace' && conflict !== 'rename') throw new GraphError(400, 'invalidRequest', 'Invalid conflict behaviour');
      if (!item && (!parent || !leaf)) notFound();
      if (leaf) checkName(leaf);
      if (item) {
        if (item.kind !== 'file') throw new GraphError(400, 'invalidRequest', 'Upload sessions target files.');
        checkIfMatch(req, item);
        assertWritable(item, by);
      }
      const session: UploadSession = {
        id: crypto.randomBytes(24).toString('base64url'),
        itemId: item && !leaf ? item.id : undefined,
        parentId: item && !leaf ? item.parentId! : parent!.id,
        driveId: drive.id,
        name: leaf ?? item!.name,
        conflict,
        received: 0,
        file: store.tempFile(),
        expires: Date.now() + UPLOAD_SESSION_TTL_MS,
        deferCommit: body.deferCommit === true,
        fileSystemInfo: uploadDates(itemBody),
      };
      fs.writeFileSync(session.file, '');
      store.sessions.set(session.id, session);
      return send(req, res, 200, { '@odata.context': `${base}/$metadata#microsoft.graph.uploadSession`, ...sessionJson(session, true) }, 'microsoft.graph.uploadSession');
    }

    if (!item) notFound();

    if (suffix === '/delta' && method === 'GET') return delta(req, res, url, drive, item);
    if (suffix === '' && method === 'GET') return send(req, res, 200, itemJson(item, url), 'microsoft.graph.driveItem');
    if (suffix === '' && method === 'DELETE') {
      if (item.kind === 'root') throw new GraphError(403, 'accessDenied', 'The root cannot be deleted.');
      checkIfMatch(req, item);
      assertWritable(item, by);
      store.deleteItem(item);
      return noContent(res);
    }
    if (suffix === '' && method === 'PATCH') {
      const body = await readJsonBody(req);
      checkIfMatch(req, item);
      const newParentId = (body.parentReference as { id?: unknown } | undefined)?.id;
      // A move: PATCH parentReference.id (a folder of the same drive, not below the item itself).
      const newParent = typeof newParentId === 'string' ? store.item(newParentId) : undefined;
      if (newParent) {
        if (item.kind === 'root') throw new GraphError(400, 'invalidRequest', 'The root cannot be moved.');
        if (newParent.kind === 'file' || newParent.driveId !== item.driveId) throw new GraphError(400, 'invalidRequest', 'The destination is not a folder of this drive.');
        for (let up: ItemRecord | undefined = newParent; up; up = up.parentId ? store.state.items[up.parentId] : undefined) {
          if (up.id === item.id) throw new GraphError(400, 'invalidRequest', 'An item cannot be moved below itself.');
        }
        assertWritable(item, by);
      }
      const name = typeof body.name === 'string' ? body.name : item.name;
      if (typeof body.name === 'string') checkName(body.name);
      const parentId = newParent?.id ?? item.parentId;
      const other = parentId ? store.childNamed(parentId, name) : undefined;
      if (other && other.id !== item.id) throw new GraphError(409, 'nameAlreadyExists', 'The specified item name already exists.');
      if (newParent && newParent.id !== item.parentId) {
        store.touchAncestors(item.parentId ? store.state.items[item.parentId] : undefined);
        item.parentId = newParent.id;
        store.touchAncestors(newParent);
      }
      item.name = name;
      item.eTagSeq++;
      store.changeLog.changed(item);
      item.modified = now();
      store.save();
      return send(req, res, 200, itemJson(item, url), 'microsoft.graph.driveItem');
    }
    if (suffix === '/children' && method === 'GET') {
      if (item.kind === 'file') throw new GraphError(400, 'invalidRequest', 'The item is not a folder.');
      const top = Math.min(Number(url.searchParams.get('$top') ?? DEFAULT_PAGE) || DEFAULT_PAGE, 999);
      const skipToken = url.searchParams.get('$skiptoken');
      const offset = skipToken ? Number(Buffer.from(skipToken, 'base64url').toString('utf8').replace(/^Paged=TRUE&p_SortBehavior=0&p_FileLeafRef=.*&p_ID=/, '')) : 0;
      if (!Number.isInteger(offset) || offset < 0) throw new GraphError(400, 'invalidRequest', 'Invalid $skiptoken');
      const all = store.children(item.id);
      const page = all.slice(offset, offset + top);
      const body: Record<string, unknown> = {
        '@odata.context': `${base}/$metadata#drives('${encodeURIComponent(drive.id)}')/items('${item.id}')/children`,
        value: page.map((c) => {
          const json = itemJson(c, url);
          delete json['@odata.context'];
          return json;
        }),
      };
      if (offset + top < all.length) {
        const next = new URL(url.href);
        const last = page[page.length - 1];
        next.searchParams.set('$skiptoken', Buffer.from(`Paged=TRUE&p_SortBehavior=0&p_FileLeafRef=${last?.name ?? ''}&p_ID=${offset + top}`).toString('base64url'));
        body['@odata.nextLink'] = next.href.replace(/^https?:\/\/[^/]+/, context.origin);
      }
      return send(req, res, 200, body, 'microsoft.graph.driveItemCollectionResponse');
    }
    if (suffix === '/children' && method === 'POST') {
      if (item.kind === 'file') throw new GraphError(400, 'invalidRequest', 'The item is not a folder.');
      const body = await readJsonBody(req);
      const name = body.name;
      if (typeof name !== 'string') throw new GraphError(400, 'invalidRequest', 'name is required');
      checkName(name);
      if (body.folder === undefined) throw new GraphError(400, 'invalidRequest', 'Only folders can be created with POST children.');
      const conflict = (body['@microsoft.graph.conflictBehavior'] as string | undefined) ?? 'fail';
      const existing = store.childNamed(item.id, name);
      if (existing && conflict === 'fail') throw new GraphError(409, 'nameAlreadyExists', 'The specified item name already exists.');
      if (existing && conflict === 'replace') store.deleteItem(existing);
      const folder = store.newItem(item, conflict === 'rename' ? store.uniqueName(item.id, name) : name, 'folder', by);
      store.save();
      return send(req, res, 201, itemJson(folder, url), 'microsoft.graph.driveItem');
    }
    if (suffix === '/content' && method === 'GET') {
      if (item.kind !== 'file') throw new GraphError(400, 'invalidRequest', 'The item is not a file.');
      const current = store.current(item)!;
      if (req.headers['if-none-match'] && (req.headers['if-none-match'] === eTag(item) || req.headers['if-none-match'] === `"c:{${item.uniqueId}},${item.cTagSeq}"`)) {
        return noContent(res, 304);
      }
      res.writeHead(302, { location: downloadUrl(item, current.id), 'content-length': 0 });
      res.end();
      return;
    }
    const version = /^\/versions(?:\/([^/]+))?(\/content|\/restoreVersion)?$/.exec(suffix);
    if (version) {
      if (item.kind !== 'file') throw new GraphError(400, 'invalidRequest', 'Folders have no versions.');
      if (!version[1] && method === 'GET') {
        const value = [...item.versions].reverse().map((v) => versionJson(item, v));
        return send(req, res, 200, { '@odata.context': `${base}/$metadata#drives('${encodeURIComponent(drive.id)}')/items('${item.id}')/versions`, value }, 'microsoft.graph.driveItemVersionCollectionResponse');
      }
      const record = item.versions.find((v) => v.id === decodeURIComponent(version[1] ?? ''));
      if (!record) notFound();
      const isCurrent = record === item.versions[item.versions.length - 1];
      if (!version[2] && method === 'GET') return send(req, res, 200, versionJson(item, record), 'microsoft.graph.driveItemVersion');
      if (!version[2] && method === 'DELETE') {
        if (isCurrent) throw new GraphError(403, 'accessDenied', 'The current version cannot be deleted.');
        item.versions = item.versions.filter((v) => v !== record);
        fs.rmSync(record.file, { force: true });
        store.save();
        return noContent(res);
      }
      if (version[2] === '/content' && method === 'GET') {
        res.writeHead(302, { location: downloadUrl(item, record.id), 'content-length': 0 });
        res.end();
        return;
      }
      if (version[2] === '/restoreVersion' && method === 'POST') {
        assertWritable(item, by);
        const copy = store.tempFile();
        fs.copyFileSync(record.file, copy);
        store.addVersion(item, copy, record.size, by);
        return noContent(res);
      }
    }
    if (suffix === '/checkout' && method === 'POST') {
      if (item.kind !== 'file') throw new GraphError(400, 'invalidRequest', 'Only files can be checked out.');
      if (item.checkout && item.checkout.by.id !== by.id) throw new GraphError(423, 'resourceLocked', `The file is checked out by ${item.checkout.by.displayName}.`);
      item.checkout = item.checkout ?? { by };
      item.eTagSeq++;
      store.changeLog.changed(item);
      store.save();
      return noContent(res);
    }
    if (suffix === '/checkin' && method === 'POST') {
      const body = await readJsonBody(req);
      if (!item.checkout) throw new GraphError(400, 'invalidRequest', 'The file is not checked out.');
      if (item.checkout.by.id !== by.id) throw new GraphError(423, 'resourceLocked', `The file is checked out by ${item.checkout.by.displayName}.`);
      if (body.checkInAs !== undefined && body.checkInAs !== 'published' && body.checkInAs !== 'unspecified') throw new GraphError(400, 'invalidRequest', 'checkInAs must be published or unspecified');
      const draft = item.checkout.draft;
      item.checkout = undefined;
      if (draft) {
        store.addVersion(item, draft.file, draft.size, by);
      } else {
        const current = item.versions[item.versions.length - 1];
        const copy = store.tempFile();
        fs.copyFileSync(current.file, copy);
        store.addVersion(item, copy, current.size, by);
      }
      item.fields._CheckinComment = typeof body.comment === 'string' ? body.comment : '';
      store.save();
      return noContent(res);
    }
    if (suffix === '/listItem/fields' && method === 'PATCH') {
      const body = await readJsonBody(req);
      const ifMatch = req.headers['if-match'];
      if (ifMatch && ifMatch !== '*' && ifMatch !== `"${item.uniqueId.toLowerCase()},${item.eTagSeq}"`) throw new GraphError(412, 'resourceModified', 'ETag mismatch', 'entityTagDoesNotMatch');
      for (const [key, value] of Object.entries(body)) {
        if (key.startsWith('@')) continue;
        if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key) || ['FileLeafRef', 'ContentType', 'Created', 'Modified', 'ID', 'id'].includes(key)) {
          throw new GraphError(400, 'invalidRequest', `Field '${key}' is not recognized`);
        }
        if (value !== null && typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') throw new GraphError(400, 'invalidRequest', `Field '${key}' has an invalid value`);
        if (value === null) delete item.fields[key];
        else item.fields[key] = String(value);
      }
      item.eTagSeq++;
      store.changeLog.changed(item);
      store.save();
      return send(req, res, 200, fieldsJson(item));
    }
    if ((suffix === '/listItem/fields' || suffix === '/listItem') && method === 'GET') {
      const fields = fieldsJson(item);
      return send(req, res, 200, suffix === '/listItem' ? { id: '1', fields } : fields);
    }
    if (suffix === '/permissions' && method === 'GET') {
      const inherited = inheritedPermissions(item);
      return send(req, res, 200, { '@odata.context': `${base}/$metadata#Collection(microsoft.graph.permission)`, value: [...inherited, ...item.permissions].map(permissionJson) }, 'microsoft.graph.permissionCollectionResponse');
    }
    const perm = /^\/permissions\/([^/]+)$/.exec(suffix);
    if (perm && method === 'DELETE') {
      const id = decodeURIComponent(perm[1]);
      const own = item.permissions.find((p) => p.id === id);
      if (!own) {
        if (inheritedPermissions(item).some((p) => p.id === id)) throw new GraphError(403, 'accessDenied', 'Inherited permissions cannot be removed from this item.');
        notFound();
      }
      item.permissions = item.permissions.filter((p) => p !== own);
      store.save();
      return noContent(res);
    }
    if (perm && method === 'GET') {
      const found = [...inheritedPermissions(item), ...item.permissions].find((p) => p.id === decodeURIComponent(perm[1]));
      if (!found) notFound();
      return send(req, res, 200, permissionJson(found), 'microsoft.graph.permission');
    }
    if (suffix === '/invite' && method === 'POST') {
      const body = await readJsonBody(req);
      const recipients = body.recipients;
      const roles = body.roles;
      if (!Array.isArray(recipients) || recipients.length === 0) throw new GraphError(400, 'invalidRequest', 'recipients is required');
      if (!Array.isArray(roles) || roles.length === 0 || roles.some((r) => r !== 'read' && r !== 'write' && r !== 'owner')) {
        throw new GraphError(400, 'invalidRequest', 'roles must be a non-empty list of read, write, owner');
      }
      if (body.requireSignIn !== true || body.sendInvitation === undefined) throw new GraphError(400, 'invalidRequest', 'requireSignIn and sendInvitation must be set for app-only invitations');
      const created: PermissionRecord[] = [];
      for (const r of recipients as Array<Record<string, unknown>>) {
        const email = r.email;
        if (typeof email !== 'string' || !/^[^@\s]+@[^@\s]+$/.test(email)) throw new GraphError(400, 'invalidRequest', 'Each recipient needs an email');
        const existing = item.permissions.find((p) => p.email.toLowerCase() === email.toLowerCase());
        if (existing) {
          existing.roles = [...new Set([...existing.roles, ...(roles as string[])])];
          created.push(existing);
        } else {
          const record: PermissionRecord = { id: crypto.randomBytes(18).toString('base64url'), roles: [...(roles as string[])], email, displayName: email.split('@')[0] };
          item.permissions.push(record);
          created.push(record);
        }
      }
      store.save();
      return send(req, res, 200, { '@odata.context': `${base}/$metadata#Collection(microsoft.graph.permission)`, value: created.map(permissionJson) }, 'microsoft.graph.permissionCollectionResponse');
    }
    throw new GraphError(400, 'invalidRequest', `Invalid request: ${method} ${suffix || '(item)'} is not supported`);
  }

  /**
   * Control route for benchmarks: `{folder, folders, filesPerFolder, bytes}` creates `folders` folders in
   * the first drive's root folder `folder` (made if missing), each holding `filesPerFolder` files of
   * `bytes` bytes, in one go (the files share one content blob by hard links), as uploads would leave them.
   */
  async function seed(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readJsonBody(req);
    const { folder, folders, filesPerFolder, bytes } = body as { folder: string; folders: number; filesPerFolder: number; bytes: number };
    const drive = store.state.drives[0];
    const root = store.item(drive.rootId);
    const top = store.childNamed(root.id, folder) ?? store.newItem(root, folder, 'folder', SYSTEM);
    const blob = store.tempFile();
    fs.writeFileSync(blob, crypto.randomBytes(bytes));
    const quickXorHash = quickXorHashOf(blob);
    let links = 0;
    let source = blob;
    for (let f = 0; f < folders; f++) {
      const sub = store.newItem(top, `folder-${String(f).padStart(5, '0')}`, 'folder', SYSTEM);
      for (let n = 0; n < filesPerFolder; n++) {
        const item = store.newItem(sub, `doc-${String(n).padStart(6, '0')}.bin`, 'file', SYSTEM);
        const file = path.join(store.contentDir, `${item.id}-1`);
        // A file system caps the links of one inode (ext4: 65,000): a new copy every 10,000 links.
        if (links++ % 10_000 === 0) {
          fs.copyFileSync(blob, file);
          source = file;
        } else fs.linkSync(source, file);
        item.versions.push({ id: '1.0', file, size: bytes, modified: item.created, by: SYSTEM, quickXorHash });
        item.nextMajor = 2;
        item.mimeType = 'application/octet-stream';
      }
    }
    fs.rmSync(blob);
    store.save();
    return send(req, res, 200, { folderId: top.id, items: folders * (filesPerFolder + 1) });
  }

  /** driveItem: delta on the drive's root (delta.ts): one page, with a nextLink or the deltaLink. */
  function delta(req: IncomingMessage, res: ServerResponse, url: URL, drive: DriveRecord, item: ItemRecord): void {
    // SharePoint and OneDrive for Business offer delta on the root only.
    if (item.kind !== 'root') throw new GraphError(400, 'invalidRequest', 'Delta is only supported on the root of a drive.');
    const link = (seq: number, full = false) => `${base}/drives/${encodeURIComponent(drive.id)}/root/delta?token=${encodeDeltaToken(seq, full)}`;
    const token = url.searchParams.get('token');
    const context = `${base}/$metadata#Collection(driveItem)`;
    if (token === 'latest') return send(req, res, 200, { '@odata.context': context, value: [], '@odata.deltaLink': link(store.changeLog.latest) }, 'microsoft.graph.driveItemCollectionResponse');
    const decoded = token === null ? { seq: -1, full: true } : decodeDeltaToken(token);
    if (decoded === undefined) throw new GraphError(400, 'invalidRequest', 'Invalid delta token.');
    if (token !== null && store.changeLog.isExpired(decoded.seq)) {
      const error = new GraphError(410, 'resyncRequired', 'Resync required. Replace any local items with the server\'s version (including deletes) if you\'re sure that the service was up to date with your local changes when you last sync\'d. Upload any local changes that the server doesn\'t know about.', 'resyncChangesApplyDifferences');
      return send(req, res, 410, graphErrorBody(error.code, error.message, error.inner), 'microsoft.graph.ODataErrors.ODataError', { location: `${base}/drives/${encodeURIComponent(drive.id)}/root/delta` });
    }
    const top = Math.min(Number(url.searchParams.get('$top') ?? DEFAULT_PAGE) || DEFAULT_PAGE, 999);
    const page = store.changeLog.page(drive.id, decoded.seq, top, decoded.full);
    const value = page.entries.map((entry) => {
      if ('tombstone' in entry) {
        const t = entry.tombstone;
        return { id: t.id, name: t.name, deleted: { state: 'deleted' }, parentReference: { driveType: 'documentLibrary', driveId: t.driveId, id: t.parentId }, ...(t.kind === 'folder' ? { folder: {} } : { file: {} }) };
      }
      const json = itemJson(entry.item, url);
      delete json['@odata.context'];
      // Items are tracked by id in delta: a folder's rename does not report its descendants, so no path.
      if (json.parentReference) delete (json.parentReference as Record<string, unknown>).path;
      return json;
    });
    const body: Record<string, unknown> = { '@odata.context': context, value };
    if (page.more) body['@odata.nextLink'] = link(page.last, decoded.full);
    else body['@odata.deltaLink'] = link(page.last);
    return send(req, res, 200, body, 'microsoft.graph.driveItemCollectionResponse');
  }

  function inheritedPermissions(item: ItemRecord): PermissionRecord[] {
    const root = store.item(store.drive(item.driveId).rootId);
    return item.kind === 'root' ? [] : root.permissions;
  }

  async function apiRoute(req: IncomingMessage, res: ServerResponse, url: URL, by: Identity): Promise<void> {
    const p = url.pathname.slice('/v1.0'.length);
    const method = req.method ?? 'GET';
    let m: RegExpExecArray | null;
    if (p === '/sites' && method === 'GET') {
      const search = url.searchParams.get('search');
      const sites = store.state.sites.filter((s) => !search || search === '*' || s.displayName.toLowerCase().includes(search.toLowerCase()));
      return send(req, res, 200, { '@odata.context': `${base}/$metadata#sites`, value: sites.map(siteJson) }, '[]microsoft.graph.site');
    }
    if ((m = /^\/sites\/([^/]+)(\/sites|\/drives|\/drive(?=\/|$))?(.*)$/.exec(p))) {
      const site = store.site(decodeURIComponent(m[1]));
      if (!m[2] && !m[3] && method === 'GET') return send(req, res, 200, { '@odata.context': `${base}/$metadata#sites/$entity`, ...siteJson(site) }, 'microsoft.graph.site');
      if (m[2] === '/sites' && !m[3]) {
        return send(req, res, 200, { '@odata.context': `${base}/$metadata#sites`, value: store.state.sites.filter((s) => s.parentId === site.id).map(siteJson) }, '[]microsoft.graph.site');
      }
      if (m[2] === '/drives' && !m[3]) {
        return send(req, res, 200, { '@odata.context': `${base}/$metadata#drives`, value: store.state.drives.filter((d) => d.siteId === site.id).map(driveJson) }, 'microsoft.graph.driveCollectionResponse');
      }
      if (m[2] === '/drives') {
        const d = /^\/([^/]+)(.*)$/.exec(m[3]);
        if (!d) notFound();
        const drive = store.drive(decodeURIComponent(d[1]));
        if (drive.siteId !== site.id) notFound();
        return driveRoute(req, res, url, drive, d[2], by);
      }
      if (m[2] === '/drive') {
        const drive = store.state.drives.find((d) => d.siteId === site.id);
        if (!drive) notFound();
        return driveRoute(req, res, url, drive, m[3], by);
      }
      notFound();
    }
    if ((m = /^\/drives\/([^/]+)(.*)$/.exec(p))) return driveRoute(req, res, url, store.drive(decodeURIComponent(m[1])), m[2], by);
    throw new GraphError(400, 'BadRequest', `Resource not found for the segment '${p.split('/')[1] ?? ''}'.`);
  }

  return async (req, res, url) => {
    try {
      if (url.pathname === '/_simulator/violations') {
        if (req.method === 'DELETE') checker.violations.length = 0;
        return send(req, res, 200, { checked: checker.checked, violations: checker.violations });
      }
      if (url.pathname === '/_simulator/seed' && req.method === 'POST') return await seed(req, res);
      if (url.pathname === '/_simulator/delta/expire' && req.method === 'POST') {
        store.changeLog.expireTokens();
        store.save();
        return noContent(res);
      }
      if (url.pathname.startsWith('/_layouts/15/download.aspx')) return serveDownload(req, res, url.searchParams.get('tempauth') ?? '');
      if (url.pathname.startsWith('/_upload/')) return await handleUpload(req, res, url.pathname.slice('/_upload/'.length));
      if (!url.pathname.startsWith('/v1.0/')) throw new GraphError(400, 'BadRequest', 'Invalid version.');
      const check = context.identity.verifyBearer(req.headers.authorization, [context.origin, 'https://graph.microsoft.com', '00000003-0000-0000-c000-000000000000']);
      if (!check.ok) {
        return send(req, res, 401, graphErrorBody('InvalidAuthenticationToken', check.code === 'missing' ? 'Access token is empty.' : check.message), 'microsoft.graph.ODataErrors.ODataError', {
          'www-authenticate': `Bearer realm="", authorization_uri="${context.identity.authority}/oauth2/authorize", client_id="00000003-0000-0000-c000-000000000000"`,
        });
      }
      const writes = req.method !== 'GET' && req.method !== 'HEAD';
      if (!check.claims.roles.some((r) => (writes ? /ReadWrite|FullControl/.test(r) : /\.(Read|ReadWrite|FullControl)\./.test(r)))) {
        throw new GraphError(403, 'accessDenied', 'Either scp or roles claim need to be present in the token.');
      }
      await apiRoute(req, res, url, appIdentity(check.claims));
    } catch (error) {
      if (error instanceof GraphError) {
        // Drain what the client still sends so the answer reaches it.
        if (!req.complete) req.resume();
        return sendError(req, res, error);
      }
      throw error;
    }
  };
}

export const graphSimulator: SimulatorDefinition = {
  name: 'graph',
  resources: (origin) => [origin, 'https://graph.microsoft.com'],
  roles: GRAPH_ROLES,
  throttleBody: (status) =>
    status === 429
      ? { error: { code: 'activityLimitReached', message: 'The request has been throttled', innerError: { code: 'throttledRequest', innerError: { code: 'quota' }, date: innerDate(), 'request-id': crypto.randomUUID(), 'client-request-id': crypto.randomUUID() } } }
      : graphErrorBody('serviceNotAvailable', 'The service is temporarily unavailable. Please retry later.'),
  internalErrorBody: (message) => graphErrorBody('generalException', `An unexpected error occurred: ${message}`),
  createHandler: createGraphHandler,
};
