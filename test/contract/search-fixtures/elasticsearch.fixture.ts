import { randomBytes } from 'node:crypto';
import type { CorpusDocument } from './corpus';
import type { SearchConnectorFixture, SearchEnvironment } from './types';

async function esCall(url: string, authorization: string | undefined, method: string, body?: string, contentType = 'application/json'): Promise<any> {
  const res = await fetch(url, { method, headers: { 'content-type': contentType, ...(authorization ? { authorization } : {}) }, body });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${text}`);
  return JSON.parse(text);
}

/** The gateway's schema as an Elasticsearch (and OpenSearch) mapping: text with the `standard` analyzer (no stemming), keywords for facets. */
const MAPPING = {
  settings: { number_of_shards: 1, number_of_replicas: 0 },
  mappings: {
    dynamic: 'strict',
    properties: {
      id: { type: 'keyword' },
      title: { type: 'text', analyzer: 'standard' },
      content: { type: 'text', analyzer: 'standard' },
      name: { type: 'text', analyzer: 'standard' },
      path: { type: 'text', analyzer: 'standard' },
      mime_type: { type: 'keyword' },
      author: { type: 'keyword' },
      tags: { type: 'keyword' },
      source_connector: { type: 'keyword' },
      source_id: { type: 'keyword' },
      acl_read: { type: 'keyword' },
      size: { type: 'long' },
      created: { type: 'date' },
      modified: { type: 'date' },
    },
  },
};

type QueryDslEngine = 'elasticsearch' | 'opensearch';

/**
 * A fresh index of the harness's Elasticsearch or OpenSearch (one Query DSL, one mapping), created
 * with an explicit mapping and loaded with the corpus; `refused` adds the engine's own refused members.
 */
export function queryDslFixture(engine: QueryDslEngine, refused: SearchEnvironment['refusedQueries'] = []): SearchConnectorFixture {
  return {
    name: engine,
    typeId: engine,
    async setup(engines, corpus: CorpusDocument[]) {
      const url = engines[engine].url;
      // The harness's Elasticsearch sits behind an authenticating proxy (API key); its OpenSearch checks nothing.
      const es = engine === 'elasticsearch' ? engines.elasticsearch : undefined;
      const authorization = es?.authorization;
      const credentials = es ? { apiKey: es.apiKey } : {};
      const index = `contract-${randomBytes(4).toString('hex')}`;
      await esCall(`${url}/${index}`, authorization, 'PUT', JSON.stringify(MAPPING));
      const bulk = corpus.map((doc) => `${JSON.stringify({ index: { _index: index, _id: doc.id } })}\n${JSON.stringify(doc)}\n`).join('');
      const result = await esCall(`${url}/_bulk?refresh=true`, authorization, 'POST', bulk, 'application/x-ndjson');
      if (result.errors) throw new Error(`${engine} bulk load failed: ${JSON.stringify(result.items.find((i: any) => i.index?.error))}`);
      return {
        collection: index,
        params: { url, collection: index, ...credentials },
        refusedCredentials: es ? { none: { url, collection: index }, wrong: { url, collection: index, apiKey: `not-${es.apiKey}` } } : undefined,
        paramsAt: (port, timeoutMs) => ({ url: `http://127.0.0.1:${port}`, collection: index, timeoutMs, ...credentials }),
        rawQueryByAuthor: (author, limit) => ({ query: { term: { author } }, sort: [{ id: 'asc' }], size: limit }),
        idsOfRawAnswer: (answer) => (answer as { hits: { hits: { _id: string }[] } }).hits.hits.map((h) => h._id),
        engineErrorQuery: { query: { range: { size: { gte: 'not-a-number' } } } },
        refusedQueries: [
          { construct: 'script', body: { query: { script: { script: { source: 'true' } } } } },
          { construct: 'script_fields', body: { script_fields: { x: { script: { source: '1' } } } } },
          { construct: 'runtime_mappings', body: { runtime_mappings: { x: { type: 'long', script: { source: 'emit(1)' } } } } },
          { construct: 'script', body: { query: { script: { script: { id: 'stored-one' } } } } },
          { construct: 'wrapper', body: { query: { wrapper: { query: Buffer.from('{"match_all":{}}').toString('base64') } } } },
          ...refused,
        ],
        teardown: async () => {
          await esCall(`${url}/${index}`, authorization, 'DELETE');
        },
      };
    },
  };
}

export const fixture = queryDslFixture('elasticsearch');
