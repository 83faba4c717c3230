import { ENGINES_FILE_ENV, readEngines, startEngines, type ElasticsearchInfo, type FerretDbInfo, type SolrInfo } from '../../engines';

export interface SearchEngines {
  solr: SolrInfo;
  elasticsearch: ElasticsearchInfo;
  ferretdb: FerretDbInfo;
}

/**
 * Solr, Elasticsearch and FerretDB from test/engines: the ones a global
 * setup started when there are, otherwise started once for the calling test
 * file (all three together) and stopped by release(). Like cmis-engine.ts.
 */
export async function useSearchEngines(): Promise<{ engines: SearchEngines; release(): Promise<void> }> {
  if (process.env[ENGINES_FILE_ENV]) {
    const shared = readEngines();
    if (shared.solr && shared.elasticsearch && shared.ferretdb) {
      return { engines: { solr: shared.solr, elasticsearch: shared.elasticsearch, ferretdb: shared.ferretdb }, release: async () => undefined };
    }
  }
  const started = await startEngines(['solr', 'elasticsearch', 'ferretdb'], { log: () => undefined });
  const strip = <T extends { stop(): Promise<void> }>(handle: T): Omit<T, 'stop'> => {
    const { stop: _stop, ...info } = handle;
    return info;
  };
  return {
    engines: {
      solr: strip(started.solr) as SolrInfo,
      elasticsearch: strip(started.elasticsearch) as ElasticsearchInfo,
      ferretdb: strip(started.ferretdb) as FerretDbInfo,
    },
    release: async () => {
      await Promise.all([started.solr.stop(), started.elasticsearch.stop(), started.ferretdb.stop()]);
    },
  };
}
