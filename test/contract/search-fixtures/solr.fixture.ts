import type { CorpusDocument } from './corpus';
import type { SearchConnectorFixture } from './types';

async function solrCall(url: string, authorization: string, body: unknown): Promise<void> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`Solr ${url}: ${res.status} ${await res.text()}`);
}

/** The harness's Solr core `gateway` (managed schema in test/engines/java/solr), emptied and loaded with the corpus; Basic credentials. */
export const fixture: SearchConnectorFixture = {
  name: 'solr',
  typeId: 'solr',
  async setup(engines, corpus: CorpusDocument[]) {
    const solr = engines.solr;
    await solrCall(`${solr.coreUrl}/update?commit=true&wt=json`, solr.authorization, { delete: { query: '*:*' } });
    await solrCall(`${solr.coreUrl}/update?commit=true&wt=json`, solr.authorization, corpus);
    const credentials = { user: solr.user, password: solr.password };
    return {
      collection: solr.core,
      params: { url: solr.url, collection: solr.core, ...credentials },
      refusedCredentials: {
        none: { url: solr.url, collection: solr.core },
        wrong: { url: solr.url, collection: solr.core, user: solr.user, password: `not-${solr.password}` },
      },
      paramsAt: (port, timeoutMs) => ({ url: `http://127.0.0.1:${port}/solr`, collection: solr.core, timeoutMs, ...credentials }),
      rawQueryByAuthor: (author, limit) => ({ query: `author:${author}`, sort: 'id asc', limit, fields: 'id,author' }),
      idsOfRawAnswer: (answer) => ((answer as { response: { docs: { id: string }[] } }).response.docs ?? []).map((d) => d.id),
      engineErrorQuery: { query: 'size:[a TO', limit: 1 },
      refusedQueries: [
        { construct: 'local params', body: { query: '{!func}size' } },
        { construct: 'qt', body: { params: { q: '*:*', qt: '/update' } } },
        { construct: 'shards', body: { params: { q: '*:*', shards: 'http://127.0.0.1:1/solr/x' } } },
        { construct: 'stream.body', body: { params: { q: '*:*', 'stream.body': '<delete/>' } } },
        { construct: 'wt', body: { params: { q: '*:*', wt: 'xml' } } },
      ],
      teardown: async () => undefined,
    };
  },
};
