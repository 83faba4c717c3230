import { ConflictError, InvalidArgumentError, NotFoundError, type Actor, type FolderCapability } from '@gateway/connector-api';
import type { CmisConnector } from './cmis.connector';
import { parseAbsolutePath, toPath } from './input';
import { isFolder, objectId } from './item-info';

/** The folders group: createFolder only (no delete by path: the spec keeps that for filesystems). */
export class CmisFolders implements FolderCapability {
  constructor(private readonly connector: CmisConnector) {}

  async createFolder(path: string, actor: Actor): Promise<string> {
    if (path === '') throw new InvalidArgumentError('path', "Invalid parameter 'path': must be the absolute path of a folder");
    const segments = parseAbsolutePath(path, 'path');
    const { info } = await this.connector.connected();
    const user = this.connector.userFor(actor);
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
        parent = objectId((await this.connector.client.createFolder(parent, segments[i], { as: user, id: current, parameter: 'path' })).succinctProperties);
      } catch (e) {
        // Created meanwhile by someone else: use theirs.
        if (!(e instanceof ConflictError)) throw e;
        const again = await this.folderAt(current);
        if (again === undefined) throw e;
        parent = again;
      }
      this.connector.rememberFolder(parent);
    }
    return parent;
  }

  private async folderAt(path: string): Promise<string | undefined> {
    try {
      const props = (await this.connector.client.getObjectByPath(path, { parameter: 'path' })).succinctProperties;
      if (!isFolder(props)) throw new ConflictError(`'${path}' exists and is not a folder`, 'ALREADY_EXISTS', { path });
      return objectId(props);
    } catch (e) {
      if (e instanceof NotFoundError) return undefined;
      throw e;
    }
  }

}
