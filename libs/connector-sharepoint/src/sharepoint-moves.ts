import { InvalidArgumentError, type Actor, type MoveCapability, type MoveDestination } from '@gateway/connector-api';
import { parseId } from './ids';
import { checkName } from './names';
import { literal, query, readEntity, str } from './odata';
import type { SharePointConnector } from './sharepoint.connector';

/**
 * The move group: `POST web/GetFileById('…')/moveto(newurl='<folder's ServerRelativeUrl>/<name>',flags=0)`
 * (SharePoint REST SP.File.moveTo; flags 0: a file at the new URL is not overwritten, the call fails). The
 * UniqueId, hence the gateway id, survives the move.
 */
export class SharePointMoves implements MoveCapability {
  constructor(private readonly connector: SharePointConnector) {}

  async moveItem(id: string, to: MoveDestination, actor: Actor): Promise<string> {
    const { spId, file } = await this.connector.fileOf(id, 'id');
    const folder = parseId(to.folderId, 'folderId');
    if (folder.kind !== 'folder') throw new InvalidArgumentError('folderId', `Invalid parameter 'folderId': '${to.folderId}' is not a folder`);
    const name = checkName(to.fileName, 'fileName');
    this.connector.assertWritable(file, actor, id);
    const folderUrl = str(readEntity(await this.connector.getJson(`web/GetFolderById(${literal(folder.uid)})${query({ $select: 'ServerRelativeUrl' })}`, { id: to.folderId, parameter: 'folderId' })), 'ServerRelativeUrl');
    if (!folderUrl) throw new InvalidArgumentError('folderId', `Invalid parameter 'folderId': folder '${to.folderId}' has no URL`);
    const newUrl = `${folderUrl.replace(/\/$/, '')}/${name}`;
    await this.connector.post(`web/GetFileById(${literal(spId.uid)})/moveto(newurl=${literal(newUrl)},flags=0)`, { errorContext: { id, parameter: 'fileName' } });
    return id;
  }
}
