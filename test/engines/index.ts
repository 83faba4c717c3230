/**
 * For test files: the connection info of the engines that global-setup started (in another
 * process), read from the JSON file named by GATEWAY_ENGINES_FILE.
 *
 *   import { getEngine } from '../engines';
 *   const { browserUrl, repositoryId } = getEngine('cmis');
 */
import * as fs from 'node:fs';
import { ENGINE_NAMES, ENGINES_FILE_ENV, type EngineInfoMap, type EngineName, type EnginesFile } from './engines';

export { ENGINE_NAMES, ENGINES_FILE_ENV, ENGINES_SELECT_ENV, httpRequest, stopEngines } from './engines';
export { startEngines } from './start';
export type {
  CmisInfo,
  ElasticsearchInfo,
  EngineHandle,
  EngineHandles,
  EngineInfo,
  EngineInfoMap,
  EngineName,
  EnginesFile,
  FerretDbInfo,
  HttpResult,
  PostgresInfo,
  RedisInfo,
  SolrInfo,
} from './engines';
export type { S3ProxyInfo } from './s3proxy';
export type { S3EngineFields, S3EngineInfo, S3EngineKind } from './s3';
export type { MinioInfo } from './minio';
export type { OpenSearchInfo } from './opensearch';
export type { GraphInfo } from './graph';
export type { SharePointInfo } from './sharepoint';
export type { TikaInfo } from './tika';
export type { ToxiproxyInfo } from './toxiproxy';

let cached: { file: string; engines: Partial<EngineInfoMap> } | undefined;

/** Every started engine's connection info. Throws when global-setup did not run. */
export function readEngines(): Partial<EngineInfoMap> {
  const file = process.env[ENGINES_FILE_ENV];
  if (!file) {
    throw new Error(
      `${ENGINES_FILE_ENV} is not set: the real engines were not started. Run jest with ` +
        'globalSetup test/engines/global-setup.ts and globalTeardown test/engines/global-teardown.ts ' +
        '(e.g. jest -c test/engines/jest.engines.config.js).',
    );
  }
  if (cached?.file === file) return cached.engines;
  const content = JSON.parse(fs.readFileSync(file, 'utf8')) as EnginesFile;
  if (content.version !== 1) throw new Error(`${file}: unsupported engines file version ${String(content.version)}`);
  cached = { file, engines: content.engines };
  return content.engines;
}

/** Whether global-setup started this engine (GATEWAY_TEST_ENGINES selects them). */
export function hasEngine(name: EngineName): boolean {
  return readEngines()[name] !== undefined;
}

/** One engine's connection info; throws when it was not started. */
export function getEngine<N extends EngineName>(name: N): EngineInfoMap[N] {
  const info = readEngines()[name];
  if (!info) {
    const started = ENGINE_NAMES.filter((n) => readEngines()[n] !== undefined);
    throw new Error(
      `test engine "${name}" was not started (started: ${started.join(', ') || 'none'}); ` +
        'check GATEWAY_TEST_ENGINES',
    );
  }
  return info;
}
