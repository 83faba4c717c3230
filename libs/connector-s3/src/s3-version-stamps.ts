import type { StampField, VersionStamp, VersionStampCapability } from '@gateway/connector-api';
import { CREATED_BY, MODIFIED_BY, encodeValue, gatewayField } from './metadata';

/** The original dates a copied version keeps, ISO 8601, beside the gateway's own authors (metadata.ts). */
export const CREATED_AT = 'gateway-created';
export const MODIFIED_AT = 'gateway-modified';

/**
 * The `versionStamps` group: S3 sets an object's LastModified itself and lets no one change it, and its
 * metadata belongs to one object version (changing it is a copy: a new version). So the stamp travels
 * with the write, as user metadata of the version written (x-amz-meta-gateway-created, -gateway-modified,
 * and the authors in -gateway-created-by / -gateway-modified-by), and getItem reports those dates.
 */
export class S3VersionStamps implements VersionStampCapability {
  readonly keeps: readonly StampField[] = ['created', 'modified', 'createdBy', 'modifiedBy'];
  readonly precisionMs = 1;
}

/** The metadata a stamped write adds (over the gateway's own authors). */
export function stampMetadata(stamp: VersionStamp | undefined): Record<string, string> {
  if (!stamp) return {};
  return {
    ...(stamp.created ? { [CREATED_AT]: stamp.created.toISOString() } : {}),
    ...(stamp.modified ? { [MODIFIED_AT]: stamp.modified.toISOString() } : {}),
    ...(stamp.createdBy ? { [CREATED_BY]: encodeValue(stamp.createdBy) } : {}),
    ...(stamp.modifiedBy ? { [MODIFIED_BY]: encodeValue(stamp.modifiedBy) } : {}),
  };
}

/** A kept date of the object's metadata; undefined where none was kept (or it does not read as a date). */
export function stampedDate(metadata: Record<string, string> | undefined, name: typeof CREATED_AT | typeof MODIFIED_AT): Date | undefined {
  const value = gatewayField(metadata, name);
  const date = value === undefined ? undefined : new Date(value);
  return date && !Number.isNaN(date.getTime()) ? date : undefined;
}
