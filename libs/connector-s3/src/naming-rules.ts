import type { NamingRules } from '@gateway/connector-api';
import { MAX_KEY_BYTES } from './keys';

/**
 * The names a bucket takes through this connector: any segment without `/` or controls (keys.ts), in a
 * key of at most 1,024 UTF-8 bytes (Amazon S3's limit). The key is the connector's prefix (ending in '/'
 * when set) then the gateway path without its leading '/'.
 * S3 compares keys byte for byte: case and Unicode normalization make different keys.
 */
/** `prefix`: the connector's key prefix as keys start with it ('' or ending in '/'). */
export function s3NamingRules(prefix: string): NamingRules {
  const prefixBytes = Buffer.byteLength(prefix, 'utf8');
  return {
    forbiddenCharacters: '/',
    controlCharacters: 'c0',
    // The gateway path's leading '/' is not part of the key, so it may be one byte longer than what is left.
    maxPath: { max: MAX_KEY_BYTES - prefixBytes + 1, unit: 'bytes' },
    reference: 'Amazon S3 object keys (1,024 bytes of UTF-8) and the S3 connector (keys.ts)',
  };
}
