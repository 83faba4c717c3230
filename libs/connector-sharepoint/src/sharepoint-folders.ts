import { ConflictError, InvalidArgumentError, NotFoundError, type Actor, type FolderCapability } from '@gateway/connector-api';
import { ATTRIBUTION_FIELDS, drain } from '@gateway/microsoft-client';
import { folderId } from './ids';
import { parseAbsolutePath } from './names';
import { ACCEPT, literal, query, readEntity, str } from './odata';
import type { SharePointConnector } from './sharepoint.connector';

/** The folders group: create (with missing parents) and delete (to the recycle bin) by path. */
export class SharePointFolders implements FolderCapability {
  constructor(private readonly connector: SharePointConnector) {}

  private async folderAt(serverPath: string): Promise<{ uid: string } | 'file' | undefined> {
    const q = query({ '@p': literal(serverPath), $select: 'UniqueId' });
    const res = await this.connector.http.json({ method: 'GET', url: `${this.connector.api}/web/GetFolderByServerRelativePath(decodedurl=@p)${q}`, headers: { accept: ACCEPT }, accept: [404] });
    if (res.status === 200) return { uid: (str(readEntity(res.data), 'UniqueId') ?? '').toLowerCase() };
    const file = await this.connector.http.request({ method: 'GET', url: `${this.connector.api}/web/GetFileByServerRelativePath(decodedurl=@p)${q}`, headers: { accept: ACCEPT }, accept: [404] });
    await drain(file.body);
    return file.status === 200 ? 'file' : undefined;
  }

  async createFolder(path: string, actor: Actor): Promise<string> {
    const segments = parseAbsolutePath(path, 'path');
    if (segments.length === 0) throw new InvalidArgumentError('path', "Invalid parameter 'path': must name a folder below the library's root");
    const state = await this.connector.list();
    let uid = state.rootUid;
    for (let i = 0; i < segments.length; i++) {
      const here = this.connector.serverPath(state, segments.slice(0, i + 1));
      const found = await this.folderAt(here);
      if (found === 'file') throw new ConflictError(`A document named '${segments[i]}' exists at ${path}`, 'ALREADY_EXISTS', { path });
      if (found) {
        uid = found.uid;
        continue;
      }
      const q = query({ '@f': literal(this.connector.serverPath(state, segments.slice(0, i))), '@n': literal(segments[i]) });
      const created = readEntity(await this.connector.post(`web/GetFolderByServerRelativePath(decodedurl=@f)/Folders/AddUsingPath(decodedurl=@n)${q}`, { errorContext: { id: here, parameter: 'path' } }));
      uid = (str(created, 'UniqueId') ?? '').toLowerCase();
      await this.connector.post(`web/GetFolderById(${literal(uid)})/ListItemAllFields`, {
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
    const state = await this.connector.list();
    const found = await this.folderAt(this.connector.serverPath(state, segments));
    if (!found || found === 'file') throw new NotFoundError('folder', path);
    await this.connector.post(`web/GetFolderById(${literal(found.uid)})/recycle`, { errorContext: { id: path } });
    return folderId(found.uid);
  }
}
