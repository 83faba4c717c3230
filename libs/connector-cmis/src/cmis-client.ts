/**
 * A CMIS 1.1 browser-binding client on Node's global fetch (undici), except
 * for content downloads, which go through @gateway/content-transport (see getContent).
 *
 * Why not the npm `cmis` package: it has been unmaintained since 2020 and it
 * buffers uploads whole in memory (it builds the multipart body as one
 * string/Buffer), which rules it out for a gateway that streams documents of
 * any size. This client streams both ways: uploads are a multipart body
 * produced chunk by chunk (see multipart.ts, fetch with `duplex: 'half'`), and
 * downloads hand the response body on as it arrives.
 *
 * Only what the connector needs is here. Every call uses succinct JSON
 * (`succinct=true`: properties as `succinctProperties`, id → value) and the
 * `simple` date format (epoch milliseconds).
 */
import { Readable } from 'node:stream';
import { GatewayError } from '@gateway/connector-api';
import { ContentTransport, readSmall, type ContentAnswer } from '@gateway/content-transport';
import { CmisTimeout, mapCmisFailure, mapTransportError, type CmisErrorContext, type CmisFailure } from './cmis-errors';
import { multipartBody, type FormField } from './multipart';

export type CmisProperties = Record<string, unknown>;

export interface CmisObject {
  succinctProperties: CmisProperties;
}

export interface CmisChildrenPage {
  objects: CmisObject[];
  hasMoreItems: boolean;
  numItems?: number;
}

export interface CmisAce {
  principal: { principalId: string };
  permissions: string[];
  isDirect?: boolean;
}

export interface CmisAcl {
  aces: CmisAce[];
  isExact?: boolean;
}

export interface CmisRepositoryInfo {
  repositoryId: string;
  repositoryName: string;
  repositoryDescription: string;
  rootFolderId: string;
  productName?: string;
  productVersion?: string;
  principalIdAnyone?: string;
  capabilities: Record<string, unknown>;
  aclCapabilities?: { supportedPermissions?: string; propagation?: string; permissions?: Array<{ permission: string; description?: string }> };
}

export interface CmisTypeDefinition {
  id: string;
  displayName?: string;
  baseId: string;
  parentId?: string;
  creatable?: boolean;
  versionable?: boolean;
  contentStreamAllowed?: string;
  propertyDefinitions?: Record<string, CmisPropertyDefinition>;
}

export interface CmisPropertyDefinition {
  id: string;
  propertyType: string;
  cardinality: string;
  updatability: string;
  /** String properties that declare a limit. */
  maxLength?: number;
}

export interface CmisTypeTreeNode {
  type: CmisTypeDefinition;
  children?: CmisTypeTreeNode[];
}

export interface CmisClientOptions {
  /** Browser binding service URL, e.g. http://host:8080/cmis/browser (no trailing slash). */
  url: string;
  repositoryId: string;
  user: string;
  password: string;
  /** Longest the server may stay silent: before answering, and between two chunks of a body. */
  timeoutMs: number;
}

export interface ContentResponse {
  status: number;
  stream: Readable;
  /** `Content-Range` when the server honoured the range (206). */
  contentRange?: string;
}

export interface CallOptions extends CmisErrorContext {
  /** CMIS user name for this call (Basic user name); default the configured user. */
  as?: string;
}

export interface AceChange {
  principal: string;
  permissions: string[];
}

/** Fires when nothing happened for `ms`: no answer yet, or no chunk of a body. */
class IdleTimer {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** Extra reaction to the timeout (e.g. failing a body stream already handed on). */
  onTimeout?: (e: CmisTimeout) => void;

  constructor(
    private readonly ms: number,
    private readonly onIdle: (e: CmisTimeout) => void,
  ) {
    this.touch();
  }

  touch(): void {
    if (this.stopped) return;
    if (this.timer) this.timer.refresh();
    else
      this.timer = setTimeout(() => {
        const e = new CmisTimeout(this.ms);
        this.onTimeout?.(e);
        this.onIdle(e);
      }, this.ms);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }
}

export class CmisClient {
  readonly repositoryUrl: string;
  readonly rootUrl: string;
  private readonly content: ContentTransport;

  constructor(readonly options: CmisClientOptions) {
    this.repositoryUrl = `${options.url}/${encodeURIComponent(options.repositoryId)}`;
    this.rootUrl = `${this.repositoryUrl}/root`;
    // HTTP/1.0: servlet containers then send the bytes themselves, not chunked (README: downloads).
    this.content = new ContentTransport({ idleTimeoutMs: options.timeoutMs, idleTimeout: (ms) => new CmisTimeout(ms), http10: true });
  }

  // ---- repository -----------------------------------------------------------

  async repositoryInfo(options: CallOptions = {}): Promise<CmisRepositoryInfo> {
    const all = await this.getJson<Record<string, CmisRepositoryInfo>>(this.repositoryUrl, { cmisselector: 'repositoryInfo' }, { parameter: 'repositoryId', ...options });
    const info = all[this.options.repositoryId] ?? Object.values(all).find((r) => r.repositoryId === this.options.repositoryId);
    if (!info) throw mapCmisFailure({ status: 404, exception: 'objectNotFound' }, { id: this.options.repositoryId });
    return info;
  }

  typeDescendants(typeId: string): Promise<CmisTypeTreeNode[]> {
    return this.getJson(this.repositoryUrl, { cmisselector: 'typeDescendants', typeId, depth: '-1', includePropertyDefinitions: 'true' });
  }

  typeDefinition(typeId: string, options: CallOptions = {}): Promise<CmisTypeDefinition> {
    return this.getJson(this.repositoryUrl, { cmisselector: 'typeDefinition', typeId }, options);
  }

  // ---- reading ----------------------------------------------------------------

  /** getObject; `latest` asks for the latest version of the version series the id belongs to. */
  getObject(objectId: string, options: CallOptions & { latest?: boolean; filter?: string } = {}): Promise<CmisObject> {
    return this.getJson(this.rootUrl, {
      objectId,
      cmisselector: 'object',
      ...(options.latest ? { returnVersion: 'latest' } : {}),
      ...(options.filter ? { filter: options.filter } : {}),
      includeAllowableActions: 'false',
      includeRelationships: 'none',
      renditionFilter: 'cmis:none',
      includePolicyIds: 'false',
      includeACL: 'false',
      succinct: 'true',
    }, { id: objectId, ...options });
  }

  /** getObjectByPath; `path` is absolute, '/'-separated, unencoded. */
  getObjectByPath(path: string, options: CallOptions & { filter?: string } = {}): Promise<CmisObject> {
    const encoded = path.split('/').filter((s) => s !== '').map(encodeURIComponent).join('/');
    const query = { cmisselector: 'object', succinct: 'true', includeAllowableActions: 'false', ...(options.filter ? { filter: options.filter } : {}) };
    return this.getJson(`${this.rootUrl}${encoded ? `/${encoded}` : ''}`, query, { id: path, ...options });
  }

  /** The folders a document or folder is filed in, with their properties (incl. cmis:path). */
  getParents(objectId: string, options: CallOptions & { filter?: string } = {}): Promise<Array<{ object: CmisObject; relativePathSegment?: string }>> {
    return this.getJson(this.rootUrl, {
      objectId,
      cmisselector: 'parents',
      ...(options.filter ? { filter: options.filter } : {}),
      includeRelativePathSegment: 'false',
      includeAllowableActions: 'false',
      succinct: 'true',
    }, { id: objectId, ...options });
  }

  async getChildren(
    folderId: string,
    page: { maxItems: number; skipCount: number; filter?: string; orderBy?: string },
    options: CallOptions = {},
  ): Promise<CmisChildrenPage> {
    const result = await this.getJson<{ objects?: Array<{ object: CmisObject }>; hasMoreItems?: boolean; numItems?: number }>(this.rootUrl, {
      objectId: folderId,
      cmisselector: 'children',
      maxItems: String(page.maxItems),
      skipCount: String(page.skipCount),
      ...(page.filter ? { filter: page.filter } : {}),
      ...(page.orderBy ? { orderBy: page.orderBy } : {}),
      includeAllowableActions: 'false',
      includeRelationships: 'none',
      renditionFilter: 'cmis:none',
      includePathSegment: 'false',
      succinct: 'true',
    }, { id: folderId, ...options });
    return { objects: (result.objects ?? []).map((o) => o.object), hasMoreItems: result.hasMoreItems === true, numItems: result.numItems };
  }

  /** getAllVersions: newest first, the private working copy (if any) included. */
  getAllVersions(objectId: string, options: CallOptions & { filter?: string } = {}): Promise<CmisObject[]> {
    return this.getJson(this.rootUrl, {
      objectId,
      cmisselector: 'versions',
      ...(options.filter ? { filter: options.filter } : {}),
      includeAllowableActions: 'false',
      succinct: 'true',
    }, { id: objectId, ...options });
  }

  getAcl(objectId: string, options: CallOptions = {}): Promise<CmisAcl> {
    return this.getJson(this.rootUrl, { objectId, cmisselector: 'acl', onlyBasicPermissions: 'false' }, { id: objectId, ...options });
  }

  /**
   * The content stream of one object (a version id, not a version series).
   * A range goes to the server as an HTTP Range header; the body is handed on
   * as it arrives, with the idle timeout applied between chunks (CmisTimeout),
   * read by @gateway/content-transport: HTTP/1.0 on a connection of its own, its
   * reads lent to the response writer.
   */
  async getContent(objectId: string, range: { start: number; end: number } | undefined, options: CallOptions = {}): Promise<ContentResponse> {
    const url = new URL(`${this.rootUrl}?${new URLSearchParams({ objectId, cmisselector: 'content' }).toString()}`);
    const headers: Record<string, string> = { authorization: this.authorization(options.as) };
    if (range) headers.range = `bytes=${range.start}-${range.end}`;
    let answer: ContentAnswer;
    try {
      answer = await this.content.get(url, headers);
    } catch (e) {
      throw mapTransportError(e, this.options.url);
    }
    if (answer.status < 200 || answer.status >= 300) {
      const text = await readSmall(answer.body).catch(() => '');
      throw this.failureOf(answer.status, text, { id: objectId, ...options });
    }
    return { status: answer.status, stream: answer.body, contentRange: answer.headers['content-range'] };
  }

  // ---- writing ----------------------------------------------------------------

  createDocument(
    folderId: string,
    properties: Record<string, string | string[]>,
    content: { stream: Readable; mimeType: string; fileName: string },
    versioningState: 'none' | 'major' | 'minor' | 'checkedout',
    options: CallOptions = {},
  ): Promise<CmisObject> {
    const fields: FormField[] = [
      ['_charset_', 'UTF-8'],
      ['cmisaction', 'createDocument'],
      ['objectId', folderId],
      ...propertyFields(properties),
      ['versioningState', versioningState],
      ['succinct', 'true'],
    ];
    return this.postMultipart(fields, content, options);
  }

  createFolder(parentId: string, name: string, options: CallOptions = {}): Promise<CmisObject> {
    return this.postForm([
      ['cmisaction', 'createFolder'],
      ['objectId', parentId],
      ...propertyFields({ 'cmis:objectTypeId': 'cmis:folder', 'cmis:name': name }),
      ['succinct', 'true'],
    ], options);
  }

  setContentStream(objectId: string, content: { stream: Readable; mimeType: string; fileName: string }, options: CallOptions = {}): Promise<CmisObject> {
    return this.postMultipart(
      [
        ['_charset_', 'UTF-8'],
        ['cmisaction', 'setContent'],
        ['objectId', objectId],
        ['overwriteFlag', 'true'],
        ['succinct', 'true'],
      ],
      content,
      { id: objectId, ...options },
    );
  }

  checkOut(objectId: string, options: CallOptions = {}): Promise<CmisObject> {
    return this.postForm([['cmisaction', 'checkOut'], ['objectId', objectId], ['succinct', 'true']], { id: objectId, ...options });
  }

  async cancelCheckOut(pwcId: string, options: CallOptions = {}): Promise<void> {
    await this.postForm([['cmisaction', 'cancelCheckOut'], ['objectId', pwcId]], { id: pwcId, ...options });
  }

  checkIn(pwcId: string, comment: string | undefined, options: CallOptions = {}): Promise<CmisObject> {
    return this.postForm([
      ['cmisaction', 'checkIn'],
      ['objectId', pwcId],
      ['major', 'true'],
      ...(comment !== undefined ? ([['checkinComment', comment]] as FormField[]) : []),
      ['succinct', 'true'],
    ], { id: pwcId, ...options });
  }

  /** updateProperties; a null value unsets the property, an array sets a multi-valued one. */
  updateProperties(objectId: string, properties: Record<string, string | string[] | null>, options: CallOptions = {}): Promise<CmisObject> {
    return this.postForm([['cmisaction', 'update'], ['objectId', objectId], ...propertyFields(properties), ['succinct', 'true']], { id: objectId, ...options });
  }

  /** moveObject (CMIS 1.1 §2.2.4.13): files the object in `targetFolderId` instead of `sourceFolderId`. */
  moveObject(objectId: string, sourceFolderId: string, targetFolderId: string, options: CallOptions = {}): Promise<CmisObject> {
    return this.postForm([['cmisaction', 'move'], ['objectId', objectId], ['sourceFolderId', sourceFolderId], ['targetFolderId', targetFolderId], ['succinct', 'true']], { id: objectId, ...options });
  }

  async deleteObject(objectId: string, allVersions: boolean, options: CallOptions = {}): Promise<void> {
    await this.postForm([['cmisaction', 'delete'], ['objectId', objectId], ['allVersions', String(allVersions)]], { id: objectId, ...options });
  }

  applyAcl(objectId: string, add: AceChange[], remove: AceChange[], options: CallOptions = {}): Promise<CmisAcl> {
    const fields: FormField[] = [['cmisaction', 'applyACL'], ['objectId', objectId]];
    add.forEach((ace, i) => {
      fields.push([`addACEPrincipal[${i}]`, ace.principal]);
      ace.permissions.forEach((p, j) => fields.push([`addACEPermission[${i}][${j}]`, p]));
    });
    remove.forEach((ace, i) => {
      fields.push([`removeACEPrincipal[${i}]`, ace.principal]);
      ace.permissions.forEach((p, j) => fields.push([`removeACEPermission[${i}][${j}]`, p]));
    });
    return this.postForm(fields, { id: objectId, ...options });
  }

  // ---- transport --------------------------------------------------------------

  private authorization(as: string | undefined): string {
    return 'Basic ' + Buffer.from(`${as ?? this.options.user}:${this.options.password}`, 'utf8').toString('base64');
  }

  /** Sends a request with the idle timeout armed; the caller stops the timer when done with the body. */
  private async send(
    url: string,
    init: { method: string; headers?: Record<string, string>; body?: string | AsyncIterable<Uint8Array> },
    options: CallOptions,
    onTimer?: (timer: IdleTimer) => void,
  ): Promise<{ response: Response; timer: IdleTimer }> {
    const controller = new AbortController();
    const timer = new IdleTimer(this.options.timeoutMs, (e) => controller.abort(e));
    onTimer?.(timer);
    const streamed = init.body !== undefined && typeof init.body !== 'string';
    try {
      const response = await fetch(url, {
        method: init.method,
        headers: { authorization: this.authorization(options.as), accept: 'application/json', ...init.headers },
        body: init.body as never,
        signal: controller.signal,
        ...(streamed ? { duplex: 'half' } : {}),
      });
      timer.touch();
      return { response, timer };
    } catch (e) {
      timer.stop();
      throw controller.signal.aborted && controller.signal.reason instanceof CmisTimeout ? mapTransportError(controller.signal.reason, this.options.url) : e;
    }
  }

  private async getJson<T>(base: string, query: Record<string, string>, options: CallOptions = {}): Promise<T> {
    const url = `${base}?${new URLSearchParams(query).toString()}`;
    return this.exchange<T>(url, { method: 'GET' }, options);
  }

  private postForm<T>(fields: FormField[], options: CallOptions = {}): Promise<T> {
    const body = new URLSearchParams([['_charset_', 'UTF-8'], ...fields]).toString();
    return this.exchange<T>(this.rootUrl, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded; charset=UTF-8' }, body }, options);
  }

  private async postMultipart<T>(fields: FormField[], content: { stream: Readable; mimeType: string; fileName: string }, options: CallOptions): Promise<T> {
    let sourceError: unknown;
    let timer: IdleTimer | undefined;
    const multipart = multipartBody(fields, { field: 'content', fileName: content.fileName, mimeType: content.mimeType, content: content.stream }, {
      onChunk: () => timer?.touch(),
      onSourceError: (e) => (sourceError = e),
    });
    try {
      return await this.exchange<T>(this.rootUrl, { method: 'POST', headers: { 'content-type': multipart.contentType }, body: multipart.body }, options, (t) => (timer = t));
    } catch (e) {
      // The client's upload failed (aborted, malformed multipart): that is the client's problem, not the repository's.
      if (sourceError !== undefined) throw new SourceStreamError(sourceError);
      throw e;
    }
  }

  /** One request whose answer is JSON (or empty); failures become typed errors. */
  private async exchange<T>(
    url: string,
    init: { method: string; headers?: Record<string, string>; body?: string | AsyncIterable<Uint8Array> },
    options: CallOptions,
    onTimer?: (timer: IdleTimer) => void,
  ): Promise<T> {
    let sent;
    try {
      sent = await this.send(url, init, options, onTimer);
    } catch (e) {
      throw mapTransportError(e, this.options.url);
    }
    const { response, timer } = sent;
    try {
      if (!response.ok) throw await this.failure(response, options);
      const text = await response.text();
      if (text.trim() === '') return undefined as T;
      try {
        return JSON.parse(text) as T;
      } catch {
        throw mapCmisFailure({ status: 502, message: `not JSON: ${text.slice(0, 200)}` }, options);
      }
    } catch (e) {
      throw e instanceof GatewayError ? e : mapTransportError(e, this.options.url);
    } finally {
      timer.stop();
    }
  }

  /** Reads a failed answer: the browser binding sends `{exception, message}` JSON. */
  private async failure(response: Response, context: CallOptions): Promise<GatewayError> {
    let text = '';
    try {
      text = await response.text();
    } catch {
      // body unreadable: the status must do
    }
    return this.failureOf(response.status, text, context);
  }

  private failureOf(status: number, text: string, context: CallOptions): GatewayError {
    const failure: CmisFailure = { status };
    try {
      const body = JSON.parse(text) as { exception?: unknown; message?: unknown };
      if (typeof body.exception === 'string') failure.exception = body.exception;
      if (typeof body.message === 'string') failure.message = body.message;
    } catch {
      failure.message = text.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').trim().slice(0, 300);
    }
    return mapCmisFailure(failure, { user: context.as ?? this.options.user, ...context });
  }


}

/** The upload's source stream failed while it was being sent. */
export class SourceStreamError extends Error {
  constructor(readonly source: unknown) {
    super(`the content could not be read (${((source as Error)?.message ?? String(source)).slice(0, 200)})`);
  }
}

function propertyFields(properties: Record<string, string | string[] | null>): FormField[] {
  const fields: FormField[] = [];
  Object.entries(properties).forEach(([id, value], i) => {
    fields.push([`propertyId[${i}]`, id]);
    if (value === null) return;
    if (Array.isArray(value)) value.forEach((v, j) => fields.push([`propertyValue[${i}][${j}]`, v]));
    else fields.push([`propertyValue[${i}]`, value]);
  });
  return fields;
}
