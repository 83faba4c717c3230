import type { NamingRules } from '@gateway/connector-api';
import { MAX_KEY_BYTES } from './keys';

/**
 * The names a bucket takes through this connector: any segment without `/` or controls (keys.ts), in a
 * key of at most 1,024 UTF-8 bytes (Amazon S3's limit). The key is the connector's prefix (ending in '/'
 * when set) then the gateway path without its leading '/'. S3 compares keys byte for byte: case and
 * Unicode normalization make different keys. A segment is at most 246 UTF-8 bytes: MinIO keeps a key
 * ending in '/' as the file `<segment>__XLDIR__` on its disks (255-byte names), and the connector asks
 * for such a key (a folder marker) before every write, which fails with a bare 400 past 246 bytes
 * (255-byte names did, in test/e2e/jobs-names.e2e-spec.ts). Amazon S3 takes more; a name cut to 246
 * bytes keeps its whole name as `source_name`.
 */
/** A filesystem's 255-byte name less MinIO's 9-byte `__XLDIR__`. */
const MINIO_MAX_SEGMENT = 246;

/** `prefix`: the connector's key prefix as keys start with it ('' or ending in '/'). */
export function s3NamingRules(prefix: string): NamingRules {
  const prefixBytes = Buffer.byteLength(prefix, 'utf8');
  return {
    forbiddenCharacters: '/',
    controlCharacters: 'c0',
    maxSegment: { max: MINIO_MAX_SEGMENT, unit: 'bytes' },
    // The gateway path's leading '/' is not part of the key, so it may be one byte longer than what is left.
    maxPath: { max: MAX_KEY_BYTES - prefixBytes + 1, unit: 'bytes' },
    reference: 'Amazon S3 object keys (1,024 bytes of UTF-8) and the S3 connector (keys.ts)',
  };
}
