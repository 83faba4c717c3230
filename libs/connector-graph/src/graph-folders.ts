import { ConflictError, InvalidArgumentError, NotFoundError, type Actor, type FolderCapability } from '@gateway/connector-api';
import { checkName, type DriveItem } from './drive-items';
import type { GraphConnector } from './graph.connector';

/** The folders group: create (with missing parents) and delete by path. */
export class GraphFolders implements FolderCapability {
  constructor(private readonly connector: GraphConnector) {}

  private parsePath(p: string, parameter: string): string[] {
    if (typeof p !== 'string' || !p.startsWith('/')) throw new InvalidArgumentError(parameter, `Invalid parameter '${parameter}': must be an absolute path`);
    const segments = p.split('/').filter((s) => s !== '');
    for (const s of segments) {
      if (s === '.' || s === '..') throw new InvalidArgumentError(parameter, `Invalid parameter '${parameter}': no . or .. segments`);
      checkName(s, parameter);
    }
    return segments;
  }

  async createFolder(folderPath: string, _actor: Actor): Promise<string> {
    const segments = this.parsePath(folderPath, 'path');
    if (segments.length === 0) return (await this.connector.connect()).rootId;
    let parent = (await this.connector.connect()).rootId;
    for (let i = 0; i < segments.length; i++) {
      const existing = await this.connector.fetchByPath(segments.slice(0, i + 1), 'path');
      if (existing) {
        if (existing.folder === undefined) throw new ConflictError(`'/${segments.slice(0, i + 1).join('/')}' is a document, not a folder`, 'NOT_A_FOLDER');
        parent = existing.id;
        continue;
      }
      const res = await this.connector.http.json<DriveItem>({
        method: 'POST',
        url: `${this.connector.params.graphUrl}${await this.connector.itemPath(parent)}/children`,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: segments[i], folder: {}, '@microsoft.graph.conflictBehavior': 'fail' }),
        accept: [409],
        errorContext: { parameter: 'path' },
      });
      if (res.status === 409) {
        // Created meanwhile by someone else: use theirs.
        const raced = await this.connector.fetchByPath(segments.slice(0, i + 1), 'path');
        if (!raced?.folder) throw new ConflictError(`'/${segments.slice(0, i + 1).join('/')}' exists and is not a folder`, 'NOT_A_FOLDER');
        parent = raced.id;
      } else {
        parent = res.data.id;
      }
    }
    return parent;
  }

  async deleteFolder(folderPath: string, _actor: Actor): Promise<string> {
    const segments = this.parsePath(folderPath, 'path');
    if (segments.length === 0) throw new InvalidArgumentError('path', "Invalid parameter 'path': the root folder cannot be deleted");
    const folder = await this.connector.fetchByPath(segments, 'path');
    if (!folder) throw new NotFoundError('item', folderPath);
    if (folder.folder === undefined) throw new InvalidArgumentError('path', `Invalid parameter 'path': '${folderPath}' is a document`);
    await this.connector.call({ method: 'DELETE', path: await this.connector.itemPath(folder.id), errorContext: { id: folderPath } });
    return folder.id;
  }
}
