import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import type { Readable } from 'node:stream';
import {
  NotSupportedError,
  UpstreamUnavailableError,
  type Actor,
  type ByteRange,
  type ConnectorDefinition,
  type ContentConnector,
  type FolderInfo,
  type FolderPage,
  type ItemInfo,
  type ListFolderOptions,
  type NewFile,
  type RepositoryDescription,
} from '@gateway/connector-api';

/** Repository ids are the base64url of the item's path relative to the root ('' is the root). */
export function encodeId(relativePath: string): string {
  return 'fs-' + Buffer.from(relativePath, 'utf8').toString('base64url');
}

/**
 * A real folder as a repository. Content operations arrive with the content
 * service; this part covers what the connection calls need.
 */
export class FilesystemConnector implements ContentConnector {
  readonly id: string;
  readonly typeId = 'filesystem';
  readonly description: string;
  readonly publicParams: Record<string, unknown>;

  constructor(
    definition: ConnectorDefinition,
    readonly root: string,
  ) {
    this.id = definition.id;
    this.description = definition.description;
    this.publicParams = { root };
  }

  async describeRepository(): Promise<RepositoryDescription> {
    return {
      repositoryId: this.id,
      repositoryName: path.basename(this.root) || this.root,
      repositoryDescription: this.description || `Filesystem repository at ${this.root}`,
      rootFolderId: encodeId(''),
    };
  }

  async rootFolder(): Promise<FolderInfo> {
    return { folderId: encodeId(''), folderName: path.basename(this.root) || '/', folderPath: '/' };
  }

  async types(): Promise<Record<string, string>> {
    return { file: 'File', folder: 'Folder' };
  }

  async checkHealth(): Promise<void> {
    try {
      await fs.access(this.root, fs.constants.R_OK | fs.constants.W_OK);
    } catch (e) {
      throw new UpstreamUnavailableError(`Repository folder ${this.root} is not accessible: ${(e as Error).message}`);
    }
  }

  getItem(_id: string): Promise<ItemInfo> {
    return this.notYet('getFileItem');
  }

  openContent(_id: string, _range?: ByteRange): Promise<Readable> {
    return this.notYet('getContent');
  }

  idByPath(_folderPath: string, _fileName: string): Promise<string> {
    return this.notYet('getObjectIDByPath');
  }

  listFolder(_folderId: string, _options?: ListFolderOptions): Promise<FolderPage> {
    return this.notYet('listFolderItems');
  }

  createFile(_input: NewFile, _actor: Actor): Promise<string> {
    return this.notYet('createFile');
  }

  deleteItem(_id: string, _allVersions: boolean, _actor: Actor): Promise<string> {
    return this.notYet('deleteObjectByID');
  }

  private async notYet<T>(capability: string): Promise<T> {
    throw new NotSupportedError(capability, this.typeId);
  }
}
