import * as fs from 'node:fs';
import * as path from 'node:path';
import { SolrConnector, parseSolrParams } from '@gateway/connector-solr';
import { ElasticsearchConnector, parseElasticsearchParams } from '@gateway/connector-elasticsearch';
import { MongoConnector, parseMongoParams } from '@gateway/connector-mongodb';
import { OpenSearchConnector, parseOpenSearchParams } from '@gateway/connector-opensearch';
import type { EngineConnector, IndexCapability } from '@gateway/connector-api';
import { ENGINES_FILE_ENV, readEngines, startEngines, type ElasticsearchInfo, type FerretDbInfo, type OpenSearchInfo, type SolrInfo } from '../../engines';

export interface SearchEngines {
  solr: SolrInfo;
  elasticsearch: ElasticsearchInfo;
  opensearch: OpenSearchInfo;
  ferretdb: FerretDbInfo;
}

/**
 * Solr, Elasticsearch, OpenSearch and FerretDB from test/engines: the ones a global
 * setup started when there are, otherwise started once for the calling test
 * file (all four together) and stopped by release(). Like cmis-engine.ts.
 */
export async function useSearchEngines(): Promise<{ engines: SearchEngines; release(): Promise<void> }> {
  if (process.env[ENGINES_FILE_ENV]) {
    const shared = readEngines();
    if (shared.solr && shared.elasticsearch && shared.opensearch && shared.ferretdb) {
      return {
        engines: { solr: shared.solr, elasticsearch: shared.elasticsearch, opensearch: shared.opensearch, ferretdb: shared.ferretdb },
        release: async () => undefined,
      };
    }
  }
  const started = await startEngines(['solr', 'elasticsearch', 'opensearch', 'ferretdb'], { log: () => undefined });
  const strip = <T extends { stop(): Promise<void> }>(handle: T): Omit<T, 'stop'> => {
    const { stop: _stop, ...info } = handle;
    return info;
  };
  return {
    engines: {
      solr: strip(started.solr),
      elasticsearch: strip(started.elasticsearch),
      opensearch: strip(started.opensearch),
      ferretdb: strip(started.ferretdb),
    },
    release: async () => {
      await Promise.all([started.solr.stop(), started.elasticsearch.stop(), started.opensearch.stop(), started.ferretdb.stop()]);
    },
  };
}

export type IndexEngineName = 'solr' | 'elasticsearch' | 'opensearch' | 'mongodb';

export interface IndexTarget {
  name: IndexEngineName;
  collection: string;
  /** The connector's definition as a gateway configuration file lists it. */
  definition: { id: string; typeId: IndexEngineName; description: string; params: Record<string, unknown> };
  /** The same connector built in the test, to write or read an index directly. */
  connector: EngineConnector & { index: IndexCapability; close(): Promise<void> };
}

/**
 * One search connector per engine (ids `<idPrefix>-<engine>`), each on its own collection
 * `collection`: the tests that fill an index with the index group and read it through the gateway.
 * The harness's Solr home has no _default configset, so ours (a copy of its `gateway` core's
 * managed-schema conf, named after the prefix and collection) is put in place first.
 */
export function indexTargets(engines: SearchEngines, options: { idPrefix: string; collection: string; database: string; params?: Record<string, unknown> }): IndexTarget[] {
  const { solr, elasticsearch, opensearch, ferretdb } = engines;
  const configSet = `gateway-${options.idPrefix}-${options.collection}`;
  fs.cpSync(path.join(solr.dir, 'home', 'gateway', 'conf'), path.join(solr.dir, 'home', 'configsets', configSet, 'conf'), { recursive: true });
  const common = { collection: options.collection, ...options.params };
  const params: Record<IndexEngineName, Record<string, unknown>> = {
    solr: { url: solr.url, configSet, user: solr.user, password: solr.password, ...common },
    elasticsearch: { url: elasticsearch.url, apiKey: elasticsearch.apiKey, ...common },
    opensearch: { url: opensearch.url, ...common },
    mongodb: { uri: `${ferretdb.uri}?directConnection=true`, database: options.database, timeoutMs: 60_000, ...common },
  };
  return (Object.keys(params) as IndexEngineName[]).map((name) => {
    const definition = { id: `${options.idPrefix}-${name}`, typeId: name, description: name, params: params[name] };
    const connector =
      name === 'solr'
        ? new SolrConnector(definition, parseSolrParams(params[name]))
        : name === 'elasticsearch'
          ? new ElasticsearchConnector(definition, parseElasticsearchParams(params[name]))
          : name === 'opensearch'
            ? new OpenSearchConnector(definition, parseOpenSearchParams(params[name]))
            : new MongoConnector(definition, parseMongoParams(params[name]));
    return { name, collection: options.collection, definition, connector };
  });
}
