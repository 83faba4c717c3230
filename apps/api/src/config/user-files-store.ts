import type { ConnectorDefinition } from '@gateway/connector-api';
// The params entry only: the lib's index loads the connector and the AWS SDK, which a gateway without S3 never needs.
import { parseBucket, parseConnectionParams, parsePrefix, type S3ConnectionParams } from '@gateway/connector-s3/params';

/** Where user files go: the local folder (default) or an S3 bucket every gateway node can reach. */
export type UserFilesStoreConfig =
  | { kind: 'local' }
  | {
      kind: 's3';
      bucket: string;
      /** '' or ending with '/'. */
      prefix: string;
      connection: S3ConnectionParams;
      /** Part size of the multipart uploads exports are written as. */
      partBytes: number;
      /** Parts uploaded at once per export (memory: about partBytes × (this + 1) per running export). */
      partConcurrency: number;
      /** Set when the connection settings are those of a configured S3 connector. */
      connectorId?: string;
    };

type Env = Record<string, string | undefined>;
type Fail = (message: string) => Error;

const MiB = 1024 * 1024;
const PREFIX = 'GATEWAY_USER_FILES_S3_';

/**
 * GATEWAY_USER_FILES_STORE=s3://bucket/prefix; the connection settings either by reference to a
 * configured `s3` connector (GATEWAY_USER_FILES_S3_CONNECTOR=<id>) or by their own variables
 * (GATEWAY_USER_FILES_S3_ENDPOINT, _REGION, _ACCESS_KEY_ID, _SECRET_ACCESS_KEY, _FORCE_PATH_STYLE; the
 * SDK's default credential chain without keys). _PART_BYTES and _PART_CONCURRENCY size the uploads.
 */
export function parseUserFilesStore(env: Env, connectors: ConnectorDefinition[], fail: Fail): UserFilesStoreConfig {
  const raw = (env.GATEWAY_USER_FILES_STORE ?? '').trim();
  if (raw === '' || raw === 'local') return { kind: 'local' };
  const match = /^s3:\/\/([^/]+)(?:\/(.*))?$/.exec(raw);
  if (!match) throw fail(`GATEWAY_USER_FILES_STORE: must be 'local' or s3://bucket/prefix (got '${raw}')`);
  const guard = <T>(fn: () => T, variable: string): T => {
    try {
      return fn();
    } catch (e) {
      throw fail(`${variable}: ${(e as Error).message}`);
    }
  };
  const bucket = guard(() => parseBucket(match[1], 'bucket'), 'GATEWAY_USER_FILES_STORE');
  const prefix = guard(() => parsePrefix(match[2] ?? '', 'prefix'), 'GATEWAY_USER_FILES_STORE');
  const connectorId = env[`${PREFIX}CONNECTOR`]?.trim() || undefined;
  let connection: S3ConnectionParams;
  if (connectorId !== undefined) {
    const own = Object.keys(env).filter((k) => k.startsWith(PREFIX) && !/^GATEWAY_USER_FILES_S3_(CONNECTOR|PART_BYTES|PART_CONCURRENCY)$/.test(k) && env[k]);
    if (own.length > 0) throw fail(`${PREFIX}CONNECTOR: set either it or ${own.join(', ')}, not both`);
    const connector = connectors.find((c) => c.id === connectorId);
    if (!connector) throw fail(`${PREFIX}CONNECTOR: no connector '${connectorId}' is configured`);
    if (connector.typeId !== 's3') throw fail(`${PREFIX}CONNECTOR: connector '${connectorId}' is of type '${connector.typeId}', not 's3'`);
    connection = guard(() => parseConnectionParams(connector.params), `${PREFIX}CONNECTOR (connector '${connectorId}')`);
  } else {
    const params: Record<string, unknown> = {};
    const names: Record<string, string> = {
      ENDPOINT: 'endpoint',
      REGION: 'region',
      ACCESS_KEY_ID: 'accessKeyId',
      SECRET_ACCESS_KEY: 'secretAccessKey',
      FORCE_PATH_STYLE: 'forcePathStyle',
    };
    for (const [suffix, param] of Object.entries(names)) if (env[PREFIX + suffix]) params[param] = env[PREFIX + suffix];
    connection = guard(() => parseConnectionParams(params), `${PREFIX}* (${Object.keys(names).map((n) => PREFIX + n).join(', ')})`);
  }
  const integer = (name: string, fallback: number, min: number, max: number): number => {
    const value = env[PREFIX + name];
    if (value === undefined || value === '') return fallback;
    if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) throw fail(`${PREFIX}${name}: must be an integer between ${min} and ${max} (got '${value}')`);
    return Number(value);
  };
  return {
    kind: 's3',
    bucket,
    prefix,
    connection,
    partBytes: integer('PART_BYTES', 8 * MiB, 5 * MiB, 512 * MiB),
    partConcurrency: integer('PART_CONCURRENCY', 4, 1, 32),
    ...(connectorId ? { connectorId } : {}),
  };
}
