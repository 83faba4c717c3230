import { InvalidArgumentError, NotFoundError, type VersionInfo, type VersioningCapability } from '@gateway/connector-api';
import { fileId, parseId, versionId } from './ids';
import { date, str } from './odata';
import type { SharePointConnector } from './sharepoint.connector';

/** The versioning group: SharePoint's version history of a file. */
export class SharePointVersioning implements VersioningCapability {
  constructor(private readonly connector: SharePointConnector) {}

  /** Earlier versions (SharePoint's Versions collection) then the current one, oldest first. */
  async listVersions(id: string): Promise<VersionInfo[]> {
    const spId = parseId(id, 'id');
    if (spId.kind === 'folder') throw new InvalidArgumentError('id', `Invalid parameter 'id': '${id}' is a folder`);
    const state = await this.connector.list();
    const [file, versions] = await Promise.all([this.connector.fileEntity(spId.uid, id), this.connector.versionsOf(spId.uid, id)]);
    if (spId.kind === 'version' && !versions.some((v) => Number(v.ID) === spId.versionId)) throw new NotFoundError('item', id);
    const current = this.connector.toFileInfo(state, file);
    const series = fileId(spId.uid);
    const list: VersionInfo[] = versions.map((v) => ({
      id: versionId(spId.uid, Number(v.ID)),
      name: current.name,
      label: str(v, 'VersionLabel') ?? '',
      size: Number(v.Size ?? str(v, 'Length') ?? 0),
      modified: date(v.Created) ?? new Date(0),
      versionSeriesId: series,
      comment: str(v, 'CheckInComment') || undefined,
    }));
    list.push({ id: series, name: current.name, label: current.versionLabel ?? '', size: current.size ?? 0, modified: current.modified ?? new Date(0), versionSeriesId: series, comment: current.checkinComment });
    // The Versions collection is oldest first, the current version not in it: newest first, as the group promises.
    return list.reverse();
  }
}
