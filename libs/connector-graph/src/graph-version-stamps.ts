import type { StampField, VersionStamp, VersionStampCapability } from '@gateway/connector-api';

/** fileSystemInfo as createUploadSession's item takes it (driveItemUploadableProperties). */
export interface FileSystemInfo {
  createdDateTime?: string;
  lastModifiedDateTime?: string;
}

/**
 * The `versionStamps` group: Graph takes a file's dates with the write, as `fileSystemInfo` of the upload
 * session's item (SharePoint keeps them as the item's Created and Modified, to the second); a PATCH after the
 * write would be a change of its own (a version on SharePoint). So a stamped write always goes through an
 * upload session, which takes no empty content: an empty version keeps the write's dates (stampsEmptyContent).
 * createdBy and lastModifiedBy are read-only in Graph: the creator is kept in the library's GatewayCreatedBy
 * field, the document's; the last writer's field holds the latest version's only, so modifiedBy is not kept.
 */
export class GraphVersionStamps implements VersionStampCapability {
  readonly keeps: readonly StampField[] = ['created', 'modified', 'createdBy'];
  readonly precisionMs = 1000;
  readonly stampsEmptyContent = false;
}

export function fileSystemInfoOf(stamp: VersionStamp | undefined): FileSystemInfo | undefined {
  if (!stamp || (!stamp.created && !stamp.modified)) return undefined;
  return {
    ...(stamp.created ? { createdDateTime: stamp.created.toISOString() } : {}),
    ...(stamp.modified ? { lastModifiedDateTime: stamp.modified.toISOString() } : {}),
  };
}
