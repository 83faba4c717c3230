import { Injectable } from '@nestjs/common';
import {
  InvalidArgumentError,
  NotSupportedError,
  type Actor,
  type ContentConnector,
  type ItemInfo,
} from '@gateway/connector-api';
import type { AuthenticatedUser } from '../auth/auth.decorators';
import type { DownloadSource } from '../common/download';
import type { IncomingContent } from '../common/incoming-content';
import { DownloadOffload, offloadable } from '../common/offload';
import { Page } from '../common/paging';
import { StreamedObject } from '../common/streamed-object';
import { ConnectorRegistry } from '../connectors/connector-registry.service';
import { UploadsService } from '../uploads/uploads.service';
import {
  UPDATE_PARAMETERS,
  type CheckInQuery,
  type DeleteQuery,
  type FolderItemsQuery,
  type IdByPathQuery,
  type PostFileQuery,
  type UpdateContentQuery,
  type UpdateQuery,
} from './content.dto';
import {
  collectProperties,
  toFolderItemEntry,
  toFolderListing,
  toPropertyMap,
  toVersionEntry,
  type FolderItemEntry,
  type PropertyMap,
  type VersionEntry,
} from './content.mapping';

export interface IdResult {
  id: string;
}

/** The multipart part that carries the file of POST file. */
export const FILE_PART = 'file';

/**
 * Spec 4.2 over the ContentConnector interface. Every operation resolves the
 * connector, checks the capability (NotSupportedError names it), validates
 * what the DTOs cannot, and maps the driver's answer to the spec shape. The
 * request body is read only after all of that passed.
 */
@Injectable()
export class ContentService {
  constructor(
    private readonly registry: ConnectorRegistry,
    private readonly offload: DownloadOffload,
    private readonly uploads: UploadsService,
  ) {}

  /** What the download helper needs to serve a document (or one version of it). */
  async fileDownload(connectorId: string, id: string): Promise<DownloadSource> {
    const connector = this.registry.get(connectorId);
    const item = connector.contentInfo ? await connector.contentInfo(id) : await connector.getItem(id);
    if (item.baseType !== 'document') {
      throw new InvalidArgumentError('id', `Invalid parameter 'id': '${id}' is a folder; only documents have content`, 'NOT_A_DOCUMENT');
    }
    return {
      size: item.size,
      mimeType: item.mimeType,
      fileName: item.name,
      etag: item.etag,
      lastModified: item.modified,
      open: (range) => connector.openContent(item.id, range),
      handOff: offloadable(this.offload, connectorId, connector, item.id),
      identity: {
        connectorId,
        documentId: id,
        path: 'path' in item && typeof item.path === 'string' ? item.path : null,
        // A version id reads one version; the document's own id is its series id.
        version: item.versionSeriesId !== undefined && item.versionSeriesId !== id,
      },
    };
  }

  async idByPath(connectorId: string, query: IdByPathQuery): Promise<IdResult> {
    const connector = this.registry.get(connectorId);
    return { id: await connector.idByPath(query.folderPath, query.fileName) };
  }

  async createFile(connectorId: string, query: PostFileQuery, body: IncomingContent, user: AuthenticatedUser): Promise<IdResult> {
    const connector = this.registry.get(connectorId);
    if (query.type !== undefined) await this.checkType(connector, query.type);
    const actor = toActor(user);
    if (query.uploadId !== undefined) {
      const uploadId = query.uploadId;
      await refuseBodyWithUpload(body);
      const id = await this.uploads.consume(uploadId, user, (upload) => {
        const fileName = query.fileName ?? upload.fileName;
        if (fileName === undefined) {
          throw new InvalidArgumentError('fileName', `Invalid parameter 'fileName': upload '${uploadId}' has no filename metadata; give fileName`);
        }
        return connector.createFile({ folderId: query.folderId, fileName, type: query.type, mimeType: upload.mimeType, content: upload.stream }, actor);
      });
      return { id };
    }
    const id = await body.receiveFile(
      FILE_PART,
      (part) =>
        connector.createFile(
          {
            folderId: query.folderId,
            // The query parameter is authoritative; the part's own name is the fallback.
            fileName: query.fileName ?? part.fileName,
            type: query.type,
            mimeType: part.mimeType,
            content: part.stream,
          },
          actor,
        ),
      (created) => connector.deleteItem(created, true, actor),
    );
    return { id };
  }

  /**
   * Spec "Update file": new content when a body is supplied (then the
   * properties, if any), otherwise the properties alone.
   */
  async update(connectorId: string, query: UpdateQuery, rawQuery: Record<string, unknown>, body: IncomingContent, user: AuthenticatedUser): Promise<IdResult> {
    const connector = this.registry.get(connectorId);
    const properties = collectProperties(rawQuery, UPDATE_PARAMETERS);
    const hasProperties = Object.keys(properties).length > 0;
    // Only headers are looked at (a chunked body is peeked at): nothing is consumed before every check passed.
    const content = await body.rawBody();
    if (content === undefined && !hasProperties) {
      throw new InvalidArgumentError('body', 'Nothing to update: send the new content as the body, or <property>=<value> query parameters', 'NOTHING_TO_UPDATE');
    }
    const contentUpdate = content === undefined ? undefined : requireContentUpdate(connector);
    const propertyUpdate = hasProperties ? requirePropertyUpdate(connector) : undefined;
    if (query.type !== undefined) await this.checkType(connector, query.type);
    const target = await this.resolveUpdateTarget(connector, query);
    const actor = toActor(user);

    let id = target;
    if (contentUpdate && content) id = await contentUpdate.updateContent(target, { content, mimeType: body.contentType }, actor);
    if (propertyUpdate) id = await propertyUpdate.updateProperties(id, properties, actor);
    return { id };
  }

  async updateContent(connectorId: string, query: UpdateContentQuery, body: IncomingContent, user: AuthenticatedUser): Promise<IdResult> {
    const connector = this.registry.get(connectorId);
    const contentUpdate = requireContentUpdate(connector);
    const actor = toActor(user);
    if (query.uploadId !== undefined) {
      await refuseBodyWithUpload(body);
      const id = await this.uploads.consume(query.uploadId, user, (upload) =>
        contentUpdate.updateContent(query.fileId, { content: upload.stream, mimeType: upload.mimeType }, actor),
      );
      return { id };
    }
    return { id: await contentUpdate.updateContent(query.fileId, { content: body.rawStream(), mimeType: body.contentType }, actor) };
  }

  async updateProperties(connectorId: string, fileId: string, rawQuery: Record<string, unknown>, user: AuthenticatedUser): Promise<IdResult> {
    const connector = this.registry.get(connectorId);
    const propertyUpdate = requirePropertyUpdate(connector);
    const properties = collectProperties(rawQuery, ['fileId']);
    if (Object.keys(properties).length === 0) {
      throw new InvalidArgumentError('properties', "Invalid parameter 'properties': give at least one <property>=<value> query parameter", 'NOTHING_TO_UPDATE');
    }
    return { id: await propertyUpdate.updateProperties(fileId, properties, toActor(user)) };
  }

  async checkIn(connectorId: string, query: CheckInQuery, user: AuthenticatedUser): Promise<IdResult> {
    const connector = this.registry.get(connectorId);
    if (!connector.checkInOut) throw new NotSupportedError('checkIn', connector.typeId);
    return { id: await connector.checkInOut.checkIn(query.id, toActor(user), query.comment) };
  }

  async checkOut(connectorId: string, id: string, user: AuthenticatedUser): Promise<IdResult> {
    const connector = this.registry.get(connectorId);
    if (!connector.checkInOut) throw new NotSupportedError('checkOut', connector.typeId);
    return { id: await connector.checkInOut.checkOut(id, toActor(user)) };
  }

  async listVersions(connectorId: string, id: string): Promise<VersionEntry[]> {
    const connector = this.registry.get(connectorId);
    if (!connector.versioning) throw new NotSupportedError('listVersions', connector.typeId);
    return (await connector.versioning.listVersions(id)).map(toVersionEntry);
  }

  /** Spec: a document by `id` (allversions default true), or a folder by `path`; exactly one of the two. */
  async delete(connectorId: string, query: DeleteQuery, user: AuthenticatedUser): Promise<IdResult> {
    const connector = this.registry.get(connectorId);
    if (query.id !== undefined && query.path !== undefined) {
      throw new InvalidArgumentError('path', "Invalid parameter 'path': give either id (a document) or path (a folder), not both");
    }
    if (query.path !== undefined) {
      const deleteFolder = connector.folders?.deleteFolder?.bind(connector.folders);
      if (!deleteFolder) throw new NotSupportedError('deleteFolder', connector.typeId);
      return { id: await deleteFolder(query.path, toActor(user)) };
    }
    if (query.id === undefined) {
      throw new InvalidArgumentError('id', "Invalid parameter 'id': give id (a document) or path (a folder)");
    }
    return { id: await connector.deleteItem(query.id, query.allversions ?? true, toActor(user)) };
  }

  /**
   * A page (`limit`) is answered whole: it is bounded. Without `limit` the rest of the folder is
   * streamed entry by entry, fetched from the connector LISTING_BATCH items at a time, so memory
   * does not grow with the folder.
   */
  async folderItems(connectorId: string, query: FolderItemsQuery): Promise<Page<Record<string, FolderItemEntry> | StreamedObject>> {
    const connector = this.registry.get(connectorId);
    if (query.limit !== undefined) {
      const page = await connector.listFolder(query.id, { limit: query.limit, cursor: query.cursor });
      return new Page(toFolderListing(page.items), page.nextCursor);
    }
    // Mapped by a plain iterator, not a generator: a generator suspended at its yield keeps the
    // batch while it is written, and what is referenced then lives into the old generation.
    const entries = mapBatches(folderBatches(connector, query.id, query.cursor), (items) =>
      items.map((item): [string, FolderItemEntry] => [item.path, toFolderItemEntry(item)]),
    );
    return new Page(await StreamedObject.start(entries));
  }

  async createFolder(connectorId: string, path: string, user: AuthenticatedUser): Promise<IdResult> {
    const connector = this.registry.get(connectorId);
    if (!connector.folders) throw new NotSupportedError('createFolder', connector.typeId);
    return { id: await connector.folders.createFolder(path, toActor(user)) };
  }

  async properties(connectorId: string, id: string): Promise<PropertyMap> {
    const connector = this.registry.get(connectorId);
    return toPropertyMap(await connector.getItem(id));
  }

  private async checkType(connector: ContentConnector, type: string): Promise<void> {
    const types = await connector.types();
    if (!Object.prototype.hasOwnProperty.call(types, type)) {
      throw new InvalidArgumentError('type', `Invalid parameter 'type': must be one of ${Object.keys(types).join(', ')} (see the types call)`);
    }
  }

  /** fileId, or the document named fileName inside folderId. */
  private async resolveUpdateTarget(connector: ContentConnector, query: UpdateQuery): Promise<string> {
    const byName = query.fileName !== undefined || query.folderId !== undefined;
    if (query.fileId !== undefined) {
      if (byName) throw new InvalidArgumentError('fileId', "Invalid parameter 'fileId': give either fileId or fileName with folderId, not both");
      return query.fileId;
    }
    if (!byName) throw new InvalidArgumentError('fileId', "Invalid parameter 'fileId': give fileId, or fileName with folderId");
    if (query.folderId === undefined) throw new InvalidArgumentError('folderId', "Invalid parameter 'folderId': fileName needs folderId");
    if (query.fileName === undefined) throw new InvalidArgumentError('fileName', "Invalid parameter 'fileName': folderId needs fileName");
    const folder: ItemInfo = await connector.getItem(query.folderId);
    if (folder.baseType !== 'folder') {
      throw new InvalidArgumentError('folderId', `Invalid parameter 'folderId': '${query.folderId}' is not a folder`);
    }
    return connector.idByPath(folder.path, query.fileName);
  }
}

/** With uploadId the content is the upload's: a body as well is ambiguous, and refused before anything is read. */
async function refuseBodyWithUpload(body: IncomingContent): Promise<void> {
  const content = await body.rawBody();
  if (content !== undefined) {
    content.resume();
    throw new InvalidArgumentError('uploadId', "Invalid parameter 'uploadId': the content comes from the upload; send no body with uploadId", 'UPLOAD_WITH_BODY');
  }
}

function toActor(user: AuthenticatedUser): Actor {
  return { username: user.username };
}

function requireContentUpdate(connector: ContentConnector) {
  if (!connector.contentUpdate) throw new NotSupportedError('updateFile', connector.typeId);
  return connector.contentUpdate;
}

function requirePropertyUpdate(connector: ContentConnector) {
  if (!connector.propertyUpdate) throw new NotSupportedError('updateProperties', connector.typeId);
  return connector.propertyUpdate;
}

/** `source` with `map` applied to each batch as it is asked for; closing it closes the source. */
function mapBatches<T, U>(source: AsyncIterable<T>, map: (batch: T) => U): AsyncIterable<U> {
  const iterator = source[Symbol.asyncIterator]();
  return {
    [Symbol.asyncIterator]: () => ({
      next: async (): Promise<IteratorResult<U>> => {
        const next = await iterator.next();
        return next.done ? { done: true, value: undefined } : { done: false, value: map(next.value) };
      },
      return: async (): Promise<IteratorResult<U>> => {
        await iterator.return?.(undefined);
        return { done: true, value: undefined };
      },
    }),
  };
}

/** Items a whole-folder listing asks its connector for at a time. */
export const LISTING_BATCH = 1000;

/** The folder from `cursor` to its end in bounded batches: the connector's own way, or page by page. */
function folderBatches(connector: ContentConnector, folderId: string, cursor: string | undefined): AsyncIterable<ItemInfo[]> {
  if (connector.folderBatches) return connector.folderBatches(folderId, { batchSize: LISTING_BATCH, cursor });
  return pagedBatches(connector, folderId, cursor);
}

async function* pagedBatches(connector: ContentConnector, folderId: string, cursor: string | undefined): AsyncGenerator<ItemInfo[]> {
  let next = cursor;
  do {
    const page = await connector.listFolder(folderId, { limit: LISTING_BATCH, cursor: next });
    next = page.nextCursor;
    yield page.items;
  } while (next !== undefined);
}
