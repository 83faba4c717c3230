import { InvalidArgumentError } from '@gateway/errors';
import { checkElasticsearchRawQuery, checkMongoRawQuery, checkOpenSearchRawQuery, checkSolrRawQuery } from './raw-guards';

function refusal(check: (body: unknown) => void, body: unknown): string {
  try {
    check(body);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as InvalidArgumentError).parameter).toBe('body');
    expect((error as InvalidArgumentError).code).toBe('RAW_QUERY_REFUSED');
    return (error as Error).message;
  }
  throw new Error('accepted');
}

/** `value` nested `depth` levels down, alternating objects and arrays. */
function nested(value: unknown, depth: number): unknown {
  let body = value;
  for (let level = 0; level < depth; level++) body = level % 2 === 0 ? { $and: [body] } : [body];
  return body;
}

describe('checkMongoRawQuery', () => {
  it('accepts ordinary finds', () => {
    expect(() => checkMongoRawQuery({ author: 'Ann', $or: [{ size: { $gt: 1 } }, { tags: { $in: ['$where'] } }] })).not.toThrow();
    expect(() => checkMongoRawQuery(null)).not.toThrow();
    expect(() => checkMongoRawQuery('x')).not.toThrow();
  });

  it.each(['$where', '$function', '$accumulator'])('refuses %s at any depth', (operator) => {
    expect(refusal(checkMongoRawQuery, { [operator]: 'sleep(1000)' })).toBe(`${operator} is not allowed in a raw MongoDB query`);
    expect(refusal(checkMongoRawQuery, nested({ a: { [operator]: {} } }, 20))).toContain(operator);
  });

  it('walks a very deep body without overflowing the stack', () => {
    expect(refusal(checkMongoRawQuery, nested({ $where: '1' }, 100_000))).toContain('$where');
  });
});

describe('checkElasticsearchRawQuery', () => {
  it('accepts ordinary searches', () => {
    expect(() =>
      checkElasticsearchRawQuery({ query: { bool: { must: [{ match: { content: 'script' } }] } }, runtime_mappings: { day: { type: 'keyword' } } }),
    ).not.toThrow();
  });

  it('refuses scripts, script fields and stored scripts', () => {
    expect(refusal(checkElasticsearchRawQuery, { query: { script: { script: { source: 'true' } } } })).toBe(
      'script is not allowed in a raw Elasticsearch query',
    );
    expect(refusal(checkElasticsearchRawQuery, { script_fields: { x: {} } })).toContain('script_fields');
    expect(refusal(checkElasticsearchRawQuery, { query: { bool: { filter: [{ script: { script: { id: 'stored' } } }] } } })).toContain('script');
    expect(refusal(checkElasticsearchRawQuery, { query: { function_score: { functions: [{ script_score: {} }] } } })).toContain('script_score');
    expect(refusal(checkElasticsearchRawQuery, { aggs: { a: { scripted_metric: {} } } })).toContain('scripted_metric');
    expect(refusal(checkElasticsearchRawQuery, { aggs: { a: { bucket_selector: { Script: 'x' } } } })).toContain('Script');
  });

  it('refuses queries that read documents of another index', () => {
    expect(refusal(checkElasticsearchRawQuery, { query: { terms: { tags: { index: 'secrets', id: '1', path: 'tags' } } } })).toBe(
      'index (a document of another index) is not allowed in a raw Elasticsearch query',
    );
    expect(refusal(checkElasticsearchRawQuery, { query: { more_like_this: { fields: ['content'], like: [{ _index: 'other', _id: '1' }] } } })).toContain(
      '_index',
    );
    expect(() => checkElasticsearchRawQuery({ query: { term: { indexed: true } }, sort: [{ _id: 'asc' }] })).not.toThrow();
  });

  it('refuses a wrapper query: its base64 body could carry anything refused here', () => {
    const script = Buffer.from(JSON.stringify({ script: { script: { source: 'true' } } })).toString('base64');
    expect(refusal(checkElasticsearchRawQuery, { query: { bool: { must: [{ wrapper: { query: script } }] } } })).toBe(
      'wrapper (a base64-encoded query) is not allowed in a raw Elasticsearch query',
    );
    expect(refusal(checkOpenSearchRawQuery, { query: { wrapper: { query: script } } })).toBe('wrapper (a base64-encoded query) is not allowed in a raw OpenSearch query');
  });

  it('refuses runtime mappings with a script, naming runtime_mappings', () => {
    expect(refusal(checkElasticsearchRawQuery, { runtime_mappings: { day: { type: 'keyword', script: { source: 'emit(1)' } } } })).toBe(
      'runtime_mappings with a script is not allowed in a raw Elasticsearch query',
    );
  });
});

describe('checkOpenSearchRawQuery', () => {
  it('accepts ordinary searches, kNN and collapse included', () => {
    expect(() =>
      checkOpenSearchRawQuery({
        query: { bool: { must: [{ match: { content: 'pipeline' } }], filter: [{ knn: { v: { vector: [1, 2], k: 3 } } }] } },
        collapse: { field: 'author' },
        aggs: { authors: { terms: { field: 'author' } } },
      }),
    ).not.toThrow();
  });

  it('refuses what the Elasticsearch guard refuses, naming OpenSearch', () => {
    expect(refusal(checkOpenSearchRawQuery, { query: { script: { script: { source: 'true' } } } })).toBe('script is not allowed in a raw OpenSearch query');
    expect(refusal(checkOpenSearchRawQuery, { query: { terms: { tags: { index: 'secrets', id: '1', path: 'tags' } } } })).toBe(
      'index (a document of another index) is not allowed in a raw OpenSearch query',
    );
    expect(refusal(checkOpenSearchRawQuery, { runtime_mappings: { d: { type: 'keyword', script: 'emit(1)' } } })).toBe(
      'runtime_mappings with a script is not allowed in a raw OpenSearch query',
    );
    expect(refusal(checkOpenSearchRawQuery, { derived: { d: { type: 'keyword', script: { source: 'emit(1)' } } } })).toContain('script');
  });

  it.each([
    ['an ad hoc search pipeline', { query: { match_all: {} }, search_pipeline: { request_processors: [{ filter_query: { query: { match_all: {} } } }] } }, 'search_pipeline'],
    ['plugin parameters', { query: { match_all: {} }, ext: { generative_qa_parameters: { llm_question: 'x' } } }, 'ext'],
    ['a neural query', { query: { neural: { v: { query_text: 'x', model_id: 'm', k: 5 } } } }, 'neural'],
    ['a neural sparse query', { query: { bool: { should: [{ neural_sparse: { v: { query_text: 'x' } } }] } } }, 'neural_sparse'],
    ['a point in time', { pit: { id: 'abc', keep_alive: '1m' } }, 'pit'],
  ])('refuses %s', (_what, body, named) => {
    expect(refusal(checkOpenSearchRawQuery, body)).toBe(`${named} is not allowed in a raw OpenSearch query`);
  });

  it('leaves those members to Elasticsearch, whose guard does not know them', () => {
    expect(() => checkElasticsearchRawQuery({ query: { match_all: {} }, ext: {} })).not.toThrow();
  });
});

describe('checkSolrRawQuery', () => {
  it('accepts ordinary requests', () => {
    expect(() =>
      checkSolrRawQuery({ query: 'content:fox', filter: ['tags:a'], params: { wt: 'json', rows: 10, fl: ['id'] }, limit: 5 }),
    ).not.toThrow();
    expect(() => checkSolrRawQuery({ params: { wt: ['json'] } })).not.toThrow();
  });

  it('refuses local params in any value or name', () => {
    expect(refusal(checkSolrRawQuery, { query: '{!join from=a to=b}x' })).toBe('local params ({!...}) is not allowed in a raw Solr query');
    expect(refusal(checkSolrRawQuery, { params: { fq: ['a', 'b _query_:"{!frange l=1}x"'] } })).toContain('local params');
    expect(refusal(checkSolrRawQuery, { params: { '{!x}': 1 } })).toBe('local params ({!...}) is not allowed in a raw Solr query');
    expect(refusal(checkSolrRawQuery, '{!lucene}a')).toContain('local params');
  });

  it('refuses the JSON query DSL, which names query parsers as local params do', () => {
    const message = 'JSON query DSL (a query that is not text) is not allowed in a raw Solr query';
    expect(refusal(checkSolrRawQuery, { query: { join: { fromIndex: 'other', from: 'id', to: 'id', query: '*:*' } } })).toBe(message);
    expect(refusal(checkSolrRawQuery, { filter: [{ frange: { l: 1, query: 'x' } }] })).toBe(message);
    expect(refusal(checkSolrRawQuery, { facet: { a: { type: 'terms', field: 'tags', domain: { filter: { func: 'x' } } } } })).toBe(message);
    expect(refusal(checkSolrRawQuery, { queries: { a: { lucene: { query: 'x' } } } })).toBe(message);
    expect(refusal(checkSolrRawQuery, { queries: null })).toBe(message);
    expect(refusal(checkSolrRawQuery, { queries: 'content:x' })).toBe(message); // named queries are an object of texts
    // One DSL object among texts is enough to refuse the list.
    expect(refusal(checkSolrRawQuery, { filter: ['tags:a', { frange: { l: 1, query: 'x' } }] })).toBe(message);
    expect(refusal(checkSolrRawQuery, { queries: { a: 'x', b: { lucene: { query: 'y' } } } })).toBe(message);
    expect(refusal(checkSolrRawQuery, { query: 5 })).toBe(message);
    expect(() => checkSolrRawQuery({ query: 'a', filter: ['b', 'c'], queries: { x: 'd', y: ['e'] }, facet: { t: { type: 'terms', field: 'tags', domain: { filter: 'x' } } } })).not.toThrow();
  });

  it('refuses qt, shards, stream.* and a wt other than json', () => {
    expect(refusal(checkSolrRawQuery, { params: { qt: '/update' } })).toBe('qt is not allowed in a raw Solr query');
    expect(refusal(checkSolrRawQuery, { params: { shards: 'evil:8983/solr' } })).toBe('shards is not allowed in a raw Solr query');
    expect(refusal(checkSolrRawQuery, { params: { 'shards.qt': '/x' } })).toContain('shards.qt');
    expect(refusal(checkSolrRawQuery, { params: { 'stream.url': 'file:///etc/passwd' } })).toContain('stream.url');
    expect(refusal(checkSolrRawQuery, { 'stream.body': 'x' })).toBe('stream.body is not allowed in a raw Solr query');
    expect(refusal(checkSolrRawQuery, { params: { wt: 'velocity' } })).toBe('wt other than json is not allowed in a raw Solr query');
    expect(refusal(checkSolrRawQuery, { params: { wt: ['json', 'xslt'] } })).toContain('wt other than json');
  });

  it('does not mistake look-alike names for refused ones', () => {
    expect(() => checkSolrRawQuery({ params: { qtx: 1, shardsx: 1, streaming: 1, 'x.stream.y': 1 } })).not.toThrow();
  });
});
